//go:build !apiserverboot_nokine

package storage

// A replacement for the part of kine (github.com/k3s-io/kine v0.17.5) that
// decides which revision is current and which rows a watch gets: its poll
// loop (pkg/logstructured/sqllog/sql.go: poll, startWatch), the start of its
// watches (pkg/logstructured/logstructured.go: Watch) and the revision of
// its reads at revision 0. Everything else (writes, reads at a revision,
// compaction, the etcd API server) is kine's, unchanged. When a kine release
// confirms revisions by commit rather than by insert (k3s-io/kine#676 and
// PR #746 are about this), revisionFeed can be dropped: serveKine wraps the
// backend in it in one place.
//
// What is wrong in kine: a revision is the row's id, handed out at INSERT,
// not at COMMIT. A transaction holding id N open while N+1 commits leaves a
// hole that kine reads as the present: a watch starts after SELECT MAX(id)
// (N+1) and drops N when it commits; a LIST at revision 0 answers revision
// N+1 without N, and the watch that follows it from N+2 never sees N; the
// poll loop starts at MAX(id) too and, after a hole has lasted a second,
// passes it for good. An object can then be missing from a watch cache and
// from every informer until they relist.
//
// What holds here: a revision is "settled" when every id at or below it is
// a row (committed, or a gap row "gap-N" that kine's own gap filling uses
// for an id whose transaction rolled back). revisionFeed keeps two marks:
// settled (every id at or below it is a row) and delivered (every row at
// or below it has been passed, in id order, to the watches). Reads at
// revision 0 read at the settled revision they wait for (the highest id
// visible when they start, so a client reads its own writes), and answer
// it as their header; watches are served from one poll loop that never
// moves past a hole: a hole is settled by inserting kine's gap row with
// that id, which the database makes wait until the transaction holding the
// id ends (a unique key held by an open transaction), and which fails when
// that transaction committed the id (the row is then read) or succeeds when
// it rolled back. A watch from revision R reads rows R..delivered from the
// table (all settled) and then follows the loop: every event after its
// start exactly once, in revision order. The current revision kine's watch
// server uses for progress notifications is the delivered one, which every
// watch has been sent.
//
// Why this way and not a wrapper that only waits for the holes below a
// watch's start before calling kine's Watch: kine's Watch reads MAX(id)
// again when it starts, after any such wait, and its poll loop both starts
// at MAX(id) and gives up on a hole after a second; neither can be fixed
// from outside. The cost: one indexed query on ids per read at revision 0
// (the ids above the settled revision: none when nothing was written), a
// second poll loop beside kine's (kine's still runs, for its TTL watch and
// the current revision of its compaction), and a read or a watch that
// meets a hole waits for the transaction holding it, as kine's poll loop
// already did.

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	kineserver "github.com/k3s-io/kine/pkg/server"
	"github.com/sirupsen/logrus"
)

const (
	// feedIDBatch is how many ids one query of the settle step reads.
	feedIDBatch = 10000
	// feedRowBatch is how many rows one poll reads (kine's PollBatchSize).
	feedRowBatch = 500
	// holeGrace is how long a hole is left alone before its gap row is
	// inserted: an insert whose id is handed out but whose row is not yet
	// in the table's index would otherwise lose its id to the gap row
	// (kine's poll loop waits about as long, FillRetryDelay).
	holeGrace = 5 * time.Millisecond
	// feedSubBuffer is how many poll batches a watch may fall behind before
	// it is ended (its client watches again from its last revision), as
	// kine's broadcaster ends a slow watch.
	feedSubBuffer = 1000
	// deliveredWait bounds how long the current revision or a watch's start
	// waits for the poll loop to pass on rows already settled.
	deliveredWait = 5 * time.Second
)

