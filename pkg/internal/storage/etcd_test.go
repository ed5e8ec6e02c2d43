package storage

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	certutil "k8s.io/client-go/util/cert"
)

// TestEmbeddedEtcdAcceptsOnlyTheApiserver: the embedded etcd takes no plain
// HTTP client, no TLS client without a certificate of its own CA, over HTTP
// or gRPC, on its client or its peer port; the apiserver's certificate
// reads and writes. Its keys are the owner's only.
func TestEmbeddedEtcdAcceptsOnlyTheApiserver(t *testing.T) {
	dir := t.TempDir()
	o := &EmbeddedEtcd{DataDir: filepath.Join(dir, "etcd")}
	e, url, pki, err := o.start(filepath.Join(dir, "certs"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !strings.HasPrefix(url, "https://127.0.0.1:") {
		t.Errorf("client URL %s: want https on loopback", url)
	}
	for _, key := range []string{pki.ServerKey, pki.ClientKey} {
		if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want mode 0600", key, err)
		}
	}
	peer := fmt.Sprintf("https://127.0.0.1:%d", o.PeerPort)

	// Plain HTTP, on either port (etcd's gRPC gateway serves /v3/kv/range over HTTP).
	plain := &http.Client{Timeout: 5 * time.Second}
	for _, base := range []string{url, peer} {
		httpURL := "http://" + strings.TrimPrefix(base, "https://")
		if resp, err := plain.Post(httpURL+"/v3/kv/range", "application/json", strings.NewReader(`{"key":"Lw=="}`)); err == nil {
			if resp.StatusCode == http.StatusOK {
				t.Errorf("plain HTTP to %s: 200", httpURL)
			}
			resp.Body.Close()
		}
	}
	// TLS that trusts etcd but has no client certificate.
	caOnly, err := transport.TLSInfo{TrustedCAFile: pki.CA}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	noCert := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: caOnly}}
	for _, base := range []string{url, peer} {
		if resp, err := noCert.Post(base+"/v3/kv/range", "application/json", strings.NewReader(`{"key":"Lw=="}`)); err == nil {
			resp.Body.Close()
			t.Errorf("HTTPS without a client certificate to %s: %s", base, resp.Status)
		}
	}
	// A certificate of another CA (the apiserver's self-signed serving pair).
	otherCert, otherKey, err := certutil.GenerateSelfSignedCertKey("localhost", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	other, err := tls.X509KeyPair(otherCert, otherKey)
	if err != nil {
		t.Fatal(err)
	}
	otherCfg := caOnly.Clone()
	otherCfg.Certificates = []tls.Certificate{other}
	plaintext := "http://" + strings.TrimPrefix(url, "https://") // gRPC without TLS
	for name, c := range map[string]struct {
		endpoint string
		tls      *tls.Config
	}{"no client certificate": {url, caOnly}, "another CA's certificate": {url, otherCfg}, "no TLS": {plaintext, nil}} {
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.endpoint}, TLS: c.tls, DialTimeout: 2 * time.Second})
		if err != nil {
			continue // refused at dial: what we want
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		if _, err := cli.Put(ctx, "/registry/x", "y"); err == nil {
			t.Errorf("gRPC with %s wrote to etcd", name)
		}
		if _, err := cli.Get(ctx, "/registry/", clientv3.WithPrefix()); err == nil {
			t.Errorf("gRPC with %s read etcd", name)
		}
		cancel()
		cli.Close()
	}

	// The apiserver's certificate reads and writes.
	apiserverTLS, err := transport.TLSInfo{CertFile: pki.ClientCert, KeyFile: pki.ClientKey, TrustedCAFile: pki.CA}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, TLS: apiserverTLS, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "/registry/x", "y"); err != nil {
		t.Fatalf("the apiserver's certificate: %v", err)
	}
	if resp, err := cli.Get(ctx, "/registry/x"); err != nil || len(resp.Kvs) != 1 {
		t.Fatalf("the apiserver's certificate: %v %v", resp, err)
	}

	// Another start in the same project (a second apiserver, a restart)
	// keeps the valid PKI: the running etcd and its clients go on.
	ca, _ := os.ReadFile(pki.CA)
	if _, err := newEtcdPKI(filepath.Join(dir, "certs")); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(pki.CA); string(again) != string(ca) {
		t.Errorf("a second start replaced the valid CA the running etcd trusts")
	}
	if _, err := cli.Get(ctx, "/registry/x"); err != nil {
		t.Errorf("after a second start: %v", err)
	}
	// An incomplete or opened PKI is made anew.
	os.Chmod(pki.ClientKey, 0o644)
	if _, err := newEtcdPKI(filepath.Join(dir, "certs")); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.ReadFile(pki.CA); string(again) == string(ca) {
		t.Errorf("a client key others may read was kept")
	}
	if st, _ := os.Stat(pki.ClientKey); st.Mode().Perm() != 0o600 {
		t.Errorf("the new client key has mode %04o", st.Mode().Perm())
	}
}

