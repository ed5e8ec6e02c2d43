package apiserver

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/apiserver-boot/apiserver-boot/internal/private"
)

// etcdPKI is the embedded etcd's own PKI, made anew at each start: a CA,
// the certificate etcd serves its client and peer listeners with (and
// presents to its peer), and the one the apiserver presents. etcd accepts
// only clients with a certificate of this CA, so nobody else on the
// machine can reach the data around the apiserver's authentication.
type etcdPKI struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// newEtcdPKI writes the embedded etcd's CA and certificates into dir (0700,
// keys 0600).
func newEtcdPKI(dir string) (*etcdPKI, error) {
	if err := private.Dir(dir); err != nil {
		return nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "apiserver-boot embedded etcd CA"}, caKey)
	if err != nil {
		return nil, err
	}
	p := &etcdPKI{
		CA:         filepath.Join(dir, "etcd-ca.crt"),
		ServerCert: filepath.Join(dir, "etcd-server.crt"), ServerKey: filepath.Join(dir, "etcd-server.key"),
		ClientCert: filepath.Join(dir, "etcd-client.crt"), ClientKey: filepath.Join(dir, "etcd-client.key"),
	}
	caPEM, err := certutil.EncodeCertificates(ca)
	if err != nil {
		return nil, err
	}
	if err := writePrivate(p.CA, caPEM); err != nil {
		return nil, err
	}
	for _, leaf := range []struct {
		cn        string
		usages    []x509.ExtKeyUsage
		cert, key string
	}{
		// etcd's certificate serves the client and peer listeners and is
		// presented to the peer: server and client use.
		{"embedded-etcd", []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, p.ServerCert, p.ServerKey},
		{"apiserver", []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, p.ClientCert, p.ClientKey},
	} {
		certPEM, keyPEM, err := signLeaf(ca, caKey, leaf.cn, leaf.usages)
		if err != nil {
			return nil, err
		}
		if err := writePrivate(leaf.cert, certPEM); err != nil {
			return nil, err
		}
		if err := writePrivate(leaf.key, keyPEM); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// signLeaf makes a key and a certificate for cn, for loopback, signed by ca.
func signLeaf(ca *x509.Certificate, caKey crypto.Signer, cn string, usages []x509.ExtKeyUsage) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  usages,
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("signing the embedded etcd's %s certificate: %w", cn, err)
	}
	keyPEM, err = keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, err
	}
	certPEM, err = certutil.EncodeCertificates(cert)
	return certPEM, keyPEM, err
}

// writePrivate replaces path with data, readable by its owner only.
func writePrivate(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
