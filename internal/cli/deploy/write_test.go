package deploy

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// TestWriteAllOrNothing: a write that fails half-way leaves the folder as
// the earlier run wrote it (content and modes); files of an earlier run
// that are no longer part of the configuration are removed in the same
// transaction; the certificates file is 0600.
func TestWriteAllOrNothing(t *testing.T) {
	p := &project.Project{Domain: "example.com", Module: "example.com/crontab", Resources: []*project.Resource{
		{KindDescriptor: project.KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab", Plural: "crontabs"}},
	}}
	opts := func(namespace string, etcd []string) *Options {
		return &Options{Name: "crontab", Namespace: namespace, Image: "r.example.com/c:v1", EtcdServers: etcd, EtcdImage: "gcr.io/etcd-development/etcd:v3.7.3",
			EtcdMembers: 1, Replicas: 1, Project: p, Versions: map[string][]string{"stable.example.com": {"v1"}}}
	}
	dir := filepath.Join(t.TempDir(), "config")
	w := Writer{Out: io.Discard, Rel: func(p string) string { return p }, Now: time.Now()}
	if err := w.Write(dir, opts("crontab-system", nil)); err != nil {
		t.Fatal(err)
	}
	read := func() map[string]string {
		out := map[string]string{}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
			st, _ := os.Stat(filepath.Join(dir, e.Name()))
			out[e.Name()] = st.Mode().Perm().String() + " " + string(b)
		}
		return out
	}
	before := read()
	if !strings.HasPrefix(before[CertificatesFile], "-rw-------") || before[EtcdFile] == "" {
		t.Fatalf("first run: certificates.yaml %.10q, etcd.yaml written: %v", before[CertificatesFile], before[EtcdFile] != "")
	}

	// The second run (another namespace, external etcd: every file changes
	// and etcd.yaml goes) cannot write its apiservice.yaml, the last file.
	obstacle := filepath.Join(dir, APIServiceFile)
	if err := os.Remove(obstacle); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(obstacle, 0o755); err != nil {
		t.Fatal(err)
	}
	delete(before, APIServiceFile)
	before[APIServiceFile] = read()[APIServiceFile]
	err := w.Write(dir, opts("other", []string{"https://etcd:2379"}))
	if err == nil {
		t.Fatal("the second run wrote over a folder in place of apiservice.yaml")
	}
	after := read()
	for name, content := range before {
		if after[name] != content {
			t.Errorf("%s changed by a failed run:\nbefore: %.80q\nafter:  %.80q", name, content, after[name])
		}
	}
	if len(after) != len(before) {
		t.Errorf("files after the failed run: %d, before: %d", len(after), len(before))
	}

	// Without the obstacle the run succeeds and removes etcd.yaml.
	os.Remove(obstacle)
	if err := w.Write(dir, opts("other", []string{"https://etcd:2379"})); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, EtcdFile)); !os.IsNotExist(err) {
		t.Errorf("etcd.yaml of the earlier run is still there: %v", err)
	}
}
