package storage

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
)

// etcdPKI is the embedded etcd's own PKI: a CA, the certificate etcd
// serves its client and peer listeners with (and presents to its peer),
// and the one the apiserver presents. etcd accepts only clients with a
// certificate of this CA, so nobody else on the machine can reach the data
// around the apiserver's authentication. The files are kept while they
// are complete and valid for more than 30 days (another apiserver of the
// same project, started again, keeps connecting), made anew otherwise.
type etcdPKI struct {
	CA                    string // the CA certificate
	ServerCert, ServerKey string
	ClientCert, ClientKey string
}

// newEtcdPKI returns the embedded etcd's PKI in dir (0700, every file
// 0600), reusing what is there when it is complete and valid.
func newEtcdPKI(dir string) (*etcdPKI, error) {
	if err := private.Dir(dir); err != nil {
		return nil, err
	}
	p := &etcdPKI{
		CA:         filepath.Join(dir, "etcd-ca.crt"),
		ServerCert: filepath.Join(dir, "etcd-server.crt"), ServerKey: filepath.Join(dir, "etcd-server.key"),
		ClientCert: filepath.Join(dir, "etcd-client.crt"), ClientKey: filepath.Join(dir, "etcd-client.key"),
	}
	if p.valid(30 * 24 * time.Hour) {
		return p, nil
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{CommonName: "apiserver-boot embedded etcd CA"}, caKey)
	if err != nil {
		return nil, err
	}
	caPEM, err := certutil.EncodeCertificates(ca)
	if err != nil {
		return nil, err
	}
	// The leaves first, the CA last: a CA on disk means a complete set.
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
		if err := files.WriteAtomic(leaf.key, keyPEM, 0o600); err != nil {
			return nil, err
		}
		if err := files.WriteAtomic(leaf.cert, certPEM, 0o600); err != nil {
			return nil, err
		}
	}
	if err := files.WriteAtomic(p.CA, caPEM, 0o600); err != nil {
		return nil, err
	}
	return p, nil
}

// valid tells whether every file of p is there, private, and the
// certificates chain to the CA and stay valid for longer than margin.
func (p *etcdPKI) valid(margin time.Duration) bool {
	cas, err := certutil.CertsFromFile(p.CA)
	if err != nil || len(cas) != 1 {
		return false
	}
	roots := x509.NewCertPool()
	roots.AddCert(cas[0])
	deadline := time.Now().Add(margin)
	if cas[0].NotAfter.Before(deadline) {
		return false
	}
	for _, pair := range [][2]string{{p.ServerCert, p.ServerKey}, {p.ClientCert, p.ClientKey}} {
		if private.Check("", pair[1]) != nil {
			return false
		}
		if _, err := tls.LoadX509KeyPair(pair[0], pair[1]); err != nil {
			return false
		}
		certs, err := certutil.CertsFromFile(pair[0])
		if err != nil || len(certs) == 0 || certs[0].NotAfter.Before(deadline) {
			return false
		}
		if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			return false
		}
	}
	return true
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
