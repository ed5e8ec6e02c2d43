//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// startKineErr starts kine on endpoint and returns its error, failing when
// it takes longer than within or shows the password.
func startKineErr(t *testing.T, endpoint string, within time.Duration) error {
	t.Helper()
	o := SQL{Endpoint: endpoint, ConnectTimeout: 3 * time.Second}
	start := time.Now()
	k, err := o.startKine(t.Context())
	if err == nil {
		k.Stop()
		t.Fatalf("%s: started", datastore.Redact(endpoint))
	}
	if d := time.Since(start); d > within {
		t.Errorf("%s: the error took %s, want under %s", datastore.Redact(endpoint), d, within)
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("the password is in the error: %v", err)
	}
	return err
}

func TestDatastoreUnreachable(t *testing.T) {
	port, err := freeport.Port() // nobody listens there
	if err != nil {
		t.Fatal(err)
	}
	for _, endpoint := range []string{
		fmt.Sprintf("postgres://app:hunter2@127.0.0.1:%d/crontab?sslmode=disable", port),
		fmt.Sprintf("mysql://app:hunter2@tcp(127.0.0.1:%d)/crontab", port),
	} {
		err := startKineErr(t, endpoint, 5*time.Second)
		want := "--datastore-endpoint " + datastore.Redact(endpoint) + ": the database did not answer within 3s (--datastore-connect-timeout)"
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "check that it runs and that host and port are right") {
			t.Errorf("error:\n%v\nwant it to start with\n%s", err, want)
		}
	}
}

// TestDatastoreWrongCredentials answers as a Postgres server that refuses
// the password (28P01), speaking Postgres' protocol; the password comes
// from the URL or from PGPASSWORD.
func TestDatastoreWrongCredentials(t *testing.T) {
	for _, tc := range []struct{ userinfo, env string }{{"app:hunter2", ""}, {"app", "hunter2"}} {
		if tc.env != "" {
			t.Setenv("PGPASSWORD", tc.env)
		}
		refusedPassword(t, tc.userinfo)
	}
}

func refusedPassword(t *testing.T, userinfo string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	got := make(chan string, 1)
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		b := pgproto3.NewBackend(conn, conn)
		for {
			msg, err := b.ReceiveStartupMessage()
			if err != nil {
				return
			}
			if _, ok := msg.(*pgproto3.SSLRequest); ok {
				conn.Write([]byte("N"))
				continue
			}
			break
		}
		b.Send(&pgproto3.AuthenticationCleartextPassword{})
		if err := b.Flush(); err != nil {
			return
		}
		b.SetAuthType(pgproto3.AuthTypeCleartextPassword)
		msg, err := b.Receive()
		if err != nil {
			return
		}
		if p, ok := msg.(*pgproto3.PasswordMessage); ok {
			got <- p.Password
		}
		b.Send(&pgproto3.ErrorResponse{Severity: "FATAL", Code: "28P01", Message: `password authentication failed for user "app"`})
		b.Flush()
	}()
	endpoint := fmt.Sprintf("postgres://%s@%s/crontab?sslmode=disable", userinfo, l.Addr())
	err = startKineErr(t, endpoint, 5*time.Second)
	want := "--datastore-endpoint " + datastore.Redact(endpoint) + ": the database refused the credentials: "
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "check user and password") {
		t.Errorf("error:\n%v\nwant it to start with\n%s", err, want)
	}
	select {
	case p := <-got:
		if p != "hunter2" {
			t.Errorf("the server got password %q", p)
		}
	default:
		t.Error("the server got no password")
	}
}

// TestKinePostgres starts kine on a real PostgreSQL (Debian's, started on
// loopback): a key stored through kine's socket is read back after a
// restart; a wrong password and a database the user may not create are
// refused before anything serves, naming the flag, without the password.
func TestKinePostgres(t *testing.T) {
	pg := testpg.Start(t)
	o := SQL{Endpoint: pg.URL, ConnectTimeout: 5 * time.Second, CompactMinRetain: 1000}
	for i := 0; i < 2; i++ {
		k, err := o.startKine(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{k.Endpoint}, DialTimeout: 5 * time.Second})
		if err != nil {
			k.Stop()
			t.Fatal(err)
		}
		if i == 0 {
			_, err = c.Put(t.Context(), "/registry/crontabs/default/a", "stored")
		}
		resp, gerr := c.Get(t.Context(), "/registry/crontabs/default/a")
		c.Close()
		k.Stop()
		if err != nil || gerr != nil {
			t.Fatalf("put %v, get %v", err, gerr)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "stored" {
			t.Fatalf("run %d: got %v, want the stored key", i, resp.Kvs)
		}
	}

	wrong := strings.Replace(pg.URL, ":"+pg.Password+"@", ":hunter2@", 1)
	err := startKineErr(t, wrong, 10*time.Second)
	if want := "--datastore-endpoint " + datastore.Redact(wrong) + ": the database refused the credentials: "; !strings.HasPrefix(err.Error(), want) {
		t.Errorf("wrong password: %v\nwant it to start with %s", err, want)
	}
	missing := strings.Replace(pg.URL, "/"+testpg.Database+"?", "/nosuchdb?", 1)
	err = startKineErr(t, missing, 10*time.Second)
	if want := `database "nosuchdb" does not exist and user "` + testpg.User + `" may not create it`; !strings.Contains(err.Error(), want) {
		t.Errorf("missing database: %v\nwant %q", err, want)
	}
	if strings.Contains(err.Error(), pg.Password) {
		t.Errorf("the password is in the error: %v", err)
	}
	// A user who may not even connect to the database postgres (where kine
	// would create it): the error says the database is missing.
	if err := pg.Admin("REVOKE CONNECT ON DATABASE postgres FROM PUBLIC"); err != nil {
		t.Fatal(err)
	}
	err = startKineErr(t, missing, 10*time.Second)
	if want := `database "nosuchdb" does not exist, and user "` + testpg.User + `" cannot connect to the database postgres to create it`; !strings.Contains(err.Error(), want) {
		t.Errorf("missing database, no access to postgres: %v\nwant %q", err, want)
	}
}