// revisionFeed wraps kine's backend: watches, the current revision and
// reads at revision 0 (see the comment at the top of this file).
type revisionFeed struct {
	kineserver.Backend

	db          *sql.DB
	rebind      func(string) string
	interval    time.Duration
	kick        chan struct{} // wakes the settle loop
	kickDeliver chan struct{} // wakes the delivery loop

	// settling is held (a token in it) by the one settle run at a time; a
	// channel, not a mutex, so that a read waiting for it gives up with
	// its context.
	settling   chan struct{}
	settled    atomic.Int64
	settleRuns atomic.Int64 // settle runs begun
	settledRun int64        // the last run that ended settled (settling)
	// promised is the highest revision a read at revision 0 answered or a
	// watch started at: the current revision (progress notifications) may
	// not be below it.
	promised atomic.Int64

	mu        sync.Mutex // delivered, subs and advanced change together
	delivered atomic.Int64
	subs      map[chan kineserver.EventBatch]struct{}
	advanced  chan struct{} // closed when delivered rises
}

// newRevisionFeed opens its own handle on the database of endpoint (the
// --datastore-endpoint), settles every id from kine's compact revision up
// to the highest one (waiting for transactions that hold one), and starts
// its poll loop, which ends with bctx (counted in wg).
func newRevisionFeed(ctx, bctx context.Context, wg *sync.WaitGroup, b kineserver.Backend, endpoint string, interval time.Duration) (*revisionFeed, error) {
	f, err := openRevisionFeed(ctx, b, endpoint, interval)
	if err != nil {
		return nil, err
	}
	f.start(bctx, wg)
	return f, nil
}

// openRevisionFeed is newRevisionFeed without the poll loop.
func openRevisionFeed(ctx context.Context, b kineserver.Backend, endpoint string, interval time.Duration) (*revisionFeed, error) {
	db, rebind, err := openFeedDB(endpoint)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(2)
	f := &revisionFeed{Backend: b, db: db, rebind: rebind, interval: interval,
		kick: make(chan struct{}, 1), kickDeliver: make(chan struct{}, 1), settling: make(chan struct{}, 1), subs: map[chan kineserver.EventBatch]struct{}{}, advanced: make(chan struct{})}
	compact, err := f.compactRevision(ctx)
	if err == nil {
		f.settled.Store(compact)
		var rev int64
		if rev, err = f.settle(ctx); err == nil {
			f.delivered.Store(rev)
		}
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("reading the revisions of kine's table: %w", err)
	}
	return f, nil
}

// start runs the poll loop until bctx ends (counted in wg), and then
// closes the database handle.
func (f *revisionFeed) start(bctx context.Context, wg *sync.WaitGroup) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer f.db.Close()
		f.poll(bctx)
	}()
}

// openFeedDB opens the database kine opens for endpoint (kine's defaults:
// the database kubernetes, PostgreSQL's name in lower case), and returns
// how to write its query parameters.
func openFeedDB(endpoint string) (*sql.DB, func(string) string, error) {
	scheme, dsn, _ := strings.Cut(endpoint, "://")
	same := func(q string) string { return q }
	switch scheme {
	case "sqlite":
		path, err := sqliteDSN(dsn)
		if err != nil {
			return nil, nil, err
		}
		db, err := sql.Open("sqlite", path)
		return db, same, err
	case "postgres", "postgresql":
		u, err := url.Parse("postgres://" + dsn)
		if err != nil {
			return nil, nil, err
		}
		if u.Path == "" || u.Path == "/" {
			u.Path = "/kubernetes"
		}
		u.Path = strings.ToLower(u.Path)
		db, err := sql.Open("pgx", u.String())
		return db, numbered, err
	case "mysql":
		cfg, err := mysqlConfig(dsn)
		if err != nil {
			return nil, nil, err
		}
		db, err := sql.Open("mysql", cfg)
		return db, same, err
	}
	return nil, nil, fmt.Errorf("no database for %q", scheme)
}

