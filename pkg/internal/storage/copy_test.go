package storage

import (
	kineserver "github.com/k3s-io/kine/pkg/server"

	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// storedKeys are keys as a generated apiserver writes them: several
// resources of several groups, namespaced and cluster-scoped, protobuf
// (binary) and JSON values, and one value near etcd's request limit.
func storedKeys(t *testing.T) map[string][]byte {
	large := make([]byte, 1<<20)
	if _, err := rand.Read(large); err != nil {
		t.Fatal(err)
	}
	keys := map[string][]byte{
		"/registry/stable.example.com/crontabs/default/large": large,
		"/registry/stable.example.com/calendars/c1":           []byte(`{"kind":"Calendar","metadata":{"name":"c1","uid":"u-c1"}}`),
		"/registry/ops.example.com/backups/team-a/b1":         []byte("k8s\x00\n\x0fops.example.com/v1\x12\x06Backup\xff\xfe"),
		"/registry/namespaces/team-a":                         []byte(`{"kind":"Namespace","metadata":{"name":"team-a","uid":"u-ns"}}`),
	}
	for i := range 250 { // more than two pages
		keys[fmt.Sprintf("/registry/stable.example.com/crontabs/default/c%03d", i)] = []byte(fmt.Sprintf(`{"kind":"CronTab","metadata":{"name":"c%03d","uid":"u-%d","finalizers":["x"]}}`, i, i))
	}
	return keys
}

func openStore(t *testing.T, s *CopyFlags) (*clientv3.Client, func()) {
	t.Helper()
	cli, stop, err := s.Open(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return cli, stop
}

// readStore returns every key of the store but kine's health key, and the
// lease of the leased key.
func readStore(t *testing.T, s *CopyFlags) (map[string][]byte, int64) {
	t.Helper()
	cli, stop := openStore(t, s)
	defer stop()
	got := map[string][]byte{}
	var ttl int64
	if _, err := eachKey(t.Context(), cli, "/", 0, func(kv *mvccpb.KeyValue) error {
		got[string(kv.Key)] = kv.Value
		if kv.Lease != 0 {
			if r, err := cli.TimeToLive(t.Context(), clientv3.LeaseID(kv.Lease)); err == nil {
				ttl = r.TTL
			} else {
				ttl = kv.Lease // kine: the lease ID is its TTL
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got, ttl
}

func sameKeys(t *testing.T, where string, got, want map[string][]byte) {
	t.Helper()
	for k, v := range want {
		if !bytes.Equal(got[k], v) {
			t.Errorf("%s: %s is %d bytes, want the %d copied", where, k, len(got[k]), len(v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s should not be there", where, k)
		}
	}
}

// TestCopyStorage copies an embedded etcd's keys into kine on SQLite and
// from there into a new embedded etcd: every key under the prefix, byte
// for byte, a leased key with its lease, nothing outside the prefix, and
// no adoption floor.
func TestCopyStorage(t *testing.T) {
	dir := t.TempDir()
	etcdDir, etcdDir2 := filepath.Join(dir, "etcd"), filepath.Join(dir, "etcd2")
	sqlite := "sqlite://" + filepath.Join(dir, "state.db")
	want := storedKeys(t)

	cli, stop := openStore(t, &CopyFlags{Side: "to", EmbeddedDataDir: etcdDir})
	for k, v := range want {
		if _, err := cli.Put(t.Context(), k, string(v)); err != nil {
			t.Fatal(err)
		}
	}
	lease, err := cli.Grant(t.Context(), 600)
	if err != nil {
		t.Fatal(err)
	}
	want["/registry/stable.example.com/crontabs/default/leased"] = []byte("leased")
	if _, err := cli.Put(t.Context(), "/registry/stable.example.com/crontabs/default/leased", "leased", clientv3.WithLease(lease.ID)); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"/other/x", "compact_rev_key", "/registryx/y"} {
		if _, err := cli.Put(t.Context(), k, "outside"); err != nil {
			t.Fatal(err)
		}
	}
	// An adoption floor is a revision of this store: not copied (readStore
	// reads every key, so sameKeys finds it if it was).
	if _, err := cli.Put(t.Context(), AdoptionFloors("/registry")+"stable.example.com/crontabs", "913"); err != nil {
		t.Fatal(err)
	}
	stop()

	var out bytes.Buffer
	if err := runCopyStorage(context.Background(), &out, &CopyFlags{Side: "from", EmbeddedDataDir: etcdDir}, &CopyFlags{Side: "to", DatastoreEndpoint: sqlite}, "/registry"); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{`copied 255 keys`, `crontabs.stable.example.com +252\n`, `backups.ops.example.com +1\n`, `calendars.stable.example.com +1\n`, `namespaces +1\n`} {
		if !regexp.MustCompile(line).MatchString(out.String()) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
	got, ttl := readStore(t, &CopyFlags{Side: "from", DatastoreEndpoint: sqlite})
	sameKeys(t, "SQLite", got, want)
	if ttl <= 0 || ttl > 600 {
		t.Errorf("SQLite: the leased key's TTL is %d, want (0, 600]", ttl)
	}

	out.Reset()
	endpointFile := filepath.Join(dir, "endpoint")
	if err := os.WriteFile(endpointFile, []byte(sqlite+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := runCopyStorage(context.Background(), &out, &CopyFlags{Side: "from", DatastoreEndpointFile: endpointFile}, &CopyFlags{Side: "to", EmbeddedDataDir: etcdDir2}, "/registry/"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "copied 255 keys") {
		t.Errorf("output:\n%s", out.String())
	}
	got, ttl = readStore(t, &CopyFlags{Side: "from", EmbeddedDataDir: etcdDir2})
	sameKeys(t, "the second etcd", got, want)
	if ttl <= 0 || ttl > 600 {
		t.Errorf("the second etcd: the leased key's TTL is %d, want (0, 600]", ttl)
	}

	// The read-back check finds a changed, a missing and an extra key.
	sums := map[string][sha256.Size]byte{}
	for k, v := range want {
		sums[k] = sha256.Sum256(v)
	}
	cli, stop = openStore(t, &CopyFlags{Side: "from", EmbeddedDataDir: etcdDir2})
	defer stop()
	if err := compareKeys(t.Context(), cli, "/registry/", sums); err != nil {
		t.Fatal(err)
	}
	const c7 = "/registry/stable.example.com/crontabs/default/c007"
	for _, c := range []struct {
		op   clientv3.Op
		undo clientv3.Op
		want string
	}{
		{clientv3.OpPut(c7, "changed"), clientv3.OpPut(c7, string(want[c7])), c7 + " does not hold the copied bytes"},
		{clientv3.OpDelete(c7), clientv3.OpPut(c7, string(want[c7])), c7 + " is missing"},
		{clientv3.OpPut("/registry/x/y", "new"), clientv3.OpDelete("/registry/x/y"), "/registry/x/y is there but was not copied"},
	} {
		if _, err := cli.Do(t.Context(), c.op); err != nil {
			t.Fatal(err)
		}
		if err := compareKeys(t.Context(), cli, "/registry/", sums); err == nil || err.Error() != c.want {
			t.Errorf("compare: %v, want %q", err, c.want)
		}
		if _, err := cli.Do(t.Context(), c.undo); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCopyStorageRefuses: a target holding keys under the prefix, a
// source in use by a running apiserver (its embedded etcd or SQLite file
// locked), a source that does not exist and flags that name no store or
// two are refused before anything is written, naming the flag or the keys.
func TestCopyStorageRefuses(t *testing.T) {
	dir := t.TempDir()
	etcdDir := filepath.Join(dir, "etcd")
	sqlite := "sqlite://" + filepath.Join(dir, "state.db")
	cli, stop := openStore(t, &CopyFlags{Side: "to", EmbeddedDataDir: etcdDir})
	if _, err := cli.Put(t.Context(), "/registry/stable.example.com/crontabs/default/a", "a"); err != nil {
		t.Fatal(err)
	}
	stop()
	cli, stop = openStore(t, &CopyFlags{Side: "to", DatastoreEndpoint: sqlite})
	if _, err := cli.Put(t.Context(), "/registry/stable.example.com/crontabs/default/old", "old"); err != nil {
		t.Fatal(err)
	}
	stop()

	copyErr := func(from, to *CopyFlags) string {
		err := runCopyStorage(context.Background(), &bytes.Buffer{}, from, to, "/registry")
		if err == nil {
			t.Fatalf("copy from %s to %s: no error", from, to)
		}
		return err.Error()
	}
	fromEtcd := &CopyFlags{Side: "from", EmbeddedDataDir: etcdDir}
	toSQLite := &CopyFlags{Side: "to", DatastoreEndpoint: sqlite}
	if msg := copyErr(fromEtcd, toSQLite); !strings.Contains(msg, "the target is not empty: it holds /registry/stable.example.com/crontabs/default/old under /registry/") {
		t.Errorf("a non-empty target: %s", msg)
	}
	got, _ := readStore(t, &CopyFlags{Side: "from", DatastoreEndpoint: sqlite})
	if _, ok := got["/registry/stable.example.com/crontabs/default/a"]; ok || len(got) != 1 {
		t.Errorf("the refused target was written: %v", got)
	}

	// A running source: its embedded etcd, then its SQLite file, held.
	_, stopSrc := openStore(t, fromEtcd)
	if msg := copyErr(fromEtcd, &CopyFlags{Side: "to", EmbeddedDataDir: filepath.Join(dir, "new")}); !strings.Contains(msg, "--from-embedded-etcd-data-dir "+etcdDir+" is in use by process") {
		t.Errorf("a running embedded etcd: %s", msg)
	}
	stopSrc()
	_, stopSrc = openStore(t, &CopyFlags{Side: "from", DatastoreEndpoint: sqlite})
	if msg := copyErr(&CopyFlags{Side: "from", DatastoreEndpoint: sqlite}, &CopyFlags{Side: "to", EmbeddedDataDir: filepath.Join(dir, "new")}); !strings.Contains(msg, "--from-datastore-endpoint "+sqlite+": ") || !strings.Contains(msg, "is in use by process") {
		t.Errorf("a running SQLite source: %s", msg)
	}
	stopSrc()

	for _, c := range []struct {
		from, to *CopyFlags
		want     string
	}{
		{&CopyFlags{Side: "from"}, toSQLite, "give exactly one of --from-etcd-servers, --from-embedded-etcd-data-dir or --from-datastore-endpoint (the source store)"},
		{&CopyFlags{Side: "from", EmbeddedDataDir: etcdDir, DatastoreEndpoint: sqlite}, toSQLite, "give exactly one of --from-etcd-servers"},
		{&CopyFlags{Side: "from", EmbeddedDataDir: filepath.Join(dir, "none")}, toSQLite, "--from-embedded-etcd-data-dir " + filepath.Join(dir, "none") + " holds no etcd data"},
		{&CopyFlags{Side: "from", DatastoreEndpoint: "sqlite://" + filepath.Join(dir, "none.db")}, toSQLite, "no database file"},
		{fromEtcd, &CopyFlags{Side: "to", DatastoreEndpoint: "oracle://x"}, `--to-datastore-endpoint oracle://x: unknown scheme "oracle"`},
		{fromEtcd, &CopyFlags{Side: "to", EmbeddedDataDir: etcdDir}, "the source and the target are both embedded etcd " + etcdDir},
		{fromEtcd, &CopyFlags{Side: "to", DatastoreEndpoint: sqlite, DatastoreEndpointFile: "endpoint"}, "--to-datastore-endpoint and --to-datastore-endpoint-file both given"},
		{fromEtcd, &CopyFlags{Side: "to", DatastoreEndpointFile: filepath.Join(dir, "none")}, "--to-datastore-endpoint-file: open " + filepath.Join(dir, "none")},
		{fromEtcd, &CopyFlags{Side: "to", DatastoreEndpoint: sqlite, CAFile: "ca.crt"}, "--to-etcd-cafile, --to-etcd-certfile and --to-etcd-keyfile apply only with --to-etcd-servers"},
	} {
		if msg := copyErr(c.from, c.to); !strings.Contains(msg, c.want) {
			t.Errorf("from %s to %s: %s, want %q", c.from, c.to, msg, c.want)
		}
	}
}

// TestCopyStoragePostgres copies from etcd servers reached with the etcd
// client TLS flags into kine on a real PostgreSQL, and from there into
// SQLite: every key identical.
func TestCopyStoragePostgres(t *testing.T) {
	pg := testpg.Start(t)
	dir := t.TempDir()
	e, url, pki, err := (&EmbeddedEtcd{DataDir: filepath.Join(dir, "etcd")}).start(filepath.Join(dir, "certs"))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	from := &CopyFlags{Side: "from", EtcdServers: []string{url}, CAFile: pki.CA, CertFile: pki.ClientCert, KeyFile: pki.ClientKey}
	want := storedKeys(t)
	cli, stop := openStore(t, &CopyFlags{Side: "to", EtcdServers: from.EtcdServers, CAFile: pki.CA, CertFile: pki.ClientCert, KeyFile: pki.ClientKey})
	for k, v := range want {
		if _, err := cli.Put(t.Context(), k, string(v)); err != nil {
			t.Fatal(err)
		}
	}
	stop()

	var out bytes.Buffer
	if err := runCopyStorage(context.Background(), &out, from, &CopyFlags{Side: "to", DatastoreEndpoint: pg.URL}, "/registry"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "copied 254 keys") || strings.Contains(out.String(), pg.Password) {
		t.Errorf("output (the password must not be in it):\n%s", out.String())
	}
	got, _ := readStore(t, &CopyFlags{Side: "from", DatastoreEndpoint: pg.URL})
	sameKeys(t, "Postgres", got, want)

	sqlite := "sqlite://" + filepath.Join(dir, "state.db")
	if err := runCopyStorage(context.Background(), &out, &CopyFlags{Side: "from", DatastoreEndpoint: pg.URL}, &CopyFlags{Side: "to", DatastoreEndpoint: sqlite}, "/registry"); err != nil {
		t.Fatal(err)
	}
	got, _ = readStore(t, &CopyFlags{Side: "from", DatastoreEndpoint: sqlite})
	sameKeys(t, "SQLite", got, want)
}

// TestKineHealthKey: the key the copy skips is kine's own health key.
func TestKineHealthKey(t *testing.T) {
	if kineHealthKey != kineserver.HealthKey {
		t.Errorf("kineHealthKey %q, kine's HealthKey %q", kineHealthKey, kineserver.HealthKey)
	}
}
