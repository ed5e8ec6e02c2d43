package server

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"time"

	"k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	restclient "k8s.io/client-go/rest"
)

// loopbackMaxAge is how long the loopback certificate is valid, as
// k8s.io/apiserver's (about 3 years: a restart makes a new one).
const loopbackMaxAge = (3*365 + 1) * 24 * time.Hour

// applyLoopback is k8s.io/apiserver's SecureServingOptionsWithLoopback's
// loopback part with an ECDSA P-256 key instead of RSA 2048: a certificate
// made at each start for the server's own client (its name
// server.LoopbackClientServerNameOverride, served first among the SNI
// certificates, and trusted by that client alone), and the client's config
// with a new random bearer token. Making the RSA key took 0.05-0.5 s of every
// start (run local's restarts waited for it); the P-256 key takes well
// under a millisecond and is as strong for a loopback connection.
func applyLoopback(info *server.SecureServingInfo, loopback **restclient.Config) error {
	if info == nil {
		return nil // nothing served: no loopback (as k8s.io/apiserver's)
	}
	certPEM, keyPEM, err := loopbackCertKey(time.Now())
	if err != nil {
		return fmt.Errorf("making the loopback client's certificate: %w", err)
	}
	provider, err := dynamiccertificates.NewStaticSNICertKeyContent("self-signed loopback", certPEM, keyPEM, server.LoopbackClientServerNameOverride)
	if err != nil {
		return fmt.Errorf("making the loopback client's certificate: %w", err)
	}
	info.SNICerts = append([]dynamiccertificates.SNICertKeyContentProvider{provider}, info.SNICerts...)
	config, err := info.NewLoopbackClientConfig(rand.Text(), certPEM)
	if err != nil {
		info.SNICerts = info.SNICerts[1:]
		return err
	}
	*loopback = config
	return nil
}

// loopbackCertKey is a self-signed certificate and key for
// server.LoopbackClientServerNameOverride, valid from an hour before now
// for loopbackMaxAge, with a P-256 key. client-go's
// cert.GenerateSelfSignedCertKey makes a CA and a leaf it signs; one
// self-signed leaf, which the loopback client alone trusts, is enough (Go
// trusts a certificate that is itself in the roots) and signs nothing.
func loopbackCertKey(now time.Time) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	// No SerialNumber: x509.CreateCertificate draws a random one.
	tmpl := &x509.Certificate{
		Subject:               pkix.Name{CommonName: fmt.Sprintf("%s@%d", server.LoopbackClientServerNameOverride, now.Unix())},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(loopbackMaxAge),
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		DNSNames:              []string{server.LoopbackClientServerNameOverride},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
