package standalone

import (
	"bytes"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/kubeconfig"
)

// caFromChain returns the CA certificates of a PEM chain (the self-signed
// serving certificate file holds the leaf followed by its CA).
func caFromChain(chainFile string) ([]byte, error) {
	certs, err := certutil.CertsFromFile(chainFile)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	for _, c := range certs {
		if c.IsCA {
			pem, err := certutil.EncodeCertificates(c)
			if err != nil {
				return nil, err
			}
			buf.Write(pem)
		}
	}
	if buf.Len() == 0 {
		return nil, fmt.Errorf("%s holds no CA certificate", chainFile)
	}
	return buf.Bytes(), nil
}

// writeKubeconfig writes a kubeconfig that reaches this server as the local administrator.
func writeKubeconfig(path, server string, ca []byte, token, name string) error {
	if err := kubeconfig.Replaceable("--write-kubeconfig", path, name); err != nil {
		return err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	b, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	if err := files.WriteAtomic(path, b, 0o600); err != nil {
		return fmt.Errorf("--write-kubeconfig: %w", err)
	}
	return nil
}
