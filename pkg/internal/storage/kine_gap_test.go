//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// TestKineWatchCommitOrder: a write whose transaction commits after a later
// revision's (revision N inserted, revision N+1 committed, then N) reaches
// a watch started from before N once it commits. kine's revisions are the
// table's ids, handed out on insert, not on commit, and kine's own Watch
// passes on only the events above the highest revision it read when it
// started (v0.17.5, logstructured.Watch): N was lost to that watch on
// MariaDB and on PostgreSQL, until revisionFeed (kine_watch.go). SQLite
// has one writer at a time, so ids commit in order there: its /slow commits
// while /fast waits for it, and the watch must see both all the same.
func TestKineWatchCommitOrder(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		watchOrder(t, "sqlite://"+path, func(ctx context.Context) (*sql.Tx, error) {
			db, err := sql.Open("sqlite", path)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { db.Close() })
			return db.BeginTx(ctx, nil)
		})
	})
	t.Run("mysql", func(t *testing.T) {
		my := testmysql.Start(t)
		watchOrder(t, my.URL, func(ctx context.Context) (*sql.Tx, error) {
			db, err := sql.Open("mysql", my.DSN)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { db.Close() })
			return db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testpg.Start(t)
		watchOrder(t, pg.URL, func(ctx context.Context) (*sql.Tx, error) {
			db, err := sql.Open("pgx", pg.URL)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { db.Close() })
			return db.BeginTx(ctx, &sql.TxOptions{Isolation: sql.LevelReadCommitted})
		})
	})
}

func watchOrder(t *testing.T, endpoint string, begin func(context.Context) (*sql.Tx, error)) {
	o := SQL{Endpoint: endpoint, ConnectTimeout: 5 * time.Second, CompactMinRetain: 1000, Replicas: 1}
	k, err := o.startKine(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer k.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{k.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start, err := c.Put(ctx, "/start", "v")
	if err != nil {
		t.Fatal(err)
	}
	// A create of /slow, as kine inserts it, left uncommitted.
	tx, err := begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT INTO kine(name, created, deleted, create_revision, prev_revision, lease, value, old_value) VALUES ('/slow', 1, 0, 0, 0, 0, 'v', '')"); err != nil {
		t.Fatal(err)
	}
	committed := make(chan error, 1)
	if strings.HasPrefix(endpoint, "sqlite://") {
		// One writer at a time: /fast waits for /slow's transaction.
		time.AfterFunc(300*time.Millisecond, func() { committed <- tx.Commit() })
	}
	fast, err := c.Put(ctx, "/fast", "v")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("start %d, fast %d", start.Header.Revision, fast.Header.Revision)
	if !strings.HasPrefix(endpoint, "sqlite://") {
		// /slow commits while the watch starts (the client's Watch returns
		// once the server has started it).
		time.AfterFunc(300*time.Millisecond, func() { committed <- tx.Commit() })
	}
	w := c.Watch(ctx, "/", clientv3.WithPrefix(), clientv3.WithRev(start.Header.Revision+1))
	if err := <-committed; err != nil {
		t.Fatal(err)
	}
	var got []string
	timeout := time.After(5 * time.Second)
	for len(got) < 2 {
		select {
		case r := <-w:
			for _, e := range r.Events {
				got = append(got, string(e.Kv.Key))
				t.Logf("%s at %d", e.Kv.Key, e.Kv.ModRevision)
			}
		case <-timeout:
			t.Fatalf("the watch from revision %d saw %v in 5s, want /slow and /fast", start.Header.Revision+1, got)
		}
	}
}
