package storage

// copy-storage moves a project's objects from one backend to another (etcd
// to SQL through kine and back): every key under the storage prefix, read
// at one revision of the source, is created in an empty target with the
// same bytes, then both stores are read back and compared with what was
// copied. The objects keep everything in their stored value (uid,
// creationTimestamp, generation, managedFields, finalizers, labels, spec,
// status); their resourceVersion, which is not stored but is the key's
// revision in the backend (etcd's mod revision, kine's row id), is the one
// the target gives them.

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/runlock"
)

// CopyFlags name one backend of copy-storage, on one side ("from" or "to"):
// exactly one of an etcd cluster (with its TLS files), an embedded etcd's
// data directory, or a datastore endpoint (SQL through kine).
type CopyFlags struct {
	Side                      string
	EtcdServers               []string
	CAFile, CertFile, KeyFile string
	EmbeddedDataDir           string
	DatastoreEndpoint         string
	// DatastoreEndpointFile holds the endpoint, whose password is then in
	// no command line; read into DatastoreEndpoint by Validate.
	DatastoreEndpointFile string
}

// AddFlags registers the side's flags on fs: --<side>-etcd-servers and its
// TLS files, --<side>-embedded-etcd-data-dir, --<side>-datastore-endpoint
// and --<side>-datastore-endpoint-file.
func (s *CopyFlags) AddFlags(fs *pflag.FlagSet) {
	what := map[string]string{"from": "Source", "to": "Target"}[s.Side]
	p := s.Side + "-"
	fs.StringSliceVar(&s.EtcdServers, p+"etcd-servers", s.EtcdServers, what+": etcd servers to connect to (scheme://ip:port, comma separated), as the apiserver's --etcd-servers.")
	fs.StringVar(&s.CAFile, p+"etcd-cafile", s.CAFile, what+": SSL Certificate Authority file of the etcd servers, as --etcd-cafile.")
	fs.StringVar(&s.CertFile, p+"etcd-certfile", s.CertFile, what+": SSL certification file to present to the etcd servers, as --etcd-certfile.")
	fs.StringVar(&s.KeyFile, p+"etcd-keyfile", s.KeyFile, what+": SSL key file of --"+p+"etcd-certfile, as --etcd-keyfile.")
	fs.StringVar(&s.EmbeddedDataDir, p+"embedded-etcd-data-dir", s.EmbeddedDataDir, what+": the data directory of an embedded etcd, as --embedded-etcd-data-dir (run local's: .apiserver-boot/etcd), started in this process.")
	fs.StringVar(&s.DatastoreEndpoint, p+"datastore-endpoint", s.DatastoreEndpoint, what+": SQL through kine, as --datastore-endpoint: "+datastore.Forms+".")
	fs.StringVar(&s.DatastoreEndpointFile, p+"datastore-endpoint-file", s.DatastoreEndpointFile, what+": a file holding the --"+p+"datastore-endpoint URL, which keeps its password out of the command line.")
}

func (s *CopyFlags) flag(name string) string { return "--" + s.Side + "-" + name }

// Validate checks that one backend is named, and that a source exists.
func (s *CopyFlags) Validate() error {
	if err := s.readEndpointFile(); err != nil {
		return err
	}
	given := 0
	for _, set := range []bool{len(s.EtcdServers) > 0, s.EmbeddedDataDir != "", s.DatastoreEndpoint != ""} {
		if set {
			given++
		}
	}
	if given != 1 {
		return fmt.Errorf("give exactly one of %s, %s or %s (the %s store)", s.flag("etcd-servers"), s.flag("embedded-etcd-data-dir"), s.flag("datastore-endpoint"), map[string]string{"from": "source", "to": "target"}[s.Side])
	}
	if len(s.EtcdServers) == 0 && (s.CAFile != "" || s.CertFile != "" || s.KeyFile != "") {
		return fmt.Errorf("%s, %s and %s apply only with %s", s.flag("etcd-cafile"), s.flag("etcd-certfile"), s.flag("etcd-keyfile"), s.flag("etcd-servers"))
	}
	if s.DatastoreEndpoint != "" {
		if err := s.sql().Validate(); err != nil {
			return err
		}
	}
	if s.Side != "from" {
		return nil
	}
	// A source that does not exist would be created empty: say so instead.
	if dir := s.EmbeddedDataDir; dir != "" {
		if _, err := os.Stat(datastore.EtcdDB(dir)); err != nil {
			return fmt.Errorf("%s %s holds no etcd data (no member/snap/db): name the data directory of the apiserver's embedded etcd (run local's is .apiserver-boot/etcd)", s.flag("embedded-etcd-data-dir"), dir)
		}
	}
	if rest, ok := strings.CutPrefix(s.DatastoreEndpoint, "sqlite://"); ok {
		path, _, _ := strings.Cut(rest, "?")
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("%s %s: no database file %s", s.flag("datastore-endpoint"), datastore.Redact(s.DatastoreEndpoint), path)
		}
	}
	return nil
}

