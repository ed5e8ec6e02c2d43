package server

import (
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"net"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/server"
	restclient "k8s.io/client-go/rest"
)

// TestLoopbackCertificate: the loopback client's config trusts the
// certificate served first for its server name, a P-256 key, valid for
// about three years from an hour ago; a TLS handshake of the config with a
// server presenting the SNI certificates succeeds, and one with another
// server name fails.
func TestLoopbackCertificate(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	info := &server.SecureServingInfo{Listener: l}
	var config *restclient.Config
	if err := applyLoopback(info, &config); err != nil {
		t.Fatal(err)
	}
	if len(info.SNICerts) != 1 || config == nil || config.BearerToken == "" || config.TLSClientConfig.ServerName != server.LoopbackClientServerNameOverride {
		t.Fatalf("SNI certificates %d, loopback config %+v", len(info.SNICerts), config)
	}
	certPEM, keyPEM := info.SNICerts[0].CurrentCertKeyContent()
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := pair.PrivateKey.(*ecdsa.PrivateKey); !ok {
		t.Errorf("key %T, want ECDSA", pair.PrivateKey)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if age := cert.NotAfter.Sub(time.Now()); age < 3*365*24*time.Hour || age > loopbackMaxAge {
		t.Errorf("valid for %s more", age)
	}
	if cert.IsCA || cert.KeyUsage&x509.KeyUsageCertSign != 0 || cert.SerialNumber.Sign() <= 0 {
		t.Errorf("a CA %v, may sign certificates %v, serial %v: want a leaf that signs nothing, with a serial", cert.IsCA, cert.KeyUsage&x509.KeyUsageCertSign != 0, cert.SerialNumber)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				s := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{pair}})
				_ = s.Handshake()
				s.Close()
			}()
		}
	}()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(config.TLSClientConfig.CAData)
	for name, ok := range map[string]bool{server.LoopbackClientServerNameOverride: true, "localhost": false} {
		c, err := tls.Dial("tcp", l.Addr().String(), &tls.Config{RootCAs: roots, ServerName: name})
		if (err == nil) != ok {
			t.Errorf("handshake as %s: %v, want success %v", name, err, ok)
		}
		if c != nil {
			c.Close()
		}
	}
}
