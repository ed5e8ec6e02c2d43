//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// storedObjects lists every CronTab, Calendar and Backup with what the
// store keeps of them (not the resourceVersion, the store's revision),
// sorted.
func storedObjects(t *testing.T) string {
	t.Helper()
	out := mustKubectl(t, "get", "crontabs,calendars,backups", "-A", "-o", `jsonpath={range .items[*]}{.kind} {.metadata.namespace}/{.metadata.name} `+
		`uid={.metadata.uid} created={.metadata.creationTimestamp} generation={.metadata.generation} deleting={.metadata.deletionTimestamp} `+
		`finalizers={.metadata.finalizers} labels={.metadata.labels} managed={.metadata.managedFields} spec={.spec} status={.status}{"\n"}{end}`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// copyStorage runs the project's `apiserver copy-storage`.
func copyStorage(args ...string) (string, error) {
	return harness.Sh(proj, filepath.Join(proj, "bin", "apiserver"), append([]string{"copy-storage"}, args...)...)
}

// TestCopyStorage moves a project's objects from run local's embedded etcd
// to SQLite and back to a new embedded etcd with `apiserver copy-storage`
// (built with kine, which run local on etcd leaves out):
// every object of every kind is there after each move with the same uid,
// creationTimestamp, managedFields, finalizers, spec and status. It works
// on a fresh embedded etcd and puts the project's own back afterwards.
func TestCopyStorage(t *testing.T) {
	etcdDir := filepath.Join(proj, ".apiserver-boot", "etcd")
	moved := filepath.Join(proj, ".apiserver-boot", "etcd-moved")
	saved := etcdDir + ".before-copy-test"
	if err := os.Rename(etcdDir, saved); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(etcdDir)
		os.RemoveAll(moved)
		os.RemoveAll(etcdDir + ".old")
		if _, err := os.Stat(saved); err == nil {
			os.Rename(saved, etcdDir)
		}
	})
	args := []string{"--controller-manager=false", "--generate=false"}

	rl, _ := runLocal(t, args...)
	manifests := []string{
		fmt.Sprintf(cronTab, "move-a", "move", 1),
		fmt.Sprintf(cronTab, "move-b", "move", 2),
		"apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: move-kept\n  finalizers: [example.com/keep]\nspec:\n  replicas: 3\n",
		"apiVersion: stable.example.com/v1\nkind: Calendar\nmetadata:\n  name: move-holidays\n",
		"apiVersion: ops.example.com/v1\nkind: Backup\nmetadata:\n  name: move-nightly\nspec:\n  replicas: 4\n  note: " + strings.Repeat("n", 100_000) + "\n",
	}
	for _, m := range manifests {
		if r := kubectlApplyStdin(t, "create", m); r.err != nil {
			t.Fatalf("create: %v %s", r.err, r.stderr)
		}
	}
	mustKubectl(t, "patch", "crontab", "move-a", "--subresource", "status", "--type", "merge", "-p", `{"status":{"replicas":7}}`)
	mustKubectl(t, "delete", "crontab", "move-kept", "--wait=false") // Terminating, held by its finalizer
	before := storedObjects(t)
	for _, want := range []string{"move-kept uid=", "Calendar /move-holidays", "Backup default/move-nightly", `"replicas":7`, "example.com/keep"} {
		if !strings.Contains(before, want) {
			t.Fatalf("objects lack %q:\n%s", want, before)
		}
	}

	// A running apiserver's store is refused (into an embedded etcd: run
	// local's build has no kine yet).
	db := filepath.Join(t.TempDir(), "state.db")
	if out, err := copyStorage("--from-embedded-etcd-data-dir", etcdDir, "--to-embedded-etcd-data-dir", filepath.Join(t.TempDir(), "etcd")); err == nil ||
		!strings.Contains(out, "--from-embedded-etcd-data-dir "+etcdDir+" is in use by process") {
		t.Errorf("copy from a running apiserver's etcd: %v\n%s", err, out)
	}
	rl.Stop(t)

	// run local on etcd builds without kine: a copy into SQL is refused by
	// name, saying how to build with kine; then built so, as the refusal says.
	if out, err := copyStorage("--from-embedded-etcd-data-dir", etcdDir, "--to-datastore-endpoint", "sqlite://"+db); err == nil ||
		!strings.Contains(out, "--to-datastore-endpoint: this apiserver was built by run local without SQL storage (kine)") || !strings.Contains(out, "go build -o bin/apiserver ./cmd/apiserver") {
		t.Errorf("copy into SQL with run local's build: %v\n%s", err, out)
	}
	if out, err := harness.Sh(proj, "go", "build", "-o", "bin/apiserver", "./cmd/apiserver"); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	// etcd to SQLite.
	out, err := copyStorage("--from-embedded-etcd-data-dir", etcdDir, "--to-datastore-endpoint", "sqlite://"+db)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out)
	for _, want := range []string{"crontabs.stable.example.com  3", "calendars.stable.example.com 1", "backups.ops.example.com      1"} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("copy-storage output lacks %q", want)
		}
	}
	rl, _ = runLocal(t, append(args, "--datastore-endpoint", "sqlite://"+db)...)
	if got := storedObjects(t); got != before {
		t.Errorf("on SQLite:\n%s\nwant, as on etcd:\n%s", got, before)
	}
	// The same target again is refused: it is not empty.
	rl.Stop(t)
	if out, err := copyStorage("--from-embedded-etcd-data-dir", etcdDir, "--to-datastore-endpoint", "sqlite://"+db); err == nil || !strings.Contains(out, "the target is not empty: it holds /registry/") {
		t.Errorf("copy into a non-empty target: %v\n%s", err, out)
	}

	// SQLite back to a new embedded etcd, then swapped in for the old one.
	if out, err := copyStorage("--from-datastore-endpoint", "sqlite://"+db, "--to-embedded-etcd-data-dir", moved); err != nil {
		t.Fatal(err)
	} else {
		t.Log(out)
	}
	if err := os.Rename(etcdDir, etcdDir+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(moved, etcdDir); err != nil {
		t.Fatal(err)
	}
	rl, _ = runLocal(t, args...)
	if got := storedObjects(t); got != before {
		t.Errorf("back on etcd:\n%s\nwant:\n%s", got, before)
	}
	rl.Stop(t)
}

