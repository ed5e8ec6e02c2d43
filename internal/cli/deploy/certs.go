package deploy

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	cryptorand "crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math"
	"math/big"
	"net"
	"time"

	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// Certificates are the TLS material of a deployment, all signed by one CA
// generated for it. The CA's private key is used once and never written:
// to renew, `build config` issues a new CA and new certificates together
// (the APIService's caBundle and etcd's trusted CA change with them).
type Certificates struct {
	// CA is the PEM certificate of the generated CA: the APIService's caBundle.
	CA []byte
	// Serving is the apiserver's serving certificate for <name>.<namespace>.svc.
	Serving KeyPair
	// EtcdServer and EtcdClient secure the etcd StatefulSet (client
	// certificate authentication); nil with --etcd-servers or
	// --datastore-endpoint-secret.
	EtcdServer, EtcdClient *KeyPair
}

// KeyPair is a PEM certificate and its PEM private key.
type KeyPair struct {
	Cert, Key []byte
}

// ServingValidity is how long the certificates are valid; `build config`
// renews them when less than RenewBefore remains.
const (
	ServingValidity = 365 * 24 * time.Hour
	RenewBefore     = 30 * 24 * time.Hour
)

// ServiceDNSNames are the names the apiserver's Service answers to in the cluster;
// kube-apiserver's aggregator checks the serving certificate against <name>.<namespace>.svc.
func ServiceDNSNames(service, namespace string) []string {
	return []string{
		service,
		service + "." + namespace,
		service + "." + namespace + ".svc",
		service + "." + namespace + ".svc.cluster.local",
	}
}

// etcdDNSNames cover the headless Service and its pods (<pod>.<service>.<namespace>.svc).
func etcdDNSNames(service, namespace string) []string {
	names := ServiceDNSNames(service, namespace)
	return append(names,
		"*."+service+"."+namespace+".svc",
		"*."+service+"."+namespace+".svc.cluster.local",
		"localhost")
}

// NewCertificates issues a CA and the certificates of the deployment named
// name in namespace; with etcd, also etcd's server and client certificates.
func NewCertificates(name, namespace string, etcd bool, now time.Time) (*Certificates, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		return nil, err
	}
	ca, err := certutil.NewSelfSignedCACert(certutil.Config{
		CommonName: fmt.Sprintf("%s.%s-ca@%d", name, namespace, now.Unix()),
		NotBefore:  now.Add(-time.Hour), // tolerate clocks a little behind
	}, caKey)
	if err != nil {
		return nil, err
	}
	caPEM, err := certutil.EncodeCertificates(ca)
	if err != nil {
		return nil, err
	}
	c := &Certificates{CA: caPEM}
	serviceNames := ServiceDNSNames(name, namespace)
	if c.Serving, err = issue(ca, caKey, serviceNames[2], serviceNames, nil, now, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	if etcd {
		// Served to clients and presented to the other members (peer TLS).
		server, err := issue(ca, caKey, EtcdName(name)+"."+namespace+".svc", etcdDNSNames(EtcdName(name), namespace),
			[]net.IP{net.IPv4(127, 0, 0, 1)}, now, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
		if err != nil {
			return nil, err
		}
		client, err := issue(ca, caKey, APIServerName(name), nil, nil, now, x509.ExtKeyUsageClientAuth)
		if err != nil {
			return nil, err
		}
		c.EtcdServer, c.EtcdClient = &server, &client
	}
	return c, nil
}

func issue(ca *x509.Certificate, caKey crypto.Signer, cn string, dns []string, ips []net.IP, now time.Time, usages ...x509.ExtKeyUsage) (KeyPair, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), cryptorand.Reader)
	if err != nil {
		return KeyPair{}, err
	}
	serial, err := cryptorand.Int(cryptorand.Reader, big.NewInt(math.MaxInt64))
	if err != nil {
		return KeyPair{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial.Add(serial, big.NewInt(1)),
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dns,
		IPAddresses:  ips,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(ServingValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  usages,
	}
	der, err := x509.CreateCertificate(cryptorand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return KeyPair{}, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return KeyPair{}, err
	}
	certPEM, err := certutil.EncodeCertificates(cert)
	if err != nil {
		return KeyPair{}, err
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		return KeyPair{}, err
	}
	return KeyPair{Cert: certPEM, Key: keyPEM}, nil
}

// Check tells why the certificates do not fit the deployment named name in
// namespace (with or without etcd) at now, or nil when they do: each
// verifies against the CA for its names and usage, matches its key, and has
// more than RenewBefore left.
func (c *Certificates) Check(name, namespace string, etcd bool, now time.Time) error {
	if etcd != (c.EtcdServer != nil && c.EtcdClient != nil) {
		if etcd {
			return errors.New("they have no etcd certificates")
		}
		return errors.New("they have etcd certificates, but the configuration runs no etcd (--etcd-servers or --datastore-endpoint-secret)")
	}
	cas, err := certutil.ParseCertsPEM(c.CA)
	if err != nil {
		return fmt.Errorf("ca.crt: %w", err)
	}
	roots := x509.NewCertPool()
	for _, ca := range cas {
		roots.AddCert(ca)
	}
	if err := verify(c.Serving, roots, ServiceDNSNames(name, namespace)[2], x509.ExtKeyUsageServerAuth, now); err != nil {
		return fmt.Errorf("the serving certificate: %w", err)
	}
	if etcd {
		if err := verify(*c.EtcdServer, roots, EtcdName(name)+"."+namespace+".svc", x509.ExtKeyUsageServerAuth, now); err != nil {
			return fmt.Errorf("the etcd server certificate: %w", err)
		}
		// Members present it to each other (peer TLS): client use too.
		if err := verify(*c.EtcdServer, roots, "", x509.ExtKeyUsageClientAuth, now); err != nil {
			return fmt.Errorf("the etcd server certificate, as a member's peer certificate: %w", err)
		}
		if err := verify(*c.EtcdClient, roots, "", x509.ExtKeyUsageClientAuth, now); err != nil {
			return fmt.Errorf("the etcd client certificate: %w", err)
		}
	}
	return nil
}

// VerifyServing checks that certPEM is valid for dnsName, signed by the PEM CA bundle.
func VerifyServing(certPEM, caBundle []byte, dnsName string, now time.Time) error {
	cas, err := certutil.ParseCertsPEM(caBundle)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	for _, ca := range cas {
		roots.AddCert(ca)
	}
	certs, err := certutil.ParseCertsPEM(certPEM)
	if err != nil {
		return err
	}
	_, err = certs[0].Verify(x509.VerifyOptions{DNSName: dnsName, Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

func verify(kp KeyPair, roots *x509.CertPool, dnsName string, usage x509.ExtKeyUsage, now time.Time) error {
	certs, err := certutil.ParseCertsPEM(kp.Cert)
	if err != nil {
		return err
	}
	cert := certs[0]
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: dnsName, Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{usage}}); err != nil {
		return err
	}
	if left := cert.NotAfter.Sub(now); left < RenewBefore {
		return fmt.Errorf("it expires on %s", cert.NotAfter.Format(time.DateOnly))
	}
	key, err := keyutil.ParsePrivateKeyPEM(kp.Key)
	if err != nil {
		return fmt.Errorf("its key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return errors.New("its key cannot sign")
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(cert.PublicKey) {
		return errors.New("its key does not match it")
	}
	return nil
}

// Expiry is when the serving certificate expires.
func (c *Certificates) Expiry() time.Time {
	certs, err := certutil.ParseCertsPEM(c.Serving.Cert)
	if err != nil {
		return time.Time{}
	}
	return certs[0].NotAfter
}
