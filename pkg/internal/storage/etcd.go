package storage

import (
	"errors"
	"fmt"
	"net/url"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/runlock"
)

// EmbeddedEtcd configures the etcd started in-process when no
// --etcd-servers is given: the default for local development.
type EmbeddedEtcd struct {
	DataDir    string
	ClientPort int
	PeerPort   int
}

// AddFlags registers --embedded-etcd-data-dir, --embedded-etcd-client-port
// and --embedded-etcd-peer-port on fs.
func (o *EmbeddedEtcd) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.DataDir, "embedded-etcd-data-dir", o.DataDir,
		"Data directory of the embedded etcd used when --etcd-servers is empty; objects survive restarts.")
	fs.IntVar(&o.ClientPort, "embedded-etcd-client-port", o.ClientPort,
		"Loopback client port of the embedded etcd (0 picks a free port).")
	fs.IntVar(&o.PeerPort, "embedded-etcd-peer-port", o.PeerPort,
		"Loopback peer port of the embedded etcd (0 picks a free port).")
}

// start runs etcd in this process, for the apiserver only: its client and
// peer listeners are on loopback and take only TLS clients with a
// certificate of its own CA, made in certDir at each start (etcd-*.crt,
// .key). It returns the client URL and the TLS files the apiserver connects
// with.
func (o *EmbeddedEtcd) start(certDir string) (*embed.Etcd, string, *etcdPKI, error) {
	if err := private.Dir(o.DataDir); err != nil {
		return nil, "", nil, fmt.Errorf("--embedded-etcd-data-dir: %w", err)
	}
	pki, err := newEtcdPKI(certDir)
	if err != nil {
		return nil, "", nil, fmt.Errorf("the embedded etcd's certificates in %s: %w", certDir, err)
	}
	// etcd waits for ever for the lock of a database another etcd has open
	// (an apiserver left running on the same data): say so at once.
	if who, _, held := runlock.HeldBy(datastore.EtcdDB(o.DataDir)); held {
		return nil, "", nil, fmt.Errorf("--embedded-etcd-data-dir %s is in use by %s, another apiserver on the same data?: stop it, or give another --embedded-etcd-data-dir, or --etcd-servers", o.DataDir, who)
	}
	// Ports left to us are picked afresh when another process took one
	// between the pick and etcd's listen; with a port given by flag, the
	// error names it.
	picked := o.ClientPort == 0 && o.PeerPort == 0
	for attempt := 1; ; attempt++ {
		opts := *o
		if err := opts.pickPorts(); err != nil {
			return nil, "", nil, err
		}
		e, endpoint, err := opts.listen(pki)
		if err != nil && picked && attempt < 5 && errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		o.ClientPort, o.PeerPort = opts.ClientPort, opts.PeerPort
		return e, endpoint, pki, err
	}
}

// pickPorts gives the ports left at 0 distinct free ports.
func (o *EmbeddedEtcd) pickPorts() error {
	free, err := freeport.Ports(2)
	if err != nil {
		return err
	}
	if o.ClientPort == 0 {
		o.ClientPort = free[0]
	}
	if o.PeerPort == 0 {
		o.PeerPort = free[1]
	}
	if o.ClientPort == o.PeerPort {
		return fmt.Errorf("--embedded-etcd-client-port and --embedded-etcd-peer-port are both %d: give them different ports, or 0 for free ones", o.ClientPort)
	}
	return nil
}

// listen starts etcd on the ports chosen, and waits until it is ready.
func (o *EmbeddedEtcd) listen(pki *etcdPKI) (*embed.Etcd, string, error) {
	cfg := embed.NewConfig()
	cfg.Name = "apiserver-boot"
	cfg.Dir = o.DataDir
	// etcd logs errors from its own listeners when closed on shutdown; start-up
	// failures are returned by Start and runtime failures surface as storage errors.
	cfg.LogLevel = "fatal"
	// One member on loopback: a 25 ms heartbeat tick (etcd's default is
	// 100 ms, election 1 s) makes a restart on existing data ready in about
	// 0.1 s instead of 0.4-1 s (the member waits out a randomised election
	// timeout before it leads), which every restart of run local and its
	// edit loop waited for. It costs about 0.6% more of a core while idle;
	// etcd's own request timeout follows the election (5 s + 2 elections:
	// 5.5 s instead of 7 s), and so does its shortest lease (1 s instead of
	// 2 s; the apiserver's are an hour). Nothing of it is stored.
	cfg.TickMs, cfg.ElectionMs = 25, 250
	client := url.URL{Scheme: "https", Host: fmt.Sprintf("127.0.0.1:%d", o.ClientPort)}
	peer := url.URL{Scheme: "https", Host: fmt.Sprintf("127.0.0.1:%d", o.PeerPort)}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{client}, []url.URL{client}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{peer}, []url.URL{peer}
	tls := transport.TLSInfo{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, TrustedCAFile: pki.CA, ClientCertAuth: true}
	cfg.ClientTLSInfo, cfg.PeerTLSInfo = tls, tls
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", fmt.Errorf("starting embedded etcd (ports from --embedded-etcd-client-port=%d, --embedded-etcd-peer-port=%d): %w", o.ClientPort, o.PeerPort, err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, "", fmt.Errorf("embedded etcd: %w", err)
	case <-time.After(60 * time.Second):
		e.Close()
		return nil, "", fmt.Errorf("embedded etcd in %s did not become ready in 60s", o.DataDir)
	}
	return e, client.String(), nil
}
