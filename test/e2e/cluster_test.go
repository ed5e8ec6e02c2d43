//go:build e2e

package e2e

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// A kube-apiserver on loopback for the aggregation test: etcd, kube-apiserver
// (RBAC and Node authorization, static tokens, a front-proxy CA and client
// certificate, service account keys) and kube-controller-manager with the
// controllers that act on aggregated resources. Binaries come from
// `make test-tools` (test/tools), built by TestMain when missing.

// Users of the kube-apiserver's --token-auth-file.
const (
	adminToken  = "admin-token"  // system:masters
	devToken    = "dev-token"    // group devs: rights granted by the test
	nobodyToken = "nobody-token" // authenticated, no rights
)

type kubeCluster struct {
	dir        string
	etcdURL    string
	url        string // https://127.0.0.1:<port> of kube-apiserver
	caFile     string // signs every serving certificate
	ca         *x509.Certificate
	caKey      crypto.Signer
	frontProxy *tls.Certificate // the client certificate kube-apiserver proxies with
	procs      map[string]*harness.Process
}

// kubeconfig writes a kubeconfig for the kube-apiserver with a bearer token.
func (c *kubeCluster) kubeconfig(t *testing.T, name, token string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: c.url, CertificateAuthority: c.caFile}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = "e2e"
	path := filepath.Join(c.dir, name+".kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// newCA writes a self-signed CA (client-go's cert utilities) to dir/name.crt.
func newCA(t *testing.T, dir, name string) (*x509.Certificate, crypto.Signer, string) {
	t.Helper()
	key := newKey(t)
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		t.Fatal(err)
	}
	pem, err := certutil.EncodeCertificates(ca)
	if err != nil {
		t.Fatal(err)
	}
	return ca, key, writeFile(t, filepath.Join(dir, name+".crt"), pem)
}

// signCert writes a certificate signed by ca to dir/name.crt and its key to
// dir/name.key: a serving certificate for hosts, or a client certificate
// when hosts is empty.
func signCert(t *testing.T, dir, name string, ca *x509.Certificate, caKey crypto.Signer, cn string, hosts ...string) (certFile, keyFile string) {
	t.Helper()
	key := newKey(t)
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			} else {
				tmpl.DNSNames = append(tmpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, filepath.Join(dir, name+".crt"), certPEM), writeFile(t, filepath.Join(dir, name+".key"), keyPEM)
}

// logOnFailure prints the output of the cluster's processes when the test failed.
func (c *kubeCluster) logOnFailure(t *testing.T) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for name, p := range c.procs {
			out := p.Out.String()
			if len(out) > 20000 {
				out = "...\n" + out[len(out)-20000:]
			}
			t.Logf("---- %s output:\n%s", name, out)
		}
	})
}

// startKubeCluster starts etcd, kube-apiserver and kube-controller-manager
// and waits until kube-apiserver is ready.
func startKubeCluster(t *testing.T) *kubeCluster {
	t.Helper()
	return startKubeClusterWith(t, clusterOptions{})
}

// clusterOptions are what a test changes in the cluster startKubeCluster
// runs: the kube-apiserver binary (default kubeAPIServerBin), its
// --feature-gates and other flags, and kube-controller-manager (off, or
// more controllers and flags beside the namespace controller and the
// garbage collector).
type clusterOptions struct {
	kubeAPIServer       string
	featureGates        string
	kubeAPIServerArgs   []string
	noControllerManager bool
	controllers         []string
	controllerArgs      []string
}

