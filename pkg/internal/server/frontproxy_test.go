package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net/http"
	"reflect"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/apis/apiserver"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	clocktesting "k8s.io/utils/clock/testing"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T, name string) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

func (ca testCA) client(t *testing.T, cn string, notAfter time.Time) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert
}

// requestHeaderConfig is the front proxy's configuration as
// DelegatingAuthenticationOptions makes it, with ca's bundle.
func requestHeaderConfig(t *testing.T, ca testCA) *authenticatorfactory.RequestHeaderConfig {
	t.Helper()
	content, err := dynamiccertificates.NewStaticCAContent("front-proxy-ca", ca.pem)
	if err != nil {
		t.Fatal(err)
	}
	return &authenticatorfactory.RequestHeaderConfig{
		UsernameHeaders:     headerrequest.StaticStringSlice{"X-Remote-User"},
		UIDHeaders:          headerrequest.StaticStringSlice{"X-Remote-Uid"},
		GroupHeaders:        headerrequest.StaticStringSlice{"X-Remote-Group"},
		ExtraHeaderPrefixes: headerrequest.StaticStringSlice{"X-Remote-Extra-"},
		CAContentProvider:   content,
		AllowedClientNames:  headerrequest.StaticStringSlice{"front-proxy-client"},
	}
}

// delegatedAuthenticator is k8s.io/apiserver's delegated authenticator
// for rh, with client certificates of clientCA and anonymous requests.
func delegatedAuthenticator(t *testing.T, rh *authenticatorfactory.RequestHeaderConfig, clientCA testCA) authenticator.Request {
	t.Helper()
	clientContent, err := dynamiccertificates.NewStaticCAContent("client-ca", clientCA.pem)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := authenticatorfactory.DelegatingAuthenticatorConfig{
		Anonymous: &apiserver.AnonymousAuthConfig{Enabled: true}, RequestHeaderConfig: rh, ClientCertificateCAContentProvider: clientContent,
	}.New()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func proxied(peer *x509.Certificate, headers map[string]string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "https://localhost/apis/bench.example.com/v1/namespaces/default/widgets", nil)
	if peer != nil {
		req.TLS = &tls.ConnectionState{PeerCertificates: []*x509.Certificate{peer}}
	}
	for k, v := range headers {
		req.Header.Add(k, v)
	}
	return req
}

type authResult struct {
	User   string
	Groups []string
	Extra  map[string][]string
	OK     bool
	Err    bool
}

func authenticate(a authenticator.Request, req *http.Request) (authResult, http.Header) {
	resp, ok, err := a.AuthenticateRequest(req)
	r := authResult{OK: ok, Err: err != nil}
	if resp != nil && resp.User != nil {
		r.User, r.Groups, r.Extra = resp.User.GetName(), resp.User.GetGroups(), resp.User.GetExtra()
	}
	return r, req.Header
}

