package testpg

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testdb"
)

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connecting to %s: %v", dsn, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func count(t *testing.T, dsn string) int {
	t.Helper()
	var n int
	if err := connect(t, dsn).QueryRow(context.Background(), "SELECT count(*) FROM kv").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestServer: a server for the test, reached by URL with the password only,
// keeps committed rows across Stop/Start and across Kill (a crash)/Start,
// makes more databases, and leaves no process and no folder after Close.
func TestServer(t *testing.T) {
	s := Start(t)
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "postgres" || u.Hostname() != "127.0.0.1" || u.Port() != fmt.Sprint(s.Port) || u.User.Username() != User ||
		u.Path != "/"+Database || u.Query().Get("sslmode") != "disable" {
		t.Errorf("URL %s", s.URL)
	}
	ctx := context.Background()
	conn := connect(t, s.URL)
	var who, db string
	if err := conn.QueryRow(ctx, "SELECT current_user, current_database()").Scan(&who, &db); err != nil {
		t.Fatal(err)
	}
	if who != User || db != Database {
		t.Errorf("connected as %s to %s, want %s to %s", who, db, User, Database)
	}
	// The user owns its database: it may create tables (kine does).
	if _, err := conn.Exec(ctx, "CREATE TABLE kv (k text PRIMARY KEY, v text); INSERT INTO kv VALUES ('a', '1')"); err != nil {
		t.Fatal(err)
	}
	conn.Close(ctx)

	// Password authentication: a wrong password is refused.
	wrong := *u
	wrong.User = url.UserPassword(User, "wrong")
	if c, err := pgx.Connect(ctx, wrong.String()); err == nil {
		c.Close(ctx)
		t.Error("a wrong password was accepted")
	} else if !strings.Contains(err.Error(), "password authentication failed") {
		t.Errorf("wrong password: %v", err)
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
		Connect: func() error {
			c, err := pgx.Connect(ctx, s.URL)
			if err == nil {
				c.Close(ctx)
			}
			return err
		},
		Exec: func(statement string) {
			if _, err := connect(t, s.URL).Exec(ctx, statement); err != nil {
				t.Fatal(err)
			}
		},
		Count: func() int { return count(t, s.URL) },
	})

	// Another database for the same user.
	other, err := s.CreateDatabase("other_1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connect(t, other).Exec(ctx, "CREATE TABLE t (i int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateDatabase("x; DROP DATABASE testpg"); err == nil {
		t.Error("CreateDatabase took a name that is not an identifier")
	}

	// Close: no process group, no folder; twice is fine.
	testdb.CheckClose(t, s.Server)
}

// TestNotInstalled: without PostgreSQL the test is skipped with a message
// saying what to install, or fails when APISERVER_BOOT_REQUIRE_POSTGRES=1.
func TestNotInstalled(t *testing.T) {
	testdb.CheckNotInstalled(t, func(t testing.TB) { Start(t) }, BinDirEnv, RequireEnv, "PostgreSQL is not installed")
}
