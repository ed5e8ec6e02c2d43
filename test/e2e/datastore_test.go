//go:build e2e

package e2e

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // database/sql driver "mysql"
	"github.com/jackc/pgx/v5"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// holdEmbeddedEtcd holds the embedded etcd's database, as another process
// would, until the test ends: run local and the apiserver would refuse to
// start on it, and with --datastore-endpoint they do not need it.
func holdEmbeddedEtcd(t *testing.T) {
	etcdDB := datastore.EtcdDB(filepath.Join(proj, ".apiserver-boot", "etcd"))
	os.MkdirAll(filepath.Dir(etcdDB), 0o700)
	f, err := os.OpenFile(etcdDB, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// TestRunLocalDatastorePostgres: the whole CronTab walk of run local
// (cronTabWalk: CRUD, validation, label and field selectors, status,
// server-side apply, finalizers, watch, a restart keeps the objects) on a
// real PostgreSQL through kine, with the embedded etcd out of reach.
func TestRunLocalDatastorePostgres(t *testing.T) {
	pg := testpg.Start(t)
	holdEmbeddedEtcd(t)
	cronTabWalk(t, "--datastore-endpoint", pg.URL)
	var n int
	if err := pgCount(t, pg.URL, &n); err != nil || n == 0 {
		t.Errorf("rows in Postgres' kine table: %d, %v: want the objects stored there", n, err)
	}
}

// TestRunLocalDatastoreMySQL: the same CronTab walk on a real MariaDB
// (Debian's, started on loopback by the test) through kine.
func TestRunLocalDatastoreMySQL(t *testing.T) {
	my := testmysql.Start(t)
	holdEmbeddedEtcd(t)
	cronTabWalk(t, "--datastore-endpoint", my.URL)
	db, err := sql.Open("mysql", my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM kine WHERE name LIKE '/registry/stable.example.com/crontabs/%'").Scan(&n); err != nil || n == 0 {
		t.Errorf("rows in MariaDB's kine table: %d, %v: want the objects stored there", n, err)
	}
}

// pgCount counts the rows of kine's table.
func pgCount(t *testing.T, url string, n *int) error {
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		return err
	}
	defer conn.Close(t.Context())
	return conn.QueryRow(t.Context(), "SELECT count(*) FROM kine WHERE name LIKE '/registry/stable.example.com/crontabs/%'").Scan(n)
}

// TestRunLocalDatastoreSQLite: run local --datastore-endpoint sqlite://…
// serves the project's kinds from SQLite through kine, without etcd:
// create, get, list, watch and delete; a restart keeps the objects; a
// second apiserver on the same file is refused (SQLite: one process).
func TestRunLocalDatastoreSQLite(t *testing.T) {
	holdEmbeddedEtcd(t)

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
