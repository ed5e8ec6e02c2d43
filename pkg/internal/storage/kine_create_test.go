//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	clientv3 "go.etcd.io/etcd/client/v3"
	_ "modernc.org/sqlite" // database/sql driver "sqlite", to add the trigger

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// The row the database refuses: a trigger on kine's table fails its insert,
// as a connection ended under the insert does.
const refusedKey = "/registry/ops.example.com/tasks/default/refused"

// TestKineCreateNotStoredIsAnError creates a key whose insert the database
// refuses, through kine's socket, as k8s.io/apiserver creates (a
// transaction on mod_revision 0 that puts). kine's own Create answers it
// with success and a revision that does not hold the key; the apiserver
// must answer an error instead, and never acknowledge an object it did not
// store. Other keys are created as before.
func TestKineCreateNotStoredIsAnError(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		checkCreates(t, "sqlite://"+path, func(ctx context.Context) error {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON kine WHEN NEW.name = '`+refusedKey+`' BEGIN SELECT RAISE(ABORT, 'refused'); END`)
			return err
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testpg.Start(t)
		checkCreates(t, pg.URL, func(ctx context.Context) error {
			conn, err := pgx.Connect(ctx, pg.URL)
			if err != nil {
				return err
			}
			defer conn.Close(ctx)
			_, err = conn.Exec(ctx, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$;
CREATE TRIGGER refuse BEFORE INSERT ON kine FOR EACH ROW WHEN (NEW.name = '`+refusedKey+`') EXECUTE FUNCTION refuse()`)
			return err
		})
	})
	t.Run("mysql", func(t *testing.T) {
		my := testmysql.Start(t)
		checkCreates(t, my.URL, func(ctx context.Context) error {
			db, err := sql.Open("mysql", my.DSN)
			if err != nil {
				return err
			}
			defer db.Close()
			_, err = db.ExecContext(ctx, `CREATE TRIGGER refuse BEFORE INSERT ON kine FOR EACH ROW
BEGIN IF NEW.name = '`+refusedKey+`' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'refused'; END IF; END`)
			return err
		})
	})
}

// checkCreates starts kine on endpoint, lets refuse install the refusal
// (kine's table exists by then), and creates a key that is stored and the
// refused one.
func checkCreates(t *testing.T, endpoint string, refuse func(context.Context) error) {
	o := SQL{Endpoint: endpoint, ConnectTimeout: 5 * time.Second, CompactMinRetain: 1000, Replicas: 1}
	k, err := o.startKine(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if err := refuse(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{k.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	create := func(key string) (*clientv3.TxnResponse, error) {
		return c.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).Then(clientv3.OpPut(key, "v")).Commit()
	}
	stored := "/registry/ops.example.com/tasks/default/stored"
	if resp, err := create(stored); err != nil || !resp.Succeeded {
		t.Fatalf("create %s: %v, %v", stored, resp, err)
	}
	resp, err := create(refusedKey)
	if err == nil {
		t.Errorf("create %s, whose insert the database refused: succeeded %v at revision %d, want an error", refusedKey, resp.Succeeded, resp.Header.GetRevision())
	} else if !strings.Contains(err.Error(), "did not store it") {
		t.Errorf("create %s: %v, want the error to say it was not stored", refusedKey, err)
	}
	got, err := c.Get(ctx, refusedKey)
	if err != nil || len(got.Kvs) != 0 {
		t.Errorf("get %s: %v, %v: want no key", refusedKey, got.Kvs, err)
	}
}
