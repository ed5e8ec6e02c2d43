//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// TestRunLocalDatastoreSQLite: run local --datastore-endpoint sqlite://…
// serves the project's kinds from SQLite through kine, without etcd:
// create, get, list, watch and delete; a restart keeps the objects; a
// second apiserver on the same file is refused (SQLite: one process).
func TestRunLocalDatastoreSQLite(t *testing.T) {
	// The embedded etcd's database held by another process: run local and
	// the apiserver would refuse to start on it, and do not need it.
	etcdDB := filepath.Join(proj, ".apiserver-boot", "etcd", "member", "snap", "db")
	os.MkdirAll(filepath.Dir(etcdDB), 0o700)
	f, err := os.OpenFile(etcdDB, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}

	db := filepath.Join(t.TempDir(), "state.db")
	endpoint := "sqlite://" + db
	args := []string{"--datastore-endpoint", endpoint, "--controller-manager=false", "--generate=false"}
	rl, _ := runLocal(t, args...)
	if st, err := os.Stat(db); err != nil || st.Size() == 0 {
		t.Fatalf("the SQLite database %s: %v", db, err)
	}

	watch := harness.Start(t, proj, "kubectl", "--cache-dir", t.TempDir(), "--kubeconfig", filepath.Join(proj, "kubeconfig"), "get", "crontabs", "--watch",
		"--output-watch-events", "-o", `jsonpath={.type} {.object.metadata.name}{"\n"}`)
	time.Sleep(time.Second)
	for _, m := range []string{fmt.Sprintf(cronTab, "sql-a", "sql", 3), fmt.Sprintf(cronTab, "sql-b", "sql", 2)} {
		if r := kubectlApplyStdin(t, "create", m); r.err != nil {
			t.Fatalf("create: %v %s", r.err, r.stderr)
		}
	}
	if got := mustKubectl(t, "get", "crontab", "sql-a", "-o", "jsonpath={.spec.replicas}"); got != "3" {
		t.Errorf("get sql-a: replicas %q, want 3", got)
	}
	if got := mustKubectl(t, "get", "crontabs", "-l", "team=sql", "-o", "jsonpath={.items[*].metadata.name}"); got != "sql-a sql-b" {
		t.Errorf("list -l team=sql: %q", got)
	}
	mustKubectl(t, "delete", "crontab", "sql-b")
	if !harness.WaitUntil(5*time.Second, func() bool { return strings.Contains(watch.Out.String(), "DELETED sql-b") }) {
		t.Errorf("watch:\n%s", watch.Out.String())
	}
	for _, want := range []string{"ADDED sql-a", "ADDED sql-b", "DELETED sql-b"} {
		if !strings.Contains(watch.Out.String(), want) {
			t.Errorf("watch did not show %q:\n%s", want, watch.Out.String())
		}
	}
	watch.Kill(syscall.SIGKILL)

	// SQLite serves one process: another apiserver on the file is refused.
	out, err := harness.Sh(proj, filepath.Join(proj, "bin", "apiserver"), "--datastore-endpoint", endpoint, "--secure-port", fmt.Sprint(harness.FreePort(t)))
	if err == nil || !strings.Contains(out, fmt.Sprintf("--datastore-endpoint %s: %s is in use by process", endpoint, db)) {
		t.Errorf("a second apiserver on %s: %v\n%s", db, err, out)
	}

	rl.Stop(t)
	rl, _ = runLocal(t, args...)
	if got := mustKubectl(t, "get", "crontabs", "-l", "team=sql", "-o", "jsonpath={.items[*].metadata.name} {.items[*].spec.replicas}"); got != "sql-a 3" {
		t.Errorf("after a restart: %q, want sql-a 3", got)
	}
	rl.Stop(t)
	if left := projectProcesses(); len(left) > 0 {
		t.Fatalf("processes left after stop: %v", left)
	}
}