// startKubeClusterWith starts etcd and kube-apiserver (and, unless
// opts.noControllerManager, kube-controller-manager) and waits until
// kube-apiserver is ready.
func startKubeClusterWith(t *testing.T, opts clusterOptions) *kubeCluster {
	t.Helper()
	dir := t.TempDir()
	c := &kubeCluster{dir: dir, procs: map[string]*harness.Process{}}
	c.logOnFailure(t)

	// Certificates and keys.
	c.ca, c.caKey, c.caFile = newCA(t, dir, "ca")
	kasCert, kasKey := signCert(t, dir, "kube-apiserver", c.ca, c.caKey, "kube-apiserver", "127.0.0.1", "localhost", "10.0.0.1", "kubernetes.default.svc")
	fpCA, fpCAKey, fpCAFile := newCA(t, dir, "front-proxy-ca")
	fpCert, fpKey := signCert(t, dir, "front-proxy-client", fpCA, fpCAKey, "front-proxy-client")
	pair, err := tls.LoadX509KeyPair(fpCert, fpKey)
	if err != nil {
		t.Fatal(err)
	}
	c.frontProxy = &pair
	saKeyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		t.Fatal(err)
	}
	saKey := writeFile(t, filepath.Join(dir, "sa.key"), saKeyPEM)
	tokens := writeFile(t, filepath.Join(dir, "tokens.csv"), []byte(
		adminToken+",admin,admin-uid,system:masters\n"+
			devToken+",dev,dev-uid,devs\n"+
			nobodyToken+",nobody,nobody-uid\n"))

	// etcd, shared by kube-apiserver (/registry) and the extension apiserver (its own prefix).
	clientPort, peerPort := harness.FreePort(t), harness.FreePort(t)
	c.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	c.procs["etcd"] = harness.Start(t, dir, etcdBin, "--name", "e2e", "--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", c.etcdURL, "--advertise-client-urls", c.etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL)
	c.procs["etcd"].WaitFor(t, "ready to serve client requests", time.Minute)

	kasPort := harness.FreePort(t)
	c.url = fmt.Sprintf("https://127.0.0.1:%d", kasPort)
	bin := opts.kubeAPIServer
	if bin == "" {
		bin = kubeAPIServerBin
	}
	args := append([]string{}, opts.kubeAPIServerArgs...)
	if opts.featureGates != "" {
		args = append(args, "--feature-gates", opts.featureGates)
	}
	c.procs["kube-apiserver"] = harness.Start(t, dir, bin, append(args,
		"--etcd-servers", c.etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(kasPort),
		// The kubernetes Service's endpoints would hold the loopback address, which endpoints refuse.
		"--endpoint-reconciler-type", "none",
		"--tls-cert-file", kasCert, "--tls-private-key-file", kasKey,
		"--client-ca-file", c.caFile,
		"--token-auth-file", tokens,
		"--authorization-mode", "Node,RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", saKey, "--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.0.0.0/24",
		// Aggregation: kube-apiserver proxies with the front-proxy client
		// certificate and names the user in request headers.
		"--requestheader-client-ca-file", fpCAFile,
		"--requestheader-allowed-names", "front-proxy-client",
		"--requestheader-username-headers", "X-Remote-User",
		"--requestheader-group-headers", "X-Remote-Group",
		"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
		"--proxy-client-cert-file", fpCert, "--proxy-client-key-file", fpKey,
		"--enable-aggregator-routing=false",
		"--cert-dir", filepath.Join(dir, "kube-apiserver-certs"),
		"--profiling=false")...)
	admin := c.kubeconfig(t, "admin", adminToken)
	if !harness.WaitUntil(3*time.Minute, func() bool {
		select {
		case <-c.procs["kube-apiserver"].Done():
			t.Fatalf("kube-apiserver exited: %v", c.procs["kube-apiserver"].Err())
		default:
		}
		return kubectlWith(admin, "", "get", "--raw", "/readyz").stdout == "ok"
	}) {
		t.Fatalf("kube-apiserver not ready after 3 minutes")
	}

	if opts.noControllerManager {
		return c
	}
	// The namespace controller deletes aggregated objects of a deleted
	// namespace; the garbage collector follows their owner references.
	c.procs["kube-controller-manager"] = harness.Start(t, dir, kubeControllerManagerBin, append(append([]string{}, opts.controllerArgs...),
		"--kubeconfig", admin,
		"--controllers", strings.Join(append([]string{"namespace", "garbagecollector"}, opts.controllers...), ","),
		"--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", fmt.Sprint(harness.FreePort(t)),
		"--profiling=false")...)
	return c
}

// tlsClient is an HTTP client that trusts the cluster CA for serverName,
// presenting cert when not nil.
func (c *kubeCluster) tlsClient(serverName string, cert *tls.Certificate) *http.Client {
	pool := x509.NewCertPool()
	pool.AddCert(c.ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: serverName}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}, Timeout: 30 * time.Second}
}

// kubectlAs runs kubectl with kubeconfig, failing the test on error.
func kubectlAs(t *testing.T, kubeconfig string, args ...string) string {
	t.Helper()
	r := kubectlWith(kubeconfig, "", args...)
	if r.err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

// applyAs runs kubectl apply with manifest, failing the test on error.
func applyAs(t *testing.T, kubeconfig, manifest string) {
	t.Helper()
	if r := kubectlWith(kubeconfig, manifest, "apply", "-f", "-"); r.err != nil {
		t.Fatalf("kubectl apply: %v\n%s%s\n%s", r.err, r.stdout, r.stderr, manifest)
	}
}

// base64PEM returns a PEM file's content in base64, as caBundle fields hold it.
func base64PEM(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(b)
}
