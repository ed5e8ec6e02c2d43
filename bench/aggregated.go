package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// The two kube-apiserver setups of item 4, and the generated apiserver in
// delegated mode behind the first.

// kasMode is how item 4 runs kube-apiserver.
type kasMode string

const (
	// kasCluster is kube-apiserver as a cluster runs it: RBAC, the default
	// admission plugins, priority and fairness, and aggregation (a
	// front-proxy client certificate and its CA for request headers).
	kasCluster kasMode = "cluster"
	// kasComparable is kube-apiserver with what the standalone generated
	// apiserver does not run turned off: no admission plugins but
	// NamespaceLifecycle (which both run), priority and fairness off, every
	// authenticated request allowed.
	kasComparable kasMode = "comparable"
)

// kubeAPI is a running kube-apiserver.
type kubeAPI struct {
	*target          // the Widget CRD on it, reached as the load's user (see kubeAPIServer)
	admin    *target // the same as its administrator (system:masters): setup, registration, profiles
	dir, ca  string  // its folder; the CA signing serving certificates of aggregated servers (cluster mode)
	caCert   *x509.Certificate
	caSigner crypto.Signer
	flags    []string // what it runs with (beyond etcd, ports and files)
}

// crdGroup is the CRD's group: kube-apiserver cannot serve a CRD and an
// APIService of one group and version, and item 4 aggregates the generated
// apiserver's bench.example.com/v1 behind the same kube-apiserver.
const crdGroup = "crd.bench.example.com"

var crdWidgets = schema.GroupVersionResource{Group: crdGroup, Version: "v1", Resource: "widgets"}

// defaultAdmissionPlugins reads the admission plugins kube-apiserver enables
// by default from its --help (the list moves between releases).
func (b *bench) defaultAdmissionPlugins(bin string) ([]string, error) {
	out, _ := proc.Command(b.ctx, b.tmp, nil, bin, "--help") // exits 0 on newer releases, 2 on older
	m := regexp.MustCompile(`disabled although they are in the default enabled plugins list \(([^)]*)\)`).FindStringSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("%s --help does not list its default admission plugins", bin)
	}
	var plugins []string
	for _, p := range strings.Split(m[1], ",") {
		plugins = append(plugins, strings.TrimSpace(p))
	}
	return plugins, nil
}

// kubeAPIServer starts kube-apiserver in mode on etcd under prefix.
func (b *bench) kubeAPIServer(bin, etcdURL, prefix string, mode kasMode) (_ *kubeAPI, err error) {
	name := strings.TrimPrefix(prefix, "/") // one folder and log per etcd prefix
	dir := filepath.Join(b.tmp, name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	k := &kubeAPI{dir: dir}
	cred, err := writeKASCredentials(dir)
	if err != nil {
		return nil, err
	}
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	if err := b.kasModeFlags(k, bin, mode); err != nil {
		return nil, err
	}
	args := append([]string{"--etcd-servers", etcdURL, "--etcd-prefix", prefix,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(port),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", cred.tokens,
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", cred.saKey, "--service-account-signing-key-file", cred.saKey,
		"--service-cluster-ip-range", "10.0.0.0/24",
		// The kubernetes Service's endpoints would hold the loopback address, which endpoints refuse.
		"--endpoint-reconciler-type", "none"}, k.flags...)
	s, err := proc.StartServer(dir, b.tmp, name, bin, nil, args...)
	if err != nil {
		return nil, err
	}
	// Stopped again unless it serves.
	defer func() {
		if err != nil {
			s.Stop(15 * time.Second)
		}
	}()
	cfg := &rest.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", port), BearerToken: cred.admin, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	return k, b.kasTargets(k, s, cfg, mode, cred.user)
}

// kasCredentials are kube-apiserver's tokens file (an admin's and an
// ordinary user's bearer tokens) and its service account key.
type kasCredentials struct {
	admin, user   string // the tokens
	tokens, saKey string // the files
}

func randomToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// writeKASCredentials writes fresh tokens and a service account key to dir.
func writeKASCredentials(dir string) (c kasCredentials, err error) {
	if c.admin, err = randomToken(); err != nil {
		return c, err
	}
	if c.user, err = randomToken(); err != nil {
		return c, err
	}
	c.tokens = filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(c.tokens, []byte(c.admin+",admin,admin-uid,system:masters\n"+c.user+",bench-user,bench-user-uid,bench-users\n"), 0o600); err != nil {
		return c, err
	}
	key, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return c, err
	}
	c.saKey = filepath.Join(dir, "sa.key")
	return c, os.WriteFile(c.saKey, key, 0o600)
}

