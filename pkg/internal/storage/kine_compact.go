//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	kineserver "github.com/k3s-io/kine/pkg/server"
)

// compactRevAPI is the row in which kine stores the value of etcd's
// compact_rev_key that k8s.io/apiserver's compactor writes (kine v0.17.5,
// pkg/server/compact.go: compactRevAPI; kine keeps compact_rev_key itself
// for its own compaction), as "VERSION|VALUE" (server.EncodeVersion).
const compactRevAPI = "compact_rev_key_apiserver"

// floorRefresh is how long a replica's compaction floor is taken as
// current before a read at an older revision reads it again from the
// database.
const floorRefresh = 2 * time.Second

// compactFloor answers a read or watch at a revision below the apiserver's
// last compaction as etcd does, with mvcc's "required revision has been
// compacted" (rpctypes.ErrGRPCCompacted, which k8s.io/apiserver turns into
// 410 Gone so that clients relist). kine deletes superseded rows through a
// compaction but keeps the latest CompactMinRetain revisions (1000), and
// serves reads among them; without this a list, continue token or watch at
// a compacted revision was served where etcd refuses it.
//
// The floor is the revision the apiserver compacted to, which its compactor
// writes to compact_rev_key in the transaction it runs just before
// Compact (k8s.io/apiserver/pkg/storage/etcd3/compact.go: Compact). It is
// read from the database, not only remembered from this process's Compact:
// the replicas of one database each run their own kine, and their
// compactors take turns through that key, so only one replica calls
// Compact in an interval; the others learn the floor from the key's row.
// kine's own compact revision (compact_rev_key's prev_revision) is not the
// floor: it stays CompactMinRetain below the apiserver's.
//
// Reading the key costs one indexed query, so the floor is cached per kine
// instance: raised at once by a Compact through this instance, and read
// again from the database by a read at a revision at or above it when the
// cached value is older than floorRefresh (reads at the current revision,
// revision 0, never need it). The floor only rises, so a stale cache only
// lets a read at a just-compacted revision through, as kine alone does,
// and never refuses a read that etcd would serve.
type compactFloor struct {
	kineserver.Backend

	floor  atomic.Int64
	readAt atomic.Int64 // unix nanoseconds of the last read of the key
	mu     sync.Mutex   // one read of the key at a time
}

func newCompactFloor(b kineserver.Backend) *compactFloor {
	return &compactFloor{Backend: b}
}

// raise sets the floor to rev when that is higher.
func (b *compactFloor) raise(rev int64) {
	for {
		cur := b.floor.Load()
		if rev <= cur || b.floor.CompareAndSwap(cur, rev) {
			return
		}
	}
}

// compacted reports the floor when revision (0: the current revision) is
// below it.
func (b *compactFloor) compacted(ctx context.Context, revision int64) (int64, bool) {
	if revision <= 0 {
		return 0, false
	}
	if floor := b.floor.Load(); revision < floor {
		return floor, true
	}
	if time.Since(time.Unix(0, b.readAt.Load())) < floorRefresh {
		return 0, false
	}
	b.refresh(ctx)
	floor := b.floor.Load()
	return floor, revision < floor
}

// refresh reads the apiserver's compact revision from the database. A
// failed read keeps the floor as it is (the read it was for then goes to
// kine, which answers as before).
func (b *compactFloor) refresh(ctx context.Context) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if time.Since(time.Unix(0, b.readAt.Load())) < floorRefresh {
		return // another read refreshed it meanwhile
	}
	_, kv, err := b.Backend.Get(ctx, compactRevAPI, 0, false)
	if err != nil {
		return
	}
	if kv != nil {
		// The compactor's first write, at bootstrap, is "0"; kine releases
		// before v0.14 stored only the version (value "0" too).
		_, value := kineserver.DecodeVersion(kv.Value)
		if rev, err := strconv.ParseInt(string(value), 10, 64); err == nil {
			b.raise(rev)
		}
	}
	b.readAt.Store(time.Now().UnixNano())
}

func (b *compactFloor) Compact(ctx context.Context, revision int64) (int64, error) {
	rev, err := b.Backend.Compact(ctx, revision)
	if err == nil || err == kineserver.ErrCompacted {
		b.raise(revision)
	}
	return rev, err
}

