//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/k3s-io/kine/pkg/drivers"
	"github.com/k3s-io/kine/pkg/drivers/generic"
	kineserver "github.com/k3s-io/kine/pkg/server"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// feedOnPostgres is a revisionFeed over kine on a new PostgreSQL, with its
// poll loop every interval, and a handle on the database for transactions
// of the test's own.
func feedOnPostgres(t *testing.T, interval time.Duration) (*revisionFeed, kineserver.Backend, *sql.DB) {
	pg := testpg.Start(t)
	ctx := t.Context()
	o := SQL{Endpoint: pg.URL, ConnectTimeout: 5 * time.Second}
	bctx, stop := context.WithCancel(context.Background())
	wg := &sync.WaitGroup{}
	t.Cleanup(wg.Wait)
	t.Cleanup(stop)
	cfg := &drivers.Config{Endpoint: pg.URL, ConnectionPoolConfig: generic.ConnectionPoolConfig{MaxIdle: 2},
		CompactTimeout: 5 * time.Second, CompactMinRetain: 1000, CompactBatchSize: 1000, PollBatchSize: 500, PollInterval: 250 * time.Millisecond}
	backend, err := o.openBackend(ctx, bctx, stop, wg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := newRevisionFeed(ctx, bctx, wg, backend, pg.URL, interval)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return f, backend, db
}

// holdInsert inserts a row of name as kine would, in a transaction left open.
func holdInsert(t *testing.T, db *sql.DB, name string) *sql.Tx {
	tx, err := db.BeginTx(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.ExecContext(t.Context(), "INSERT INTO kine(name, created, deleted, create_revision, prev_revision, lease, value, old_value) VALUES ($1, 1, 0, 0, 0, 0, 'v', '')", name); err != nil {
		t.Fatal(err)
	}
	return tx
}

// TestRevisionFeedDeliversWhileAHoleIsOpen: a LIST at revision 0 settles
// and answers revision S while the poll loop, arriving during that settle
// run, settles further and waits for a newer insert's open transaction.
// The rows up to S are delivered all the same: the current revision
// (progress notifications) and a watch from S+1 start no lower than S.
func TestRevisionFeedDeliversWhileAHoleIsOpen(t *testing.T) {
	f, backend, db := feedOnPostgres(t, time.Hour)
	ctx := t.Context()
	first := holdInsert(t, db, "/held-1")
	if _, err := backend.Create(ctx, "/x", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	listed := make(chan int64, 1)
	go func() {
		rev, _, err := f.List(ctx, "/", "0", 0, 0, false)
		if err != nil {
			t.Error(err)
		}
		listed <- rev
	}()
	time.Sleep(200 * time.Millisecond)
	f.poke() // the poll loop's settle run waits for the list's
	time.Sleep(200 * time.Millisecond)
	second := holdInsert(t, db, "/held-2") // which the poll loop's run will wait for
	defer second.Commit()
	if _, err := backend.Create(ctx, "/y", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	s := <-listed
	cur, err := f.CurrentRevision(ctx)
	if err != nil || cur < s {
		t.Errorf("current revision %d (%v) after a list answered %d", cur, err, s)
	}
	wr := f.Watch(ctx, s+1)
	batch := <-wr.Eventc
	if wr.CurrentRevision < s || batch.CurrentRev < s {
		t.Errorf("a watch from %d (after a list at %d) started at %d, its first answer at %d", s+1, s, wr.CurrentRevision, batch.CurrentRev)
	}
}

// TestRevisionFeedReadGivesUpWithItsContext: while an insert's transaction
// holds a revision open, a read at revision 0 (which must see every write
// before it, so waits for that revision) ends with its context, saying
// why, instead of waiting for the transaction; a watch and the current
// revision do not wait for it.
func TestRevisionFeedReadGivesUpWithItsContext(t *testing.T) {
	f, _, db := feedOnPostgres(t, 250*time.Millisecond)
	ctx := t.Context()
	if _, err := f.Create(ctx, "/a", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	held := holdInsert(t, db, "/held")
	if _, err := f.Create(ctx, "/b", []byte("v"), 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the poll loop meets the hole
	got := make(chan error, 1)
	go func() {
		c, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, _, err := f.Get(c, "/b", 0, false)
		got <- err
	}()
	select {
	case err := <-got:
		if err == nil {
			t.Errorf("a read at revision 0 answered while revision held open was not settled")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a read at revision 0 with a 1 s deadline still waits for the open transaction after 30 s")
	}
	w := f.Watch(ctx, 0)
	if _, err := f.CurrentRevision(ctx); err != nil {
		t.Errorf("current revision: %v", err)
	}
	if err := held.Commit(); err != nil {
		t.Fatal(err)
	}
	<-w.Eventc
}

// TestRevisionFeedOpensATableOfAnEarlierBuild: a table written through
// kine's backend alone, as builds before revisionFeed wrote it (creates,
// an update, a delete, and an id a rolled-back insert left unused, which
// kine had not filled yet), is opened by this build: a LIST at revision 0
// holds every live key at the table's last revision, and a watch from the
// first revision gets every write in order, without the unused id.
func TestRevisionFeedOpensATableOfAnEarlierBuild(t *testing.T) {
	pg := testpg.Start(t)
	ctx := t.Context()
	earlier := SQL{Endpoint: pg.URL, ConnectTimeout: 5 * time.Second}
	bctx, stop := context.WithCancel(context.Background())
	wg := &sync.WaitGroup{}
	cfg := &drivers.Config{Endpoint: pg.URL, ConnectionPoolConfig: generic.ConnectionPoolConfig{MaxIdle: 2},
		CompactTimeout: 5 * time.Second, CompactMinRetain: 1000, CompactBatchSize: 1000, PollBatchSize: 500, PollInterval: time.Hour}
	backend, err := earlier.openBackend(ctx, bctx, stop, wg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var last int64
	created := map[string]int64{}
	for _, k := range []string{"/old/a", "/old/b", "/old/c"} {
		if last, err = backend.Create(ctx, k, []byte("v1"), 0); err != nil {
			t.Fatal(err)
		}
		created[k] = last
	}
	holeInsert := holdInsert(t, db, "/old/rolled-back")
	holeInsert.Rollback()
	var ok bool
	if last, _, ok, err = backend.Update(ctx, "/old/a", []byte("v2"), created["/old/a"], 0); err != nil || !ok {
		t.Fatalf("update: %v, %v", ok, err)
	}
	if last, _, ok, err = backend.Delete(ctx, "/old/b", created["/old/b"]); err != nil || !ok {
		t.Fatalf("delete: %v, %v", ok, err)
	}
	stop()
	wg.Wait()

	c := kineClient(t, ctx, SQL{Endpoint: pg.URL, ConnectTimeout: 5 * time.Second, CompactMinRetain: 1000, Replicas: 1})
	list, err := c.Get(ctx, "/old/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, kv := range list.Kvs {
		keys = append(keys, fmt.Sprintf("%s=%s", kv.Key, kv.Value))
	}
	if want := []string{"/old/a=v2", "/old/c=v1"}; !slices.Equal(keys, want) || list.Header.Revision < last {
		t.Errorf("list at revision 0: %v at revision %d, want %v at %d or later", keys, list.Header.Revision, want, last)
	}
	wctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var events []string
	for resp := range c.Watch(wctx, "/old/", clientv3.WithPrefix(), clientv3.WithRev(1)) {
		for _, e := range resp.Events {
			events = append(events, fmt.Sprintf("%s %s", e.Type, e.Kv.Key))
		}
		if len(events) >= 5 {
			break
		}
	}
	if want := []string{"PUT /old/a", "PUT /old/b", "PUT /old/c", "PUT /old/a", "DELETE /old/b"}; !slices.Equal(events, want) {
		t.Errorf("watch from revision 1: %v, want %v", events, want)
	}
}
