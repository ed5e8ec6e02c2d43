//go:build apiserverboot_nokine

package storage

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartKineWithoutKine: built without kine (run local's builds on
// etcd), a --datastore-endpoint is refused by name when the options are
// checked (and by startKine), saying how to get kine; one of the wrong
// form is refused as with kine; copy-storage refuses a SQL side before it
// opens the other. Run by the runlocal package's TestNoKineTag, with the
// tag.
func TestStartKineWithoutKine(t *testing.T) {
	o := NewSQL()
	o.Endpoint = "sqlite://" + t.TempDir() + "/state.db"
	if _, err := o.startKine(t.Context()); err == nil || !strings.Contains(err.Error(), "--datastore-endpoint: this apiserver was built by run local without SQL storage (kine)") {
		t.Errorf("startKine = %v, want the refusal naming --datastore-endpoint", err)
	}
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "--datastore-endpoint: this apiserver was built by run local without SQL storage (kine)") {
		t.Errorf("Validate = %v, want the refusal", err)
	}
	// A source that passes its checks and that etcd could not open: had it
	// been opened before the target was refused, the error would be etcd's.
	from := &CopyFlags{Side: "from", EmbeddedDataDir: t.TempDir()}
	if err := os.MkdirAll(filepath.Join(from.EmbeddedDataDir, "member", "snap"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(from.EmbeddedDataDir, "member", "snap", "db"), []byte("not bbolt"), 0o600); err != nil {
		t.Fatal(err)
	}
	toSQL := &CopyFlags{Side: "to", DatastoreEndpoint: "sqlite://" + t.TempDir() + "/state.db"}
	if err := runCopyStorage(t.Context(), io.Discard, from, toSQL, "/registry"); err == nil || !strings.Contains(err.Error(), "--to-datastore-endpoint: this apiserver was built by run local without SQL storage") {
		t.Errorf("copy-storage into SQL = %v, want the refusal", err)
	}
	file := NewSQL()
	file.Endpoint, file.EndpointFile = "sqlite://"+t.TempDir()+"/state.db", "/etc/apiserver/datastore"
	if err := file.Validate(); err == nil || !strings.HasPrefix(err.Error(), "--datastore-endpoint-file: this apiserver was built by run local without SQL storage (kine)") {
		t.Errorf("an endpoint from its file: Validate = %v, want the refusal naming --datastore-endpoint-file", err)
	}
	to := NewSQL()
	to.Endpoint, to.flag = "sqlite://"+t.TempDir()+"/state.db", "to-datastore-endpoint"
	if _, err := to.startKine(t.Context()); err == nil || !strings.Contains(err.Error(), "--to-datastore-endpoint: this apiserver was built by run local without SQL storage (kine)") || !strings.Contains(err.Error(), "go build -o bin/apiserver ./cmd/apiserver") {
		t.Errorf("copy-storage's side: startKine = %v, want the refusal naming --to-datastore-endpoint and the build with kine", err)
	}
	o.Endpoint = "oracle://x"
	if _, err := o.startKine(t.Context()); err == nil || strings.Contains(err.Error(), "without SQL storage") || !strings.Contains(err.Error(), "--datastore-endpoint") {
		t.Errorf("a wrong endpoint: startKine = %v, want the check of its form", err)
	}
}