func (s *CopyFlags) readEndpointFile() error {
	if s.DatastoreEndpointFile == "" {
		return nil
	}
	if s.DatastoreEndpoint != "" {
		return fmt.Errorf("%s and %s both given: give the URL one way", s.flag("datastore-endpoint"), s.flag("datastore-endpoint-file"))
	}
	endpoint, err := readEndpointFile(s.Side+"-datastore-endpoint-file", s.DatastoreEndpointFile)
	if err != nil {
		return err
	}
	s.DatastoreEndpoint, s.DatastoreEndpointFile = endpoint, ""
	return nil
}

// sql is the side's SQL backend, with the server's defaults; its errors
// name the side's flag.
func (s *CopyFlags) sql() *SQL {
	o := NewSQL()
	o.Endpoint, o.flag = s.DatastoreEndpoint, s.Side+"-datastore-endpoint"
	return &o
}

// backend is the side's backend; an embedded etcd's certificates go in
// certDir.
func (s *CopyFlags) backend(certDir string) Backend {
	return Backend{
		SQL:             s.sql(),
		Etcd:            Etcd{Servers: s.EtcdServers, CAFile: s.CAFile, CertFile: s.CertFile, KeyFile: s.KeyFile},
		Embedded:        &EmbeddedEtcd{DataDir: s.EmbeddedDataDir},
		EmbeddedCertDir: certDir,
	}
}

// String names the backend for messages, without a password.
func (s *CopyFlags) String() string {
	switch {
	case s.EmbeddedDataDir != "":
		return "embedded etcd " + s.EmbeddedDataDir
	case s.DatastoreEndpoint != "":
		return "kine on " + datastore.Redact(s.DatastoreEndpoint)
	}
	return "etcd " + strings.Join(s.EtcdServers, ",")
}

// Open starts what the backend needs in this process (the embedded etcd as
// the apiserver starts it, or kine: Open of the package) and returns an
// etcd client to it, and the function that closes both. A backend in use by
// a running apiserver (the embedded etcd's database or the SQLite file
// locked) is refused.
func (s *CopyFlags) Open(ctx context.Context) (*clientv3.Client, func(), error) {
	certDir := ""
	if dir := s.EmbeddedDataDir; dir != "" {
		if who, _, held := runlock.HeldBy(datastore.EtcdDB(dir)); held {
			return nil, nil, fmt.Errorf("%s %s is in use by %s: stop the apiserver (run local) that serves it first, the copy needs the store at rest", s.flag("embedded-etcd-data-dir"), dir, who)
		}
		var err error
		if certDir, err = os.MkdirTemp("", "apiserver-copy-etcd-"); err != nil {
			return nil, nil, err
		}
	}
	etcd, stop, err := Open(ctx, s.backend(certDir))
	if err != nil {
		os.RemoveAll(certDir)
		switch {
		case s.EmbeddedDataDir != "":
			return nil, nil, fmt.Errorf("%s %s: %w", s.flag("embedded-etcd-data-dir"), s.EmbeddedDataDir, err)
		case s.DatastoreEndpoint != "":
			return nil, nil, fmt.Errorf("%w: stop the apiserver that serves it first, the copy needs the store at rest", err)
		}
		return nil, nil, err
	}
	cli, err := NewClient(etcd)
	if err != nil {
		stop()
		os.RemoveAll(certDir)
		if len(s.EtcdServers) > 0 {
			return nil, nil, fmt.Errorf("%s: %w", s.flag("etcd-servers"), err)
		}
		return nil, nil, err
	}
	return cli, func() { cli.Close(); stop(); os.RemoveAll(certDir) }, nil
}

