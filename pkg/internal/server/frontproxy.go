package server

import (
	"crypto/sha256"
	"crypto/x509"
	"net/http"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	"k8s.io/apiserver/pkg/authentication/group"
	"k8s.io/apiserver/pkg/authentication/request/headerrequest"
	"k8s.io/utils/clock"
)

// frontProxyVerifiedTTL is how long a front-proxy client certificate found
// valid stays so without its chain being verified again (never past the
// NotAfter of a certificate of its chain, and again at once when the CA
// bundle changes).
const frontProxyVerifiedTTL = 5 * time.Minute

// frontProxyAuthenticator authenticates the requests kube-apiserver's
// proxy (the aggregator) sends, as the requestheader authenticator that
// k8s.io/apiserver's delegated authentication puts first does: a client
// certificate of the requestheader CA with an allowed common name, then the
// user of the X-Remote-* headers. The difference: that authenticator
// verifies the certificate's chain (an ECDSA or RSA signature check) on
// every request, about a tenth of the server's CPU per request behind the
// aggregator, where every request of one connection presents the same
// certificate; here a chain found valid is remembered for
// frontProxyVerifiedTTL, for the same certificates and the same CA bundle.
// Whatever it does not authenticate (no certificate, another CA, a common
// name not allowed, no username header) goes to the delegate, the
// authenticator as k8s.io/apiserver built it, which answers as before.
type frontProxyAuthenticator struct {
	verifyOptions func() (x509.VerifyOptions, bool)
	allowedNames  headerrequest.StringSliceProvider
	// headers is the requestheader authenticator without the certificate,
	// with the system:authenticated group the delegate adds.
	headers  authenticator.Request
	delegate authenticator.Request
	verified *cache.LRUExpireCache // sha256 of the peer certificates -> verifiedChain
	clock    clock.PassiveClock
	// verify is x509's chain verification (a test counts its calls).
	verify func(*x509.Certificate, x509.VerifyOptions) ([][]*x509.Certificate, error)
}

// verifiedChain is a verified certificate chain's options: a hit counts
// only under the same ones.
type verifiedChain struct {
	roots, intermediates *x509.CertPool
	keyUsages            []x509.ExtKeyUsage
}

// newFrontProxyAuthenticator wraps delegate, the delegated authenticator
// built from rh, the requestheader configuration.
func newFrontProxyAuthenticator(rh *authenticatorfactory.RequestHeaderConfig, delegate authenticator.Request, clk clock.Clock) authenticator.Request {
	return &frontProxyAuthenticator{
		verifyOptions: rh.CAContentProvider.VerifyOptions,
		allowedNames:  rh.AllowedClientNames,
		headers:       group.NewAuthenticatedGroupAdder(headerrequest.NewDynamic(rh.UsernameHeaders, rh.UIDHeaders, rh.GroupHeaders, rh.ExtraHeaderPrefixes)),
		delegate:      delegate,
		verified:      cache.NewLRUExpireCacheWithClock(256, clk),
		clock:         clk,
		verify:        func(c *x509.Certificate, o x509.VerifyOptions) ([][]*x509.Certificate, error) { return c.Verify(o) },
	}
}

func (a *frontProxyAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	if req.TLS == nil || len(req.TLS.PeerCertificates) == 0 {
		return a.delegate.AuthenticateRequest(req)
	}
	opts, ok := a.verifyOptions()
	if !ok || !a.valid(req.TLS.PeerCertificates, opts) || !a.allowed(req.TLS.PeerCertificates[0].Subject.CommonName) {
		return a.delegate.AuthenticateRequest(req)
	}
	resp, ok, err := a.headers.AuthenticateRequest(req)
	if err != nil || !ok {
		return a.delegate.AuthenticateRequest(req)
	}
	return resp, true, nil
}

// allowed is the requestheader authenticator's check of the common name
// (none listed: any).
func (a *frontProxyAuthenticator) allowed(cn string) bool {
	names := a.allowedNames.Value()
	return len(names) == 0 || slices.Contains(names, cn)
}

// valid verifies peer[0] as x509's request authenticator does (the other
// peer certificates as intermediates unless opts has some), or finds it
// verified under the same options.
func (a *frontProxyAuthenticator) valid(peer []*x509.Certificate, opts x509.VerifyOptions) bool {
	if !opts.CurrentTime.IsZero() {
		_, err := a.verify(peer[0], opts) // a fixed time: not cached
		return err == nil
	}
	h := sha256.New()
	for _, c := range peer {
		h.Write(c.Raw)
	}
	key := string(h.Sum(nil))
	if e, ok := a.verified.Get(key); ok {
		v := e.(verifiedChain)
		if v.roots == opts.Roots && v.intermediates == opts.Intermediates && slices.Equal(v.keyUsages, opts.KeyUsages) {
			return true
		}
	}
	entry := verifiedChain{roots: opts.Roots, intermediates: opts.Intermediates, keyUsages: opts.KeyUsages}
	if opts.Intermediates == nil && len(peer) > 1 {
		opts.Intermediates = x509.NewCertPool()
		for _, c := range peer[1:] {
			opts.Intermediates.AddCert(c)
		}
	}
	chains, err := a.verify(peer[0], opts)
	if err != nil {
		return false
	}
	ttl := frontProxyVerifiedTTL
	now := a.clock.Now()
	for _, chain := range chains {
		for _, c := range chain {
			ttl = min(ttl, c.NotAfter.Sub(now))
		}
	}
	if ttl > 0 {
		a.verified.Add(key, entry, ttl)
	}
	return true
}