// kasModeFlags sets the flags of mode on k: a cluster's (RBAC, a client CA
// and the front proxy's certificates, written to k.dir) or the comparable
// settings (AlwaysAllow, no priority and fairness, every default admission
// plugin off but NamespaceLifecycle).
func (b *bench) kasModeFlags(k *kubeAPI, bin string, mode kasMode) (err error) {
	switch mode {
	case kasCluster:
		k.caCert, k.caSigner, k.ca, err = newCA(k.dir, "ca")
		if err != nil {
			return err
		}
		fpCA, fpKey, fpCAFile, err := newCA(k.dir, "front-proxy-ca")
		if err != nil {
			return err
		}
		fpCert, fpCertKey, err := signCert(k.dir, "front-proxy-client", fpCA, fpKey, "front-proxy-client")
		if err != nil {
			return err
		}
		k.flags = []string{"--authorization-mode", "Node,RBAC",
			"--requestheader-client-ca-file", fpCAFile, "--requestheader-allowed-names", "front-proxy-client",
			"--requestheader-username-headers", "X-Remote-User", "--requestheader-group-headers", "X-Remote-Group",
			"--requestheader-extra-headers-prefix", "X-Remote-Extra-",
			"--proxy-client-cert-file", fpCert, "--proxy-client-key-file", fpCertKey,
			"--enable-aggregator-routing=false"}
	case kasComparable:
		plugins, err := b.defaultAdmissionPlugins(bin)
		if err != nil {
			return err
		}
		plugins = slices.DeleteFunc(plugins, func(p string) bool { return p == "NamespaceLifecycle" })
		k.flags = []string{"--authorization-mode", "AlwaysAllow", "--enable-priority-and-fairness=false",
			"--disable-admission-plugins", strings.Join(plugins, ",")}
	}
	return nil
}

// kasTargets waits for kube-apiserver to serve its admin, and sets k's
// targets: the admin and the load's user.
func (b *bench) kasTargets(k *kubeAPI, s *proc.Server, cfg *rest.Config, mode kasMode, userToken string) (err error) {
	what := "CRD on kube-apiserver"
	if mode == kasComparable {
		what = "CRD on kube-apiserver (comparable settings)"
	}
	if k.admin, err = newTarget(what+", admin", s, cfg, crdWidgets, k.dir); err != nil {
		return err
	}
	if err = k.admin.ready(b.ctx, 3*time.Minute); err != nil {
		return err
	}
	// The load's user: with cluster settings an ordinary user whose
	// requests RBAC authorizes (the generated apiserver asks by
	// SubjectAccessReview) and priority and fairness classifies; with the
	// comparable settings the administrator, as the standalone generated
	// apiserver's only token is (both exempt from the max-in-flight limits).
	load := cfg
	if mode == kasCluster {
		if err = k.admin.grantWidgets(b.ctx, "bench-users"); err != nil {
			return err
		}
		load = rest.CopyConfig(cfg)
		load.BearerToken = userToken
	}
	k.target, err = newTarget(what, s, load, crdWidgets, k.dir)
	return err
}

// grantWidgets lets group do anything with Widgets of both groups (RBAC).
func (t *target) grantWidgets(ctx context.Context, group string) error {
	for _, obj := range []map[string]any{
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": map[string]any{"name": "bench-widgets"},
			"rules": []any{map[string]any{"apiGroups": []any{crdGroup, widgets.Group}, "resources": []any{"widgets"}, "verbs": []any{"*"}}}},
		{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": map[string]any{"name": "bench-widgets"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-widgets"},
			"subjects": []any{map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}}},
	} {
		u := &unstructured.Unstructured{Object: obj}
		gvr := schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: strings.ToLower(u.GetKind()) + "s"}
		if _, err := t.client.Resource(gvr).Create(ctx, u, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("RBAC for the load's user: %s: %w", u.GetKind(), err)
		}
	}
	return nil
}

// delegatedServer starts the serving project's apiserver in delegated mode
// (authentication, authorization and admission through kube-apiserver, as
// build config deploys it), registers it with an APIService and returns
// the target reaching it through kube-apiserver.
func (b *bench) delegatedServer(p *servingProject, etcdURL string, k *kubeAPI) (_ *target, err error) {
	const ns, svc = "bench-system", "widget-apiserver"
	dir := filepath.Join(b.tmp, "delegated")
	s, port, err := b.startDelegated(p, etcdURL, "/apiserver-boot-aggregated", k, dir, svc+"."+ns+".svc")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil { // stopped again unless it serves
			s.Stop(15 * time.Second)
		}
	}()
	if err := b.registerAPIService(k, ns, svc, port); err != nil {
		return nil, err
	}
	t, err := newTarget("apiserver-boot through kube-apiserver", s, k.cfg, widgets, dir)
	if err != nil {
		return nil, err
	}
	t.cpu = []*proc.Server{s, k.srv} // the proxying is part of the cost
	// Its /debug/pprof, straight (kube-apiserver proxies only API groups).
	directCfg := rest.CopyConfig(k.admin.cfg)
	directCfg.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	if t.direct, err = newTarget("apiserver-boot, delegated", s, directCfg, widgets, dir); err != nil {
		return nil, err
	}
	// Available, and a create goes through.
	return t, waitFor(b.ctx, s, 2*time.Minute, func() bool {
		_, err := t.client.Resource(widgets).Namespace("default").Create(b.ctx, widget(widgets.Group, "probe"), metav1.CreateOptions{})
		return err == nil
	})
}

