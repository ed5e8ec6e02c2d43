package image

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"os"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// hostBundles are where Linux distributions (and macOS) keep the PEM bundle
// of trusted roots, in the order Go's crypto/x509 looks for them.
var hostBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",                // Debian, Ubuntu, Gentoo, Arch, Alpine
	"/etc/pki/tls/certs/ca-bundle.crt",                  // Fedora, RHEL 6
	"/etc/ssl/ca-bundle.pem",                            // openSUSE
	"/etc/pki/tls/cacert.pem",                           // OpenELEC
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem", // CentOS, RHEL 7
	"/etc/ssl/cert.pem",                                 // Alpine, macOS
}

// CACertificates returns the PEM bundle of trusted roots to put in the image,
// and where it came from: the build machine's bundle if it has one that
// parses, else the Mozilla roots that golang.org/x/crypto/x509roots/fallback
// embeds (kept up to date by the Go team), leaving out roots that Mozilla
// trusts only with constraints a plain PEM bundle cannot carry.
func CACertificates() ([]byte, string, error) {
	for _, p := range hostBundles {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if x509.NewCertPool().AppendCertsFromPEM(b) {
			return b, p, nil
		}
	}
	return FallbackCACertificates()
}

// FallbackCACertificates encodes the roots embedded by golang.org/x/crypto/x509roots/fallback.
func FallbackCACertificates() ([]byte, string, error) {
	var out []byte
	n := 0
	for r := range bundle.Roots() {
		if r.Constraint != nil {
			continue
		}
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: r.Certificate})...)
		n++
	}
	if n == 0 {
		return nil, "", fmt.Errorf("no CA certificates found on this machine nor in golang.org/x/crypto/x509roots/fallback")
	}
	return out, fmt.Sprintf("golang.org/x/crypto/x509roots/fallback (%d roots)", n), nil
}