func (b *compactFloor) Get(ctx context.Context, key string, revision int64, keysOnly bool) (int64, *kineserver.KeyValue, error) {
	if _, ok := b.compacted(ctx, revision); ok {
		return b.currentRevision(ctx), nil, kineserver.ErrCompacted
	}
	return b.Backend.Get(ctx, key, revision, keysOnly)
}

func (b *compactFloor) List(ctx context.Context, key, end string, limit, revision int64, keysOnly bool) (int64, []*kineserver.KeyValue, error) {
	if _, ok := b.compacted(ctx, revision); ok {
		return b.currentRevision(ctx), nil, kineserver.ErrCompacted
	}
	return b.Backend.List(ctx, key, end, limit, revision, keysOnly)
}

func (b *compactFloor) ListStream(ctx context.Context, key, end string, limit, revision int64, keysOnly bool) kineserver.ListResult {
	if _, ok := b.compacted(ctx, revision); ok {
		kvc := make(chan *kineserver.KeyValue)
		errc := make(chan error, 1)
		errc <- kineserver.ErrCompacted
		close(kvc)
		close(errc)
		return kineserver.ListResult{CurrentRevision: b.currentRevision(ctx), KVc: kvc, Errorc: errc}
	}
	return b.Backend.ListStream(ctx, key, end, limit, revision, keysOnly)
}

func (b *compactFloor) Count(ctx context.Context, key, end string, revision int64) (int64, int64, error) {
	if _, ok := b.compacted(ctx, revision); ok {
		return b.currentRevision(ctx), 0, kineserver.ErrCompacted
	}
	return b.Backend.Count(ctx, key, end, revision)
}

// Watch from a revision below the floor answers as kine does for a
// revision it compacted itself (logstructured.Watch): a result with
// CompactRevision set, which kine's watch server sends to the client as
// the watch's cancellation with etcd's compacted error and that compact
// revision (pkg/server/watch.go, watcher.watch), as etcd does.
//
// A watch from the floor itself is served, and its events at the floor
// lose their previous value, as etcd's do: etcd reads an event's previous
// value at the revision before it (v3rpc/watch.go, sendLoop), which is
// compacted. Later events are above any floor and pass unchanged.
func (b *compactFloor) Watch(ctx context.Context, revision int64) kineserver.WatchResult {
	if floor, ok := b.compacted(ctx, revision); ok {
		eventc := make(chan kineserver.EventBatch)
		errc := make(chan error)
		close(eventc)
		close(errc)
		return kineserver.WatchResult{CurrentRevision: b.currentRevision(ctx), CompactRevision: floor, Eventc: eventc, Errorc: errc}
	}
	wr := b.Backend.Watch(ctx, revision)
	floor := b.floor.Load()
	if revision <= 0 || revision > floor || wr.CompactRevision != 0 {
		return wr
	}
	in := wr.Eventc
	out := make(chan kineserver.EventBatch, cap(in))
	wr.Eventc = out
	go func() {
		defer close(out)
		for batch := range in {
			batch = withoutCompactedPrev(batch, floor)
			select {
			case out <- batch:
			case <-ctx.Done():
				return // kine's watch ends on ctx too
			}
		}
	}()
	return wr
}

// withoutCompactedPrev is batch with no previous value on its events at or
// below floor. Events are shared by the watches of one poll: changed ones
// are copies, in a new slice.
func withoutCompactedPrev(batch kineserver.EventBatch, floor int64) kineserver.EventBatch {
	var events []*kineserver.Event
	for i, e := range batch.Events {
		if e == nil || e.Create || e.PrevKV == nil || e.KV == nil || e.KV.ModRevision > floor {
			continue
		}
		if events == nil {
			events = append([]*kineserver.Event(nil), batch.Events...)
		}
		c := *e
		c.PrevKV = nil
		events[i] = &c
	}
	if events != nil {
		batch.Events = events
	}
	return batch
}

// currentRevision is the header revision of a compacted answer (0 when
// kine cannot tell; the client reads the error, not the header).
func (b *compactFloor) currentRevision(ctx context.Context) int64 {
	rev, _ := b.Backend.CurrentRevision(ctx)
	return rev
}
