package storage

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
)

// SQL configures the backend of --datastore-endpoint, SQL through kine
// (github.com/k3s-io/kine): the apiserver's objects in a SQL database
// instead of etcd (defaults: NewSQL). kine runs in this process and
// speaks the part of etcd's API that k8s.io/apiserver's etcd3 storage uses,
// on a unix socket in a private (0700) folder: nobody but this process
// reaches it.
type SQL struct {
	// Endpoint is --datastore-endpoint: postgres://…, mysql://… or
	// sqlite://PATH; empty stores in etcd.
	Endpoint string
	// EndpointFile is --datastore-endpoint-file: a file holding the
	// endpoint (a mounted Secret), so that its password is in no process's
	// command line; read into Endpoint by ReadEndpointFile.
	EndpointFile string
	// ConnectTimeout bounds the check that the database answers and takes
	// the credentials, before anything starts.
	ConnectTimeout time.Duration
	// CompactMinRetain is how many of the latest revisions kine keeps
	// through a compaction (kine's default, 1000; not a flag). Reads and
	// watches below the apiserver's compaction are refused all the same, as
	// etcd refuses them (compactFloor).
	CompactMinRetain int64
	// Replicas is --datastore-replicas: how many apiserver processes share
	// the database (build config sets it to the Deployment's replicas).
	// SQLite serves one process: more is refused before anything starts.
	// 0 is taken as 1.
	Replicas int
	// flag is the flag errors name; empty is --datastore-endpoint
	// (copy-storage's are --from-datastore-endpoint, --to-datastore-endpoint).
	flag string
}

// AddFlags registers --datastore-endpoint, --datastore-endpoint-file,
// --datastore-connect-timeout and --datastore-replicas on fs.
func (o *SQL) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Endpoint, "datastore-endpoint", o.Endpoint,
		"Store objects in SQL through kine instead of etcd: "+datastore.Forms+" (SQLite: one apiserver process only). "+
			"Excludes --etcd-servers and the embedded etcd.")
	fs.StringVar(&o.EndpointFile, "datastore-endpoint-file", o.EndpointFile,
		"A file holding the --datastore-endpoint URL (e.g. a mounted Secret's key), which keeps its password out of the command line.")
	fs.DurationVar(&o.ConnectTimeout, "datastore-connect-timeout", o.ConnectTimeout,
		"How long to wait for the database of --datastore-endpoint to answer at start before giving up.")
	fs.IntVar(&o.Replicas, "datastore-replicas", o.Replicas,
		"How many apiserver processes share the --datastore-endpoint database (build config sets it to its --replicas); sqlite:// serves one.")
}

// ReadEndpointFile reads --datastore-endpoint-file into Endpoint; both
// flags given is an error. Reading again after a first read changes nothing.
func (o *SQL) ReadEndpointFile(fs *pflag.FlagSet) error {
	if o.EndpointFile == "" {
		return nil
	}
	if fs != nil && fs.Changed("datastore-endpoint") {
		return errors.New("--datastore-endpoint and --datastore-endpoint-file both given: give the URL one way (the file keeps its password out of the command line)")
	}
	endpoint, err := readEndpointFile("datastore-endpoint-file", o.EndpointFile)
	if err != nil {
		return err
	}
	o.Endpoint = endpoint
	return nil
}

// Validate checks the endpoint's form; whether the database answers is
// checked when it starts.
func (o *SQL) Validate() error {
	if o.Endpoint == "" {
		return nil
	}
	if err := datastore.Validate(o.Endpoint); err != nil {
		if o.flag != "" {
			return errors.New(strings.Replace(err.Error(), "--datastore-endpoint ", "--"+o.flag+" ", 1))
		}
		return err
	}
	if o.ConnectTimeout <= 0 {
		return fmt.Errorf("--datastore-connect-timeout must be positive, e.g. 10s")
	}
	if o.Replicas < 0 {
		return fmt.Errorf("--datastore-replicas must be 1 or more, not %d", o.Replicas)
	}
	if o.Replicas > 1 && strings.HasPrefix(o.Endpoint, "sqlite://") {
		return o.datastoreError("SQLite serves one apiserver process, and --datastore-replicas is %d: each replica would hold its own file and answer differently. "+
			"Use a database the replicas share (postgres://… or mysql://…), or run one replica (build config --replicas 1)", o.Replicas)
	}
	return o.builtWithKine()
}

// datastoreError names the flag with the endpoint redacted, and scrubs the
// password from what the driver said.
func (o *SQL) datastoreError(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	for _, p := range datastore.Secrets(o.Endpoint) {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
		if u, err := url.PathUnescape(p); err == nil && u != p && u != "" {
			msg = strings.ReplaceAll(msg, u, "xxxxx")
		}
	}
	flag := o.flag
	if flag == "" {
		flag = "datastore-endpoint"
	}
	return fmt.Errorf("--%s %s: %s", flag, datastore.Redact(o.Endpoint), msg)
}

// kine is kine running in this process.
type kine struct {
	// Endpoint is the etcd client URL of its private socket (unix:///…).
	Endpoint string
	stop     func()
}

// Stop stops serving, closes the database and removes the socket.
func (k *kine) Stop() {
	if k != nil && k.stop != nil {
		k.stop()
		k.stop = nil
	}
}