// NewClient is an etcd client of etcd (kine's too: it speaks etcd's API),
// with etcd's TLS files when given.
func NewClient(etcd Etcd) (*clientv3.Client, error) {
	cfg := clientv3.Config{Endpoints: etcd.Servers, DialTimeout: 20 * time.Second, Logger: zap.NewNop(), MaxCallRecvMsgSize: math.MaxInt32}
	if etcd.CAFile != "" || etcd.CertFile != "" || etcd.KeyFile != "" {
		tls, err := transport.TLSInfo{CertFile: etcd.CertFile, KeyFile: etcd.KeyFile, TrustedCAFile: etcd.CAFile}.ClientConfig()
		if err != nil {
			return nil, err
		}
		cfg.TLS = tls
	}
	return clientv3.New(cfg)
}

// copyResult is what copyKeys copied.
type copyResult struct {
	// Revision is the source's revision the keys were read at.
	Revision int64
	Keys     int
	Bytes    int64
	// PerResource counts the keys of each resource (resource.group).
	PerResource map[string]int
}

// copyPageSize is how many keys one read of the source returns.
const copyPageSize = 100

// copyKeys copies every key under prefix from src, read at one revision,
// into dst, which must hold no key under prefix; then it reads both back
// and compares every key's bytes with what was copied. A key with a lease
// gets a lease of the remaining time to live in dst. kine's own health key
// (/registry/health, written by kine at start) and the adoption floors
// (AdoptionFloors: revisions of the source, which mean nothing in the
// target, where every object has a new revision) are neither copied nor
// counted.
func copyKeys(ctx context.Context, src, dst *clientv3.Client, prefix string) (*copyResult, error) {
	prefix = strings.TrimSuffix(prefix, "/") + "/"
	if err := checkEmpty(ctx, dst, prefix); err != nil {
		return nil, err
	}
	res := &copyResult{PerResource: map[string]int{}}
	sums := map[string][sha256.Size]byte{}
	leases := map[int64]clientv3.LeaseID{}
	rev, err := eachKey(ctx, src, prefix, 0, func(kv *mvccpb.KeyValue) error {
		var opts []clientv3.OpOption
		if kv.Lease != 0 {
			lease, err := copyLease(ctx, src, dst, kv.Lease, leases)
			if err != nil {
				return fmt.Errorf("the lease of %s: %w", kv.Key, err)
			}
			opts = append(opts, clientv3.WithLease(lease))
		}
		key := string(kv.Key)
		r, err := dst.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).Then(clientv3.OpPut(key, string(kv.Value), opts...)).Commit()
		if err != nil {
			return fmt.Errorf("the target, writing %s: %w", key, err)
		}
		if !r.Succeeded {
			return fmt.Errorf("the target: %s was written by another writer during the copy: stop whatever uses the target, empty it and copy again", key)
		}
		sums[key] = sha256.Sum256(kv.Value)
		res.Keys++
		res.Bytes += int64(len(kv.Value))
		res.PerResource[resourceOf(prefix, key)]++
		return nil
	})
	res.Revision = rev
	if err != nil {
		return res, err
	}
	if err := compareKeys(ctx, dst, prefix, sums); err != nil {
		return res, fmt.Errorf("the target differs from the source after the copy: %w", err)
	}
	if err := compareKeys(ctx, src, prefix, sums); err != nil {
		return res, fmt.Errorf("the source changed during the copy (%w): an apiserver still writes to it; stop it, empty the target and copy again", err)
	}
	return res, nil
}