// Every request gets the answer k8s.io/apiserver's delegated authenticator
// gives it, headers cleared the same way.
func TestFrontProxyAuthenticatorAnswersAsTheDelegate(t *testing.T) {
	proxyCA, clientCA, otherCA := newTestCA(t, "front-proxy-ca"), newTestCA(t, "client-ca"), newTestCA(t, "other-ca")
	rh := requestHeaderConfig(t, proxyCA)
	later := time.Now().Add(12 * time.Hour)
	proxy := proxyCA.client(t, "front-proxy-client", later)
	user := map[string]string{"X-Remote-User": "alice", "X-Remote-Group": "devs", "X-Remote-Extra-Scopes": "s1", "X-Remote-Uid": "u-1"}
	for _, c := range []struct {
		name    string
		peer    *x509.Certificate
		headers map[string]string
		want    string
	}{
		{"the front proxy", proxy, user, "alice"},
		{"the front proxy, again (remembered)", proxy, user, "alice"},
		// A certificate no authenticator accepts fails the request (not anonymous).
		{"the front proxy without a user", proxy, nil, ""},
		{"a common name not allowed", proxyCA.client(t, "someone-else", later), user, ""},
		{"another CA's certificate", otherCA.client(t, "front-proxy-client", later), user, ""},
		{"a client certificate of the client CA", clientCA.client(t, "bob", later), user, "bob"},
		{"no certificate", nil, user, "system:anonymous"},
	} {
		want, wantHeaders := authenticate(delegatedAuthenticator(t, rh, clientCA), proxied(c.peer, c.headers))
		ours := newFrontProxyAuthenticator(rh, delegatedAuthenticator(t, rh, clientCA), clocktesting.NewFakeClock(time.Now()))
		got, gotHeaders := authenticate(ours, proxied(c.peer, c.headers))
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotHeaders, wantHeaders) {
			t.Errorf("%s: got %+v (headers %v), the delegated authenticator %+v (headers %v)", c.name, got, gotHeaders, want, wantHeaders)
		}
		if want.User != c.want {
			t.Errorf("%s: user %q, want %q", c.name, want.User, c.want)
		}
	}
}

// A chain is verified once, again when the CA bundle changes, after
// frontProxyVerifiedTTL, and after the NotAfter of its certificate.
func TestFrontProxyAuthenticatorVerifiesOnce(t *testing.T) {
	proxyCA := newTestCA(t, "front-proxy-ca")
	rh := requestHeaderConfig(t, proxyCA)
	now := time.Now()
	clk := clocktesting.NewFakeClock(now)
	// The delegate answers nobody: what it would answer is the other test's.
	a := newFrontProxyAuthenticator(rh, authenticator.RequestFunc(func(*http.Request) (*authenticator.Response, bool, error) { return nil, false, nil }), clk).(*frontProxyAuthenticator)
	verified := 0
	a.verify = func(c *x509.Certificate, o x509.VerifyOptions) ([][]*x509.Certificate, error) {
		verified++
		return c.Verify(o)
	}
	user := map[string]string{"X-Remote-User": "alice"}
	check := func(step string, peer *x509.Certificate, wantUser string, wantVerified int) {
		t.Helper()
		got, _ := authenticate(a, proxied(peer, user))
		if got.User != wantUser || verified != wantVerified {
			t.Errorf("%s: user %q after %d verifications, want %q after %d", step, got.User, verified, wantUser, wantVerified)
		}
	}
	long := proxyCA.client(t, "front-proxy-client", now.Add(12*time.Hour))
	check("first request", long, "alice", 1)
	check("second request", long, "alice", 1)
	check("third request", long, "alice", 1)
	clk.Step(frontProxyVerifiedTTL + time.Second)
	check("after the TTL", long, "alice", 2)
	check("after the TTL, again", long, "alice", 2)

	// The CA bundle reloaded (new options): verified again; then the proxy's
	// CA replaced by another: refused (the delegate verifies, and fails).
	same, _ := dynamiccertificates.NewStaticCAContent("front-proxy-ca", proxyCA.pem)
	a.verifyOptions = same.VerifyOptions
	check("a reloaded bundle", long, "alice", 3)
	other, _ := dynamiccertificates.NewStaticCAContent("front-proxy-ca", newTestCA(t, "new-front-proxy-ca").pem)
	a.verifyOptions = other.VerifyOptions
	check("a replaced CA", long, "", 4)
	a.verifyOptions = same.VerifyOptions

	// A certificate that expires before the TTL is not remembered past it.
	short := proxyCA.client(t, "front-proxy-client", clk.Now().Add(2*time.Minute))
	check("short-lived, first", short, "alice", 5)
	check("short-lived, second", short, "alice", 5)
	clk.Step(3 * time.Minute)
	check("short-lived, past its NotAfter on the cache's clock", short, "alice", 6) // x509 verifies with the real time, still before it
}
