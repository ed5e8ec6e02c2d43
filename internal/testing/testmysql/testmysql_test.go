package testmysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testdb"
)

func open(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, dsn string) int {
	t.Helper()
	var n int
	if err := open(t, dsn).QueryRow("SELECT count(*) FROM kv").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServer: a server for the test, reached by URL with the password only,
// keeps committed rows across Stop/Start and across Kill (a crash)/Start,
// makes more databases, lets no root in without the password, and leaves
// no process and no folder after Close.
func TestServer(t *testing.T) {
	start := time.Now()
	s := Start(t)
	t.Logf("started in %s", time.Since(start).Round(time.Millisecond))
	if want := fmt.Sprintf("mysql://%s:%s@tcp(127.0.0.1:%d)/%s", User, s.Password, s.Port, Database); s.URL != want {
		t.Errorf("URL %s, want %s", s.URL, want)
	}
	if s.DSN != strings.TrimPrefix(s.URL, "mysql://") {
		t.Errorf("DSN %s", s.DSN)
	}
	ctx := context.Background()
	db := open(t, s.DSN)
	var who, name string
	if err := db.QueryRow("SELECT current_user(), database()").Scan(&who, &name); err != nil {
		t.Fatal(err)
	}
	if who != User+"@127.0.0.1" || name != Database {
		t.Errorf("connected as %s to %s, want %s@127.0.0.1 to %s", who, name, User, Database)
	}
	// The user may create tables in its database (kine does).
	if _, err := db.Exec("CREATE TABLE kv (k varchar(64) PRIMARY KEY, v text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO kv VALUES ('a', '1')"); err != nil {
		t.Fatal(err)
	}
	db.Close()

	// Password authentication: a wrong password, and root without one
	// (the install made it so), are refused.
	for _, dsn := range []string{s.dsn(User, "wrong", Database), s.dsn("root", "", ""), s.adminDSN("")} {
		var me *mysql.MySQLError
		if err := ping(dsn); !errors.As(err, &me) || me.Number != 1045 {
			t.Errorf("%s: %v, want access denied (1045)", dsn, err)
		}
	}

	// The server runs as a non-root user when the tests run as root.
	if os.Geteuid() == 0 {
		st, err := os.Stat(s.dataDir())
		if err != nil {
			t.Fatal(err)
		}
		if uid := st.Sys().(*syscall.Stat_t).Uid; uid == 0 {
			t.Errorf("the data folder is owned by root")
		}
	}

	// Stop: nothing answers; Start: the same port and rows. Kill (a crash)
	// after a committed write: recovered on Start.
	testdb.CheckRestart(t, s.Server, testdb.DB{
		Connect: func() error { return ping(s.DSN) },
		Exec: func(statement string) {
			if _, err := open(t, s.DSN).ExecContext(ctx, statement); err != nil {
				t.Fatal(err)
			}
		},
		Count: func() int { return count(t, s.DSN) },
	})

	// Another database for the same user.
	other, err := s.CreateDatabase("other_1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := open(t, strings.TrimPrefix(other, "mysql://")).Exec("CREATE TABLE t (i int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDatabase("x; DROP DATABASE testmy"); err == nil {
		t.Error("CreateDatabase took a name that is not an identifier")
	}

	// Close: no process group, no folder; twice is fine.
	testdb.CheckClose(t, s.Server)
}

// TestNotInstalled: without MariaDB the test is skipped with a message
// saying what to install, or fails when APISERVER_BOOT_REQUIRE_MYSQL=1.
func TestNotInstalled(t *testing.T) {
	testdb.CheckNotInstalled(t, func(t testing.TB) { Start(t) }, BinDirEnv, RequireEnv, "MariaDB is not installed")
}