// numbered writes PostgreSQL's $1, $2… for each ?.
func numbered(q string) string {
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

func (f *revisionFeed) compactRevision(ctx context.Context) (int64, error) {
	var rev sql.NullInt64
	err := f.db.QueryRowContext(ctx, `SELECT MAX(prev_revision) FROM kine WHERE name = 'compact_rev_key'`).Scan(&rev)
	return rev.Int64, err
}

// ids reads the ids above after, up to feedIDBatch of them, in order.
func (f *revisionFeed) ids(ctx context.Context, after int64) ([]int64, error) {
	rows, err := f.db.QueryContext(ctx, f.rebind(`SELECT id FROM kine WHERE id > ? ORDER BY id LIMIT ?`), after, feedIDBatch)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// holes are the ids from after+1 up to the last of ids that ids lacks.
func holes(after int64, ids []int64) []int64 {
	var out []int64
	next := after + 1
	for _, id := range ids {
		for ; next < id; next++ {
			out = append(out, next)
		}
		next = id + 1
	}
	return out
}

// settle raises the settled revision to the highest id visible now, once
// every id below it is a row, and returns it. One settle runs at a time;
// a caller that waited for the lock takes the result of a run that began
// after it arrived (that run saw every write committed before the caller
// came), and otherwise runs one itself.
func (f *revisionFeed) settle(ctx context.Context) (int64, error) {
	arrived := f.settleRuns.Load()
	select {
	case f.settling <- struct{}{}:
	case <-ctx.Done():
		return f.settled.Load(), fmt.Errorf("waiting for the SQL revisions to settle (an insert's transaction is still open): %w", ctx.Err())
	}
	defer func() { <-f.settling }()
	if f.settledRun > arrived {
		return f.settled.Load(), nil
	}
	run := f.settleRuns.Add(1)
	for {
		from := f.settled.Load()
		ids, err := f.ids(ctx, from)
		if err != nil {
			return from, err
		}
		if len(holes(from, ids)) > 0 {
			// Most holes are inserts that commit within milliseconds:
			// read again after holeGrace, and fill what is still missing.
			select {
			case <-time.After(holeGrace):
			case <-ctx.Done():
				return from, ctx.Err()
			}
			if ids, err = f.ids(ctx, from); err != nil {
				return from, err
			}
			if err := f.fillHoles(ctx, holes(from, ids)); err != nil {
				return from, err
			}
		}
		if len(ids) > 0 {
			f.settled.Store(ids[len(ids)-1])
		}
		if len(ids) < feedIDBatch {
			f.settledRun = run
			f.pokeDelivery()
			return f.settled.Load(), nil
		}
	}
}

// fillHoles waits until each id of missing is a row: the ids whose insert
// is still open wait for it (see fill).
func (f *revisionFeed) fillHoles(ctx context.Context, missing []int64) error {
	if len(missing) == 0 {
		return nil
	}
	compact, err := f.compactRevision(ctx)
	if err != nil {
		return err
	}
	for _, id := range missing {
		if id <= compact {
			continue // deleted by a compaction, not a hole
		}
		if err := f.fill(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// fill makes id a row: kine's gap row (pkg/drivers/generic: Fill, a
// deleted row named gap-ID that kine's watches skip) unless the id is
// there. Inserting it waits, in PostgreSQL and MySQL, for a transaction
// that holds that id in the primary key; if that transaction commits, the
// insert fails on the key and the row is there. Whatever the error, the
// id is looked up: present is settled.
func (f *revisionFeed) fill(ctx context.Context, id int64) error {
	var err error
	for try := 0; try < 5; try++ {
		_, err = f.db.ExecContext(ctx, f.rebind(`INSERT INTO kine(id, name, created, deleted, create_revision, prev_revision, lease, value, old_value) VALUES(?, ?, 0, 1, 0, 0, 0, NULL, NULL)`),
			id, fmt.Sprintf("gap-%d", id))
		if err == nil {
			return nil
		}
		var n int
		if qerr := f.db.QueryRowContext(ctx, f.rebind(`SELECT COUNT(*) FROM kine WHERE id = ?`), id).Scan(&n); qerr == nil && n > 0 {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	return fmt.Errorf("revision %d: waiting for its transaction: %w", id, err)
}

// readRevision is the revision a read at revision (0: the current one)
// reads at: a settled one, no lower than any write committed before it.
func (f *revisionFeed) readRevision(ctx context.Context, revision int64) (int64, error) {
	if revision != 0 {
		return revision, nil
	}
	rev, err := f.settle(ctx)
	if err != nil {
		return 0, err
	}
	f.promise(rev)
	if rev > f.delivered.Load() {
		f.poke()
	}
	return rev, nil
}

// promise raises the promised revision to rev.
func (f *revisionFeed) promise(rev int64) {
	for p := f.promised.Load(); p < rev && !f.promised.CompareAndSwap(p, rev); p = f.promised.Load() {
	}
}

// poke wakes the settle loop and the delivery loop.
func (f *revisionFeed) poke() {
	select {
	case f.kick <- struct{}{}:
	default:
	}
	f.pokeDelivery()
}

func (f *revisionFeed) pokeDelivery() {
	select {
	case f.kickDeliver <- struct{}{}:
	default:
	}
}

func (f *revisionFeed) Get(ctx context.Context, key string, revision int64, keysOnly bool) (int64, *kineserver.KeyValue, error) {
	rev, err := f.readRevision(ctx, revision)
	if err != nil {
		return 0, nil, err
	}
	header, kv, err := f.Backend.Get(ctx, key, rev, keysOnly)
	if revision == 0 && err == nil {
		header = rev
	}
	return header, kv, err
}

func (f *revisionFeed) List(ctx context.Context, key, end string, limit, revision int64, keysOnly bool) (int64, []*kineserver.KeyValue, error) {
	rev, err := f.readRevision(ctx, revision)
	if err != nil {
		return 0, nil, err
	}
	header, kvs, err := f.Backend.List(ctx, key, end, limit, rev, keysOnly)
	if revision == 0 && err == nil {
		header = rev
	}
	return header, kvs, err
}

func (f *revisionFeed) ListStream(ctx context.Context, key, end string, limit, revision int64, keysOnly bool) kineserver.ListResult {
	rev, err := f.readRevision(ctx, revision)
	if err != nil {
		kvc := make(chan *kineserver.KeyValue)
		errc := make(chan error, 1)
		errc <- err
		close(kvc)
		close(errc)
		return kineserver.ListResult{KVc: kvc, Errorc: errc}
	}
	lr := f.Backend.ListStream(ctx, key, end, limit, rev, keysOnly)
	if revision == 0 && lr.CurrentRevision != 0 {
		lr.CurrentRevision = rev
	}
	return lr
}

func (f *revisionFeed) Count(ctx context.Context, key, end string, revision int64) (int64, int64, error) {
	rev, err := f.readRevision(ctx, revision)
	if err != nil {
		return 0, 0, err
	}
	header, n, err := f.Backend.Count(ctx, key, end, rev)
	if revision == 0 && err == nil {
		header = rev
	}
	return header, n, err
}

// CurrentRevision is the delivered revision: every watch has been sent the
// rows up to it, so kine's watch server may confirm it (progress
// notifications) to a watch that has seen them. It first waits for the
// delivery loop to deliver the promised revision, which a read at revision
// 0 answered or a watch started at (settled rows: only reading them is
// left): a progress notification below it would take a watch cache back.
// If that takes longer than deliveredWait it is an error, and kine's watch
// server sends no progress notification this time.
func (f *revisionFeed) CurrentRevision(ctx context.Context) (int64, error) {
	want := f.promised.Load()
	if d := f.deliveredAtLeast(ctx, want); d < want {
		return 0, fmt.Errorf("the watches have been sent revision %d, not yet %d", d, want)
	}
	return f.delivered.Load(), nil
}

// mysqlConfig is kine's MySQL DSN with its default database.
func mysqlConfig(dsn string) (string, error) {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return "", err
	}
	if cfg.DBName == "" {
		cfg.DBName = "kubernetes"
	}
	return cfg.FormatDSN(), nil
}

// poll settles the table every interval and when a write of this process
// or a read asks (kick), and passes what is settled to the watches, in id
// order. Delivery runs apart from settling, which may wait for an open
// transaction: rows a read's settle run settled meanwhile are delivered at
// once.
func (f *revisionFeed) poll(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer f.closeSubs()
		// The delivery loop: woken when a settle run of the poll loop or of
		// a read ended, by a write, by a wait for delivery.
		every(ctx, f.interval, f.kickDeliver, func() {
			if err := f.deliver(ctx, f.settled.Load()); err != nil && ctx.Err() == nil {
				logrus.Warnf("Reading kine's table for watches: %v", err)
			}
		})
	}()
	defer func() { <-done }()
	every(ctx, f.interval, f.kick, func() {
		f.pokeDelivery() // what is settled already goes first
		if _, err := f.settle(ctx); err != nil && ctx.Err() == nil {
			logrus.Warnf("Reading kine's table for watches: %v (retried in %s)", err, f.interval)
		}
		f.pokeDelivery()
	})
}

// every runs fn every interval and whenever wake is signalled, until ctx
// ends.
func every(ctx context.Context, interval time.Duration, wake <-chan struct{}, fn func()) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case <-wake:
		}
		fn()
	}
}

// deliver sends the rows after the delivered revision up to rev (settled)
// to every watch, and then counts them delivered.
func (f *revisionFeed) deliver(ctx context.Context, rev int64) error {
	for from := f.delivered.Load(); from < rev; from = f.delivered.Load() {
		events, err := f.rows(ctx, from, rev, feedRowBatch)
		if err != nil {
			return err
		}
		last := rev
		if len(events) == feedRowBatch {
			last = events[len(events)-1].KV.ModRevision
		}
		f.broadcast(kineserver.EventBatch{Events: withoutGaps(events), CurrentRev: last})
	}
	return nil
}

// broadcast sends batch to every watch and counts its revision delivered;
// a watch whose buffer is full is ended (its client watches again).
func (f *revisionFeed) broadcast(batch kineserver.EventBatch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.subs {
		select {
		case c <- batch:
		default:
			delete(f.subs, c)
			close(c)
		}
	}
	f.delivered.Store(batch.CurrentRev)
	close(f.advanced)
	f.advanced = make(chan struct{})
}

// deliveredAtLeast waits until the poll loop has delivered rev (settled
// already: only rows are left to read), for at most deliveredWait, and
// returns the delivered revision.
func (f *revisionFeed) deliveredAtLeast(ctx context.Context, rev int64) int64 {
	timeout := time.NewTimer(deliveredWait)
	defer timeout.Stop()
	for {
		f.mu.Lock()
		d, advanced := f.delivered.Load(), f.advanced
		f.mu.Unlock()
		if d >= rev {
			return d
		}
		f.pokeDelivery()
		select {
		case <-advanced:
		case <-timeout.C:
			return d
		case <-ctx.Done():
			return d
		}
	}
}

func (f *revisionFeed) subscribe() (chan kineserver.EventBatch, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan kineserver.EventBatch, feedSubBuffer)
	f.subs[c] = struct{}{}
	return c, f.delivered.Load()
}

func (f *revisionFeed) unsubscribe(c chan kineserver.EventBatch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.subs[c]; ok {
		delete(f.subs, c)
		close(c)
	}
}

func (f *revisionFeed) closeSubs() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.subs {
		delete(f.subs, c)
		close(c)
	}
}