// checkEmpty refuses a target that holds a key under prefix.
func checkEmpty(ctx context.Context, cli *clientv3.Client, prefix string) error {
	var keys []string
	errFull := errors.New("enough")
	_, err := eachKey(ctx, cli, prefix, 0, func(kv *mvccpb.KeyValue) error {
		keys = append(keys, string(kv.Key))
		if len(keys) == 3 {
			return errFull
		}
		return nil
	})
	if err != nil && !errors.Is(err, errFull) {
		return fmt.Errorf("the target: %w", err)
	}
	if len(keys) > 0 {
		return fmt.Errorf("the target is not empty: it holds %s under %s: copy into a new store (a new data directory, database or SQLite file), nothing was written", strings.Join(keys, ", "), prefix)
	}
	return nil
}

// eachKey calls fn with every key under prefix, in key order, read in
// pages at revision rev (0: the current one, whose number it returns),
// except kine's health key and the adoption floors.
func eachKey(ctx context.Context, cli *clientv3.Client, prefix string, rev int64, fn func(*mvccpb.KeyValue) error) (int64, error) {
	end := clientv3.GetPrefixRangeEnd(prefix)
	floors := AdoptionFloors(prefix)
	key := prefix
	for {
		opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithLimit(copyPageSize)}
		if rev > 0 {
			opts = append(opts, clientv3.WithRev(rev))
		}
		tctx, cancel := context.WithTimeout(ctx, time.Minute)
		resp, err := cli.Get(tctx, key, opts...)
		cancel()
		if err != nil {
			return rev, err
		}
		if rev == 0 {
			rev = resp.Header.Revision
		}
		for _, kv := range resp.Kvs {
			if string(kv.Key) == kineHealthKey || strings.HasPrefix(string(kv.Key), floors) {
				continue
			}
			if err := fn(kv); err != nil {
				return rev, err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return rev, nil
		}
		key = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}

// compareKeys reads every key under prefix and compares it with sums: the
// same keys, the same bytes.
func compareKeys(ctx context.Context, cli *clientv3.Client, prefix string, sums map[string][sha256.Size]byte) error {
	seen := map[string]bool{}
	_, err := eachKey(ctx, cli, prefix, 0, func(kv *mvccpb.KeyValue) error {
		want, ok := sums[string(kv.Key)]
		if !ok {
			return fmt.Errorf("%s is there but was not copied", kv.Key)
		}
		if sha256.Sum256(kv.Value) != want {
			return fmt.Errorf("%s does not hold the copied bytes", kv.Key)
		}
		seen[string(kv.Key)] = true
		return nil
	})
	if err != nil {
		return err
	}
	for key := range sums {
		if !seen[key] {
			return fmt.Errorf("%s is missing", key)
		}
	}
	return nil
}

// copyLease grants in dst, once per lease of src, a lease of the time the
// source's has left. kine answers no TimeToLive: its lease IDs are their
// TTL in seconds.
func copyLease(ctx context.Context, src, dst *clientv3.Client, id int64, leases map[int64]clientv3.LeaseID) (clientv3.LeaseID, error) {
	if to, ok := leases[id]; ok {
		return to, nil
	}
	ttl := id
	if r, err := src.TimeToLive(ctx, clientv3.LeaseID(id)); err == nil {
		ttl = r.TTL
	}
	if ttl < 1 {
		ttl = 1
	}
	g, err := dst.Grant(ctx, ttl)
	if err != nil {
		return 0, err
	}
	leases[id] = g.ID
	return g.ID, nil
}

// resourceOf names the resource of a key: <prefix><group>/<resource>/…
// (resource.group) or <prefix><resource>/… for the core group.
func resourceOf(prefix, key string) string {
	parts := strings.Split(strings.TrimPrefix(key, prefix), "/")
	if len(parts) > 2 && strings.Contains(parts[0], ".") {
		return parts[1] + "." + parts[0]
	}
	return parts[0]
}

// printCopy writes what was copied, resource by resource.
func printCopy(w io.Writer, res *copyResult, from, to *CopyFlags, prefix string) {
	fmt.Fprintf(w, "copied %d keys (%d bytes) under %s from %s at revision %d to %s; read back from both and compared: identical\n",
		res.Keys, res.Bytes, prefix, from, res.Revision, to)
	names := make([]string, 0, len(res.PerResource))
	for name := range res.PerResource {
		names = append(names, name)
	}
	sort.Strings(names)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RESOURCE\tKEYS")
	for _, name := range names {
		fmt.Fprintf(tw, "%s\t%d\n", name, res.PerResource[name])
	}
	tw.Flush()
	fmt.Fprintln(w, "Objects keep their uid, creationTimestamp, managedFields, finalizers and every other field; their resourceVersion is now the target's revision: clients and informers relist.")
}

// NewCopyCommand returns `apiserver copy-storage`, whose --etcd-prefix
// defaults to prefix (the server's).
func NewCopyCommand(prefix string) *cobra.Command {
	from, to := &CopyFlags{Side: "from"}, &CopyFlags{Side: "to"}
	cmd := &cobra.Command{
		Use:   "copy-storage",
		Short: "Copy every stored object from one store to another (etcd, embedded etcd, SQL through kine) while the apiserver is stopped",
		Long: `Copy every key under --etcd-prefix from a stopped apiserver's store to an empty one, at one
revision of the source and byte for byte, then read both back and compare. Objects keep their uid
and every other field; their resourceVersion becomes the target's revision, so clients relist.
Stop every apiserver on the source first: a running embedded etcd or SQLite file is refused, and a
source that changes during the copy fails the check.`,
		Example: `  # run local's embedded etcd to SQLite, and back into a new data directory
  apiserver copy-storage --from-embedded-etcd-data-dir .apiserver-boot/etcd --to-datastore-endpoint sqlite://.apiserver-boot/state.db
  apiserver copy-storage --from-datastore-endpoint sqlite://.apiserver-boot/state.db --to-embedded-etcd-data-dir .apiserver-boot/etcd-new
  # an etcd cluster to Postgres
  apiserver copy-storage --from-etcd-servers https://etcd:2379 --from-etcd-cafile ca.crt --from-etcd-certfile tls.crt --from-etcd-keyfile tls.key \
    --to-datastore-endpoint postgres://crontab:PASSWORD@db.example.com:5432/crontab`,
		Args:         cobra.NoArgs,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCopyStorage(cmd.Context(), cmd.OutOrStdout(), from, to, prefix)
		},
	}
	from.AddFlags(cmd.Flags())
	to.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&prefix, "etcd-prefix", prefix, "The prefix of the apiserver's keys in both stores, as the apiserver's --etcd-prefix.")
	return cmd
}