// TestEmbeddedEtcdOpensOlderData: objects stored through the etcd release
// that earlier builds embedded (the test tools' etcd binary) are served
// from the same data folder by this build's embedded etcd, unchanged.
func TestEmbeddedEtcdOpensOlderData(t *testing.T) {
	version, _ := harness.Sh(proj, etcdBin, "--version")
	t.Logf("written by: %s", strings.SplitN(version, "\n", 2)[0])
	etcdDir := filepath.Join(proj, ".apiserver-boot", "etcd")
	saved := etcdDir + ".before-older-data-test"
	if err := os.Rename(etcdDir, saved); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		os.RemoveAll(etcdDir)
		if _, err := os.Stat(saved); err == nil {
			os.Rename(saved, etcdDir)
		}
	})
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", harness.FreePort(t))
	etcd := &etcdProcess{url: clientURL}
	etcd.Process = harness.Start(t, t.TempDir(), etcdBin, "--name", "apiserver-boot", "--data-dir", etcdDir,
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "apiserver-boot="+peerURL)
	etcd.WaitFor(t, "ready to serve client requests", time.Minute)

	args := []string{"--controller-manager=false", "--generate=false"}
	rl, _ := runLocal(t, append([]string{"--etcd-servers", clientURL}, args...)...)
	for _, m := range []string{fmt.Sprintf(cronTab, "older-a", "older", 2), "apiVersion: stable.example.com/v1\nkind: Calendar\nmetadata:\n  name: older-cal\n"} {
		if r := kubectlApplyStdin(t, "create", m); r.err != nil {
			t.Fatalf("create: %v %s", r.err, r.stderr)
		}
	}
	before := storedObjects(t)
	rl.Stop(t)
	etcd.stop(t) // a clean stop, as the older build's embedded etcd stopped

	rl, _ = runLocal(t, args...) // the embedded etcd on the same folder
	if after := storedObjects(t); after != before || !strings.Contains(after, "older-a") {
		t.Errorf("served by the embedded etcd:\n%s\nwant what the older etcd stored:\n%s", after, before)
	}
	rl.Stop(t)
}