// TestEmbeddedEtcdKeepsDataOfPlainHTTPBuilds: a data folder an earlier
// build's embedded etcd wrote (plain HTTP listeners, peer on another port)
// is read by this build's, TLS only.
func TestEmbeddedEtcdKeepsDataOfPlainHTTPBuilds(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "etcd")
	// As the earlier build configured it.
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir, cfg.LogLevel = "apiserver-boot", data, "fatal"
	clientPort, _ := freeport.Port()
	peerPort, _ := freeport.Port()
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", clientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", peerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	old, err := embed.StartEtcd(cfg)
	if err != nil {
		t.Fatal(err)
	}
	<-old.Server.ReadyNotify()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{client.String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "/registry/stable.example.com/crontabs/default/old", "stored before TLS"); err != nil {
		t.Fatal(err)
	}
	cli.Close()
	old.Close()

	o := &EmbeddedEtcd{DataDir: data}
	e, endpoint, pki, err := o.start(filepath.Join(dir, "certs"))
	if err != nil {
		t.Fatalf("this build on the earlier build's data: %v", err)
	}
	defer e.Close()
	tlsConfig, err := transport.TLSInfo{CertFile: pki.ClientCert, KeyFile: pki.ClientKey, TrustedCAFile: pki.CA}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err = clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, TLS: tlsConfig, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	resp, err := cli.Get(ctx, "/registry/stable.example.com/crontabs/default/old")
	if err != nil || len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "stored before TLS" {
		t.Fatalf("the earlier build's data, read by this one: %v %v", resp, err)
	}
}

// TestEmbeddedEtcdInUse: a second embedded etcd on data another one has
// open fails at once, naming the process that holds it, instead of waiting
// for its lock for ever.
func TestEmbeddedEtcdInUse(t *testing.T) {
	dir := t.TempDir()
	o := &EmbeddedEtcd{DataDir: filepath.Join(dir, "etcd")}
	e, _, _, err := o.start(filepath.Join(dir, "certs"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	second := &EmbeddedEtcd{DataDir: o.DataDir}
	done := make(chan error, 1)
	go func() {
		e2, _, _, err := second.start(filepath.Join(dir, "certs2"))
		if e2 != nil {
			e2.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		want := fmt.Sprintf("--embedded-etcd-data-dir %s is in use by process %d", o.DataDir, os.Getpid())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("second Start: %v, want an error containing %q", err, want)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the second embedded etcd on the same data waited 15s instead of failing")
	}
}

// TestEmbeddedEtcdPortTaken: a taken port given by flag is named with its
// flag and reported as in use (the error Start retries on when it picked
// the ports itself).
func TestEmbeddedEtcdPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	dir := t.TempDir()
	o := &EmbeddedEtcd{DataDir: filepath.Join(dir, "etcd"), ClientPort: taken}
	e, _, _, err := o.start(filepath.Join(dir, "certs"))
	if err == nil {
		e.Close()
		t.Fatalf("etcd started on taken port %d", taken)
	}
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), fmt.Sprintf("--embedded-etcd-client-port=%d", taken)) {
		t.Fatalf("want an address-in-use error naming --embedded-etcd-client-port=%d, got %v", taken, err)
	}
	o = &EmbeddedEtcd{DataDir: filepath.Join(dir, "etcd2"), ClientPort: taken, PeerPort: taken}
	if _, _, _, err := o.start(filepath.Join(dir, "certs")); err == nil || !strings.Contains(err.Error(), "give them different ports") {
		t.Fatalf("same client and peer port: %v", err)
	}
}