func runCopyStorage(ctx context.Context, out io.Writer, from, to *CopyFlags, prefix string) error {
	if ctx == nil {
		ctx = context.Background()
	}
	for _, s := range []*CopyFlags{from, to} {
		if err := s.Validate(); err != nil {
			return err
		}
	}
	if from.String() == to.String() {
		return fmt.Errorf("the source and the target are both %s: copy into another store", from)
	}
	if !strings.HasPrefix(prefix, "/") {
		return fmt.Errorf("--etcd-prefix %q: want the apiserver's prefix, starting with / (default /registry)", prefix)
	}
	src, stopSrc, err := from.Open(ctx)
	if err != nil {
		return err
	}
	defer stopSrc()
	dst, stopDst, err := to.Open(ctx)
	if err != nil {
		return err
	}
	defer stopDst()
	res, err := copyKeys(ctx, src, dst, prefix)
	if err != nil {
		return fmt.Errorf("copying from %s to %s: %w", from, to, err)
	}
	printCopy(out, res, from, to, strings.TrimSuffix(prefix, "/")+"/")
	return nil
}

// kineHealthKey is the key kine writes at start for its health check
// (github.com/k3s-io/kine/pkg/server.HealthKey), spelled here so that the
// copy does not import kine's server (a build without kine, run local's on
// etcd, leaves the kine files out).
const kineHealthKey = "/registry/health"