// TestKineMySQL starts kine on a real MariaDB (Debian's, started on
// loopback): a key stored through kine's socket is read back after a
// restart; a wrong password is refused before anything serves, naming the
// flag, without the password.
func TestKineMySQL(t *testing.T) {
	my := testmysql.Start(t)
	o := SQL{Endpoint: my.URL, ConnectTimeout: 5 * time.Second, CompactMinRetain: 1000}
	for i := 0; i < 2; i++ {
		k, err := o.startKine(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{k.Endpoint}, DialTimeout: 5 * time.Second})
		if err != nil {
			k.Stop()
			t.Fatal(err)
		}
		if i == 0 {
			_, err = c.Put(t.Context(), "/registry/crontabs/default/a", "stored")
		}
		resp, gerr := c.Get(t.Context(), "/registry/crontabs/default/a")
		c.Close()
		k.Stop()
		if err != nil || gerr != nil {
			t.Fatalf("put %v, get %v", err, gerr)
		}
		if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "stored" {
			t.Fatalf("run %d: got %v, want the stored key", i, resp.Kvs)
		}
	}
	// kine's table is in the URL's database.
	var n int
	db, err := sql.Open("mysql", my.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRowContext(t.Context(), "SELECT count(*) FROM kine WHERE name = '/registry/crontabs/default/a'").Scan(&n); err != nil || n != 1 {
		t.Errorf("rows of the key in %s.kine: %d, %v: want 1", testmysql.Database, n, err)
	}

	wrong := strings.Replace(my.URL, ":"+my.Password+"@", ":hunter2@", 1)
	err = startKineErr(t, wrong, 10*time.Second)
	if want := "--datastore-endpoint " + datastore.Redact(wrong) + ": the database refused the credentials: "; !strings.HasPrefix(err.Error(), want) ||
		!strings.Contains(err.Error(), "Access denied for user '"+testmysql.User+"'") {
		t.Errorf("wrong password: %v\nwant it to start with %s and say access was denied", err, want)
	}
	if strings.Contains(err.Error(), my.Password) {
		t.Errorf("the password is in the error: %v", err)
	}
}

// TestKineSQLite starts kine on a SQLite file, stores and reads a key
// through its socket, refuses a second kine on the same file (another
// replica), and keeps the key across a restart.
func TestKineSQLite(t *testing.T) {
	dir := t.TempDir()
	endpoint := "sqlite://" + filepath.Join(dir, "state", "state.db")
	o := SQL{Endpoint: endpoint, ConnectTimeout: 3 * time.Second}
	k, err := o.startKine(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sock := strings.TrimPrefix(k.Endpoint, "unix://")
	for _, p := range []string{filepath.Dir(sock), sock} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o077 != 0 {
			t.Errorf("%s: mode %04o, open to others", p, st.Mode().Perm())
		}
	}
	put := func(k *kine, key, value string) {
		c, err := clientv3.New(clientv3.Config{Endpoints: []string{k.Endpoint}, DialTimeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		if value != "" {
			if _, err := c.Put(ctx, key, value); err != nil {
				t.Fatal(err)
			}
			return
		}
		r, err := c.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
			t.Fatalf("get %s after a restart: %v", key, r.Kvs)
		}
	}
	put(k, "/registry/a", "v")

	err = startKineErr(t, endpoint, 5*time.Second)
	want := fmt.Sprintf("--datastore-endpoint %s: %s is in use by process %d", endpoint, filepath.Join(dir, "state", "state.db"), os.Getpid())
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "SQLite serves one apiserver process only (one replica)") || !strings.Contains(err.Error(), "use postgres://") {
		t.Errorf("error:\n%v\nwant it to start with\n%s", err, want)
	}

	k.Stop()
	if _, err := os.Stat(filepath.Dir(sock)); !os.IsNotExist(err) {
		t.Errorf("the socket's folder is left: %v", err)
	}
	k, err = o.startKine(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	put(k, "/registry/a", "")
}