// withoutGaps leaves out kine's gap rows, which are no events.
func withoutGaps(events []*kineserver.Event) []*kineserver.Event {
	out := events[:0:0]
	for _, e := range events {
		if !strings.HasPrefix(e.KV.Key, "gap-") {
			out = append(out, e)
		}
	}
	return out
}

// rows reads the rows after from up to to, at most limit (0: all), as
// kine's poll loop makes events of them (sqllog.scan, with values and
// previous values).
func (f *revisionFeed) rows(ctx context.Context, from, to int64, limit int) ([]*kineserver.Event, error) {
	q := `SELECT id, name, created, deleted, create_revision, prev_revision, lease, value, old_value FROM kine WHERE id > ? AND id <= ? ORDER BY id`
	args := []any{from, to}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	rows, err := f.db.QueryContext(ctx, f.rebind(q), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var events []*kineserver.Event
	for rows.Next() {
		var (
			id, createRev, prevRev, lease sql.NullInt64
			name                          sql.NullString
			created, deleted              sql.NullBool
			value, oldValue               []byte
		)
		if err := rows.Scan(&id, &name, &created, &deleted, &createRev, &prevRev, &lease, &value, &oldValue); err != nil {
			return nil, err
		}
		e := &kineserver.Event{Create: created.Bool, Delete: deleted.Bool,
			KV: &kineserver.KeyValue{Key: name.String, Value: value, CreateRevision: createRev.Int64, ModRevision: id.Int64, Lease: lease.Int64}}
		if created.Bool {
			e.KV.CreateRevision = id.Int64
		} else {
			e.PrevKV = &kineserver.KeyValue{Key: name.String, Value: oldValue, CreateRevision: createRev.Int64, ModRevision: prevRev.Int64, Lease: lease.Int64}
		}
		events = append(events, e)
	}
	return events, rows.Err()
}

// Watch sends the events after revision (0: after the delivered revision)
// exactly once, in revision order: first the rows up to the delivered
// revision, read from the table (all settled), then what the poll loop
// delivers after it. A revision below kine's compaction answers as kine's
// Watch does (CompactRevision set).
func (f *revisionFeed) Watch(ctx context.Context, revision int64) kineserver.WatchResult {
	ctx, cancel := context.WithCancel(ctx)
	sub, delivered := f.subscribe()
	result := make(chan kineserver.EventBatch, 100)
	errc := make(chan error, 1)
	after := delivered
	if revision > 0 {
		after = revision - 1
	}
	// Where the watch says it is: the delivered revision, or the one
	// before its start where that is higher and settled (the revision of
	// a list it follows, whose rows only wait to be read), never lower:
	// kine's watch server would take a revision it sends after a higher
	// one for a progress notification going back.
	start := delivered
	if after > delivered && after <= f.settled.Load() {
		start = after
		f.promise(start)
		f.pokeDelivery()
	}
	wr := kineserver.WatchResult{CurrentRevision: start, Eventc: result, Errorc: errc}
	first := kineserver.EventBatch{CurrentRev: start}
	if after < delivered {
		compact, err := f.compactRevision(ctx)
		if err == nil && after < compact {
			wr.CompactRevision = compact
		} else if err == nil {
			first.Events, err = f.history(ctx, after, delivered, compact)
		}
		if err != nil || wr.CompactRevision != 0 {
			if err != nil {
				errc <- err
			}
			cancel()
			f.unsubscribe(sub)
			close(result)
			return wr
		}
	}
	result <- first
	go f.follow(ctx, cancel, sub, result, max(after, delivered), start)
	return wr
}

// follow passes the batches of sub after from to result until ctx ends or
// sub is closed; a batch at or below the revision sent last (sent) holds
// nothing the watch is owed and is left out.
func (f *revisionFeed) follow(ctx context.Context, cancel context.CancelFunc, sub chan kineserver.EventBatch, result chan<- kineserver.EventBatch, from, sent int64) {
	defer cancel()
	defer close(result)
	defer f.unsubscribe(sub)
	for {
		select {
		case batch, ok := <-sub:
			if !ok {
				return
			}
			if batch.CurrentRev <= sent {
				continue
			}
			sent = batch.CurrentRev
			select {
			case result <- batch.After(from):
			case <-ctx.Done():
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// history is the events after from up to to, without previous values
// below compact (as kine's After).
func (f *revisionFeed) history(ctx context.Context, from, to, compact int64) ([]*kineserver.Event, error) {
	events, err := f.rows(ctx, from, to, 0)
	if err != nil {
		return nil, err
	}
	for _, e := range events {
		if e.PrevKV != nil && e.PrevKV.ModRevision < compact {
			e.PrevKV = nil
		}
	}
	return withoutGaps(events), nil
}

// Create, Update and Delete wake the poll loop, as kine's own writes wake
// its own: a watch sees a write through this process at once.
func (f *revisionFeed) Create(ctx context.Context, key string, value []byte, lease int64) (int64, error) {
	defer f.poke()
	return f.Backend.Create(ctx, key, value, lease)
}

func (f *revisionFeed) Update(ctx context.Context, key string, value []byte, revision, lease int64) (int64, *kineserver.KeyValue, bool, error) {
	defer f.poke()
	return f.Backend.Update(ctx, key, value, revision, lease)
}

func (f *revisionFeed) Delete(ctx context.Context, key string, revision int64) (int64, *kineserver.KeyValue, bool, error) {
	defer f.poke()
	return f.Backend.Delete(ctx, key, revision)
}