// startDelegated starts the delegated apiserver with a serving certificate
// for host signed by kube-apiserver's CA, and waits for its /readyz.
func (b *bench) startDelegated(p *servingProject, etcdURL, prefix string, k *kubeAPI, dir, host string) (_ *proc.Server, port int, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, 0, err
	}
	cert, key, err := signCert(dir, "serving", k.caCert, k.caSigner, host, host)
	if err != nil {
		return nil, 0, err
	}
	// Its identity: the admin of the bench's kube-apiserver (a cluster gives
	// it a ServiceAccount with the RBAC that build config writes).
	kubeconfig := filepath.Join(dir, "kube-apiserver.kubeconfig")
	if err := writeKubeconfig(kubeconfig, k.admin.cfg); err != nil {
		return nil, 0, err
	}
	if port, err = freeport.Port(); err != nil {
		return nil, 0, err
	}
	s, err := proc.StartServer(dir, b.tmp, "serve-apiserver-delegated", p.apiserver(), nil,
		"--secure-port", fmt.Sprint(port), "--bind-address", "127.0.0.1",
		"--tls-cert-file", cert, "--tls-private-key-file", key,
		"--etcd-servers", etcdURL, "--etcd-prefix", prefix,
		"--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig, "--kubeconfig", kubeconfig)
	if err != nil {
		return nil, 0, err
	}
	direct := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, Timeout: 5 * time.Second}
	err = waitFor(b.ctx, s, 2*time.Minute, func() bool {
		resp, err := direct.Get(fmt.Sprintf("https://127.0.0.1:%d/readyz", port))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if err != nil {
		s.Stop(15 * time.Second)
		return nil, 0, err
	}
	return s, port, nil
}

// registerAPIService registers the delegated apiserver on port with
// kube-apiserver: a namespace, an ExternalName Service and the APIService.
// With aggregator routing off, kube-apiserver dials the ExternalName
// (localhost) and verifies the serving certificate for <svc>.<ns>.svc.
func (b *bench) registerAPIService(k *kubeAPI, ns, svc string, port int) error {
	namespace, service, apiService, err := k.registration(ns, svc, port)
	if err != nil {
		return err
	}
	return b.createAll(k, namespace, service, apiService)
}

// registration is what registers the delegated apiserver on port: its
// namespace, its Service and the APIService of widgets' group version.
func (k *kubeAPI) registration(ns, svc string, port int) (namespace, service, apiService map[string]any, err error) {
	caPEM, err := os.ReadFile(k.ca)
	if err != nil {
		return nil, nil, nil, err
	}
	namespace = map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}
	service = map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": svc, "namespace": ns},
		"spec": map[string]any{"type": "ExternalName", "externalName": "localhost", "ports": []any{map[string]any{"port": int64(port), "targetPort": int64(port)}}}}
	apiService = map[string]any{"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": map[string]any{"name": "v1." + widgets.Group},
		"spec": map[string]any{"group": widgets.Group, "version": "v1", "groupPriorityMinimum": int64(1000), "versionPriority": int64(10),
			"caBundle": base64.StdEncoding.EncodeToString(caPEM), "service": map[string]any{"name": svc, "namespace": ns, "port": int64(port)}}}
	return namespace, service, apiService, nil
}

// createAll creates objs (built-in kinds and APIServices) as k's administrator.
func (b *bench) createAll(k *kubeAPI, objs ...map[string]any) error {
	for _, obj := range objs {
		u := &unstructured.Unstructured{Object: obj}
		gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
		resource := strings.ToLower(u.GetKind()) + "s"
		r := k.admin.client.Resource(gv.WithResource(resource))
		var err error
		if u.GetNamespace() != "" {
			_, err = r.Namespace(u.GetNamespace()).Create(b.ctx, u, metav1.CreateOptions{})
		} else {
			_, err = r.Create(b.ctx, u, metav1.CreateOptions{})
		}
		if err != nil {
			return fmt.Errorf("registering the generated apiserver: %s %s: %w", u.GetKind(), u.GetName(), err)
		}
	}
	return nil
}

// newCA writes a self-signed CA (client-go's cert utilities) to dir/name.crt.
func newCA(dir, name string) (*x509.Certificate, crypto.Signer, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, "", err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: name}, key)
	if err != nil {
		return nil, nil, "", err
	}
	pem, err := certutil.EncodeCertificates(ca)
	if err != nil {
		return nil, nil, "", err
	}
	path := filepath.Join(dir, name+".crt")
	return ca, key, path, os.WriteFile(path, pem, 0o600)
}

// signCert writes a certificate signed by ca and its key to dir/name.crt and
// dir/name.key: for serving hosts, or a client certificate without hosts.
func signCert(dir, name string, ca *x509.Certificate, caKey crypto.Signer, cn string, hosts ...string) (string, string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", "", err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return "", "", err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:    hosts,
	}
	if len(hosts) > 0 {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return "", "", err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return "", "", err
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return "", "", err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return "", "", err
	}
	certFile, keyFile := filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		return "", "", err
	}
	return certFile, keyFile, os.WriteFile(keyFile, keyPEM, 0o600)
}
