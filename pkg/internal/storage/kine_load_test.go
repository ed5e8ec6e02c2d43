//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// TestKineWatchUnderLoad: writers whose transactions stay open for random
// short times (raw inserts as kine makes them, some rolled back, and kine's
// own creates through the etcd API, held open by a trigger on PostgreSQL),
// several kine instances on one database (replicas; one more started while
// the writes go on), and observers started at random moments on them: informers (a LIST at revision 0,
// then a watch from the revision after it) and watches from revision 0.
// When the writes are over, every observer must account for every row
// committed, from the database itself: an informer lists each row up to its
// list's revision and sees each later one exactly once, in revision order;
// a watch from 0 sees each row after its start revision exactly once, in
// order; no observer sees a rolled-back row.
func TestKineWatchUnderLoad(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		underLoad(t, loadSetup{endpoint: "sqlite://" + path, replicas: 1, rawWriters: 2,
			open: func() (*sql.DB, error) { return sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(20000)") }})
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testpg.Start(t)
		underLoad(t, loadSetup{endpoint: pg.URL, replicas: 3, rawWriters: 8,
			open: func() (*sql.DB, error) { return sql.Open("pgx", pg.URL) },
			hold: func(ctx context.Context) error {
				conn, err := pgx.Connect(ctx, pg.URL)
				if err != nil {
					return err
				}
				defer conn.Close(ctx)
				// kine's own inserts stay open 0-30 ms after their id exists.
				_, err = conn.Exec(ctx, `CREATE FUNCTION hold() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_sleep(random() * 0.03); RETURN NULL; END $$;
CREATE TRIGGER hold AFTER INSERT ON kine FOR EACH ROW WHEN (NEW.name LIKE '/load/kine-%') EXECUTE FUNCTION hold()`)
				return err
			}})
	})
	t.Run("mysql", func(t *testing.T) {
		my := testmysql.Start(t)
		underLoad(t, loadSetup{endpoint: my.URL, replicas: 3, rawWriters: 8,
			open: func() (*sql.DB, error) { return sql.Open("mysql", my.DSN) }})
	})
}

type loadSetup struct {
	endpoint   string
	replicas   int
	rawWriters int
	open       func() (*sql.DB, error)
	hold       func(context.Context) error // optional: holds kine's own inserts open
}

// observer is an informer (list, then watch from after it) or a watch
// from revision 0.
type observer struct {
	name   string
	start  int64            // events must be above it
	listed map[string]int64 // key: revision (informers)
	mu     sync.Mutex
	events []*clientv3.Event
	err    error
}

func underLoad(t *testing.T, s loadSetup) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	replica := func() *clientv3.Client {
		return kineClient(t, ctx, SQL{Endpoint: s.endpoint, ConnectTimeout: 5 * time.Second, CompactMinRetain: 1000, Replicas: s.replicas})
	}
	var clients []*clientv3.Client // the writers'
	for i := 0; i < s.replicas; i++ {
		clients = append(clients, replica())
	}
	observed := append([]*clientv3.Client(nil), clients...)
	if s.hold != nil {
		if err := s.hold(ctx); err != nil {
			t.Fatal(err)
		}
	}
	db, err := s.open()
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	watchCtx, stopWatches := context.WithCancel(ctx)
	defer stopWatches()
	var observers []*observer
	var obsWG, writeWG sync.WaitGroup
	writeUntil := time.Now().Add(2 * time.Second)
	for w := 0; w < s.rawWriters; w++ {
		writeWG.Add(1)
		go func() {
			defer writeWG.Done()
			for i := 0; time.Now().Before(writeUntil); i++ {
				if err := rawInsert(ctx, db, fmt.Sprintf("/load/raw-%d-%d", w, i)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for w := 0; w < 8; w++ {
		writeWG.Add(1)
		go func() {
			defer writeWG.Done()
			for i := 0; time.Now().Before(writeUntil); i++ {
				c := clients[rand.IntN(len(clients))]
				if _, err := c.Put(ctx, fmt.Sprintf("/load/kine-%d-%d", w, i), "v"); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < 24; i++ {
		time.Sleep(time.Duration(rand.IntN(80)) * time.Millisecond)
		if i == 8 && s.replicas > 1 {
			// A replica started during the writes.
			observed = append(observed, replica())
		}
		o := &observer{name: fmt.Sprintf("informer %d", i)}
		if i%3 == 2 {
			o.name = fmt.Sprintf("watch from 0 %d", i)
		}
		observers = append(observers, o)
		c := observed[i%len(observed)]
		if i > 8 && i%2 == 0 {
			c = observed[len(observed)-1]
		}
		obsWG.Add(1)
		go func() {
			defer obsWG.Done()
			o.run(watchCtx, c, i%3 != 2)
		}()
	}
	writeWG.Wait()
	truth := committed(t, ctx, db)
	t.Logf("%d rows committed", len(truth))
	waitForAll(observers, truth, 20*time.Second)
	stopWatches()
	obsWG.Wait()
	for _, o := range observers {
		o.check(t, truth)
	}
}

// rawInsert inserts key as kine creates a key, in a transaction held open
// 0-150 ms, and rolls one in five back.
func rawInsert(ctx context.Context, db *sql.DB, key string) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "INSERT INTO kine(name, created, deleted, create_revision, prev_revision, lease, value, old_value) VALUES ('"+key+"', 1, 0, 0, 0, 0, 'v', '')"); err != nil {
		return err
	}
	time.Sleep(time.Duration(rand.IntN(150)) * time.Millisecond)
	if rand.IntN(5) == 0 {
		return tx.Rollback()
	}
	return tx.Commit()
}

// committed is every /load/ key in the database, with its revision.
func committed(t *testing.T, ctx context.Context, db *sql.DB) map[string]int64 {
	rows, err := db.QueryContext(ctx, "SELECT name, id FROM kine WHERE name LIKE '/load/%'")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	truth := map[string]int64{}
	for rows.Next() {
		var name string
		var id int64
		if err := rows.Scan(&name, &id); err != nil {
			t.Fatal(err)
		}
		truth[name] = id
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return truth
}

func (o *observer) run(ctx context.Context, c *clientv3.Client, informer bool) {
	fail := func(err error) {
		o.mu.Lock()
		o.err = err
		o.mu.Unlock()
	}
	var w clientv3.WatchChan
	if informer {
		resp, err := c.Get(ctx, "/load/", clientv3.WithPrefix())
		if err != nil {
			fail(err)
			return
		}
		o.mu.Lock()
		o.start = resp.Header.Revision
		o.listed = map[string]int64{}
		for _, kv := range resp.Kvs {
			o.listed[string(kv.Key)] = kv.ModRevision
		}
		o.mu.Unlock()
		w = c.Watch(ctx, "/load/", clientv3.WithPrefix(), clientv3.WithRev(resp.Header.Revision+1))
	} else {
		w = c.Watch(ctx, "/load/", clientv3.WithPrefix(), clientv3.WithCreatedNotify())
		created := <-w
		if !created.Created {
			fail(fmt.Errorf("the watch's first answer is not its creation: %+v", created))
			return
		}
		o.mu.Lock()
		o.start = created.Header.Revision
		o.mu.Unlock()
	}
	for resp := range w {
		if err := resp.Err(); err != nil {
			if ctx.Err() == nil {
				fail(err)
			}
			return
		}
		o.mu.Lock()
		o.events = append(o.events, resp.Events...)
		o.mu.Unlock()
	}
}

// waitForAll waits until every observer has seen the last committed row
// above its start, or for at most within.
func waitForAll(observers []*observer, truth map[string]int64, within time.Duration) {
	var last int64
	for _, id := range truth {
		last = max(last, id)
	}
	deadline := time.Now().Add(within)
	for _, o := range observers {
		for time.Now().Before(deadline) {
			o.mu.Lock()
			done := o.err != nil || o.start >= last || (len(o.events) > 0 && o.events[len(o.events)-1].Kv.ModRevision >= last)
			o.mu.Unlock()
			if done {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func (o *observer) check(t *testing.T, truth map[string]int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err != nil {
		t.Errorf("%s: %v", o.name, o.err)
		return
	}
	var problems []string
	seen := map[string]int{}
	prev := o.start
	for _, e := range o.events {
		key, rev := string(e.Kv.Key), e.Kv.ModRevision
		seen[key]++
		if rev <= prev {
			problems = append(problems, fmt.Sprintf("%s at %d after %d (out of order or before the start)", key, rev, prev))
		}
		prev = rev
		if want, ok := truth[key]; !ok || want != rev {
			problems = append(problems, fmt.Sprintf("%s at %d, which the database does not hold (it holds %d)", key, rev, want))
		}
	}
	var missed []string
	for key, rev := range truth {
		switch {
		case o.listed != nil && rev <= o.start:
			if o.listed[key] != rev {
				missed = append(missed, fmt.Sprintf("%s@%d not listed at %d", key, rev, o.start))
			}
		case rev > o.start && seen[key] != 1:
			missed = append(missed, fmt.Sprintf("%s@%d seen %d times", key, rev, seen[key]))
		}
	}
	for key, rev := range o.listed {
		if truth[key] != rev || rev > o.start {
			problems = append(problems, fmt.Sprintf("listed %s@%d at %d: the database holds it at %d", key, rev, o.start, truth[key]))
		}
	}
	sort.Strings(missed)
	if len(missed) > 0 {
		problems = append(problems, fmt.Sprintf("%d rows missed: %s", len(missed), strings.Join(missed[:min(len(missed), 5)], ", ")))
	}
	if len(problems) > 0 {
		t.Errorf("%s from revision %d (%d events): %s", o.name, o.start, len(o.events), strings.Join(problems[:min(len(problems), 8)], "; "))
	}
}
