//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"errors"
	"testing"
	"time"

	kineserver "github.com/k3s-io/kine/pkg/server"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apiserver/pkg/storage/etcd3"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// TestKineCompactionSeenByAnotherReplica: two apiservers' kines on one
// database; the first compacts as k8s.io/apiserver's compactor does
// (etcd3.Compact: compact_rev_key's transaction, then Compact). The
// second, which never compacted, then answers a list, a get, a count and a
// watch below that revision with etcd's compacted error (410 Gone to
// clients) within its floor's refresh, and still serves them at the
// compacted revision itself, as etcd does. kine alone keeps the latest
// 1000 revisions through a compaction and served them all.
func TestKineCompactionSeenByAnotherReplica(t *testing.T) {
	t.Run("postgres", func(t *testing.T) { compactionSeen(t, testpg.Start(t).URL) })
	t.Run("mysql", func(t *testing.T) { compactionSeen(t, testmysql.Start(t).URL) })
}

func compactionSeen(t *testing.T, endpoint string) {
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	client := func() *clientv3.Client {
		o := NewSQL()
		o.Endpoint = endpoint
		o.Replicas = 2
		return kineClient(t, ctx, o)
	}
	a, b := client(), client()

	old, err := a.Put(ctx, "/registry/pods/p", "1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Put(ctx, "/registry/pods/p", "2"); err != nil {
		t.Fatal(err)
	}
	at, err := a.Put(ctx, "/registry/pods/q", "1")
	if err != nil {
		t.Fatal(err)
	}
	oldRev, floor := old.Header.Revision, at.Header.Revision

	// b reads its floor before the compaction (a cached floor of 0).
	if _, err := b.Get(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(oldRev)); err != nil {
		t.Fatalf("list at revision %d before any compaction: %v", oldRev, err)
	}

	if _, _, _, err := etcd3.Compact(ctx, a, 0, floor); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// a compacted: it answers at once.
	if _, err := a.Get(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(oldRev)); !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("list at revision %d on the replica that compacted to %d: got %v, want %v", oldRev, floor, err, rpctypes.ErrCompacted)
	}
	// b learns it from the database, within floorRefresh.
	for {
		_, err := b.Get(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(oldRev))
		if errors.Is(err, rpctypes.ErrCompacted) {
			break
		}
		if err != nil {
			t.Fatalf("list at revision %d on the other replica: %v", oldRev, err)
		}
		if time.Since(start) > floorRefresh+5*time.Second {
			t.Fatalf("list at revision %d on the other replica still served %s after a compaction to %d (floor refreshed every %s)", oldRev, time.Since(start).Round(time.Millisecond), floor, floorRefresh)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("the other replica refused revision %d %s after the compaction", oldRev, time.Since(start).Round(time.Millisecond))

	for name, op := range map[string]clientv3.Op{
		"get":   clientv3.OpGet("/registry/pods/p", clientv3.WithRev(oldRev)),
		"count": clientv3.OpGet("/registry/pods/", clientv3.WithPrefix(), clientv3.WithCountOnly(), clientv3.WithRev(oldRev)),
		"page":  clientv3.OpGet("/registry/pods/", clientv3.WithPrefix(), clientv3.WithLimit(1), clientv3.WithRev(oldRev)),
	} {
		if _, err := b.Do(ctx, op); !errors.Is(err, rpctypes.ErrCompacted) {
			t.Errorf("%s at revision %d after a compaction to %d: got %v, want %v", name, oldRev, floor, err, rpctypes.ErrCompacted)
		}
	}
	r, err := b.Get(ctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(floor))
	if err != nil || len(r.Kvs) != 2 {
		t.Fatalf("list at the compacted revision %d itself: %v, %d keys, want 2", floor, err, len(r.Kvs))
	}

	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	w := b.Watch(wctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(oldRev))
	select {
	case resp := <-w:
		if !resp.Canceled || resp.CompactRevision != floor || !errors.Is(resp.Err(), rpctypes.ErrCompacted) {
			t.Fatalf("watch from %d after a compaction to %d: canceled %v, compact revision %d, error %v; want canceled at %d with %v",
				oldRev, floor, resp.Canceled, resp.CompactRevision, resp.Err(), floor, rpctypes.ErrCompacted)
		}
	case <-ctx.Done():
		t.Fatal("no answer to a watch from a compacted revision")
	}

	// A watch from the floor gets the write at the floor, without its
	// previous value (compacted), as on etcd.
	w = b.Watch(wctx, "/registry/pods/", clientv3.WithPrefix(), clientv3.WithRev(floor-1), clientv3.WithPrevKV())
	if resp := <-w; !resp.Canceled || resp.CompactRevision != floor {
		t.Fatalf("watch from %d, below the compaction to %d: canceled %v, compact revision %d", floor-1, floor, resp.Canceled, resp.CompactRevision)
	}
	if _, err := a.Put(ctx, "/registry/pods/q", "2"); err != nil {
		t.Fatal(err)
	}
	w = b.Watch(wctx, "/registry/pods/q", clientv3.WithRev(floor), clientv3.WithPrevKV())
	var events []*clientv3.Event
	for len(events) < 2 {
		select {
		case resp := <-w:
			if err := resp.Err(); err != nil {
				t.Fatalf("watch from the compacted revision %d: %v", floor, err)
			}
			events = append(events, resp.Events...)
		case <-ctx.Done():
			t.Fatalf("watch from the compacted revision %d: %d events, want 2", floor, len(events))
		}
	}
	if events[0].Kv.ModRevision != floor || events[1].PrevKv == nil || string(events[1].PrevKv.Value) != "1" {
		t.Fatalf("watch from the compacted revision %d: events %v, want the create at %d and the update with its previous value", floor, events, floor)
	}
}

// TestWithoutCompactedPrev: events at or below the floor lose their
// previous value (etcd reads it at the compacted revision before them),
// creates and later events keep theirs, and the batch it was given, which
// kine shares between the watches of one poll, is left as it was.
func TestWithoutCompactedPrev(t *testing.T) {
	prev := &kineserver.KeyValue{Key: "/a", ModRevision: 3}
	update := &kineserver.Event{KV: &kineserver.KeyValue{Key: "/a", ModRevision: 5}, PrevKV: prev}
	create := &kineserver.Event{Create: true, KV: &kineserver.KeyValue{Key: "/b", ModRevision: 5}, PrevKV: &kineserver.KeyValue{}}
	later := &kineserver.Event{KV: &kineserver.KeyValue{Key: "/a", ModRevision: 6}, PrevKV: &kineserver.KeyValue{Key: "/a", ModRevision: 5}}
	shared := kineserver.EventBatch{CurrentRev: 6, Events: []*kineserver.Event{update, create, later}}

	got := withoutCompactedPrev(shared, 5)
	if got.Events[0].PrevKV != nil || got.Events[0].KV != update.KV {
		t.Errorf("update at the floor: previous value %v, want none (and the same value)", got.Events[0].PrevKV)
	}
	if got.Events[1] != create || got.Events[2] != later {
		t.Errorf("a create at the floor and an update above it changed: %v", got.Events)
	}
	if shared.Events[0] != update || update.PrevKV != prev {
		t.Errorf("the shared batch changed: %v, previous value %v", shared.Events, update.PrevKV)
	}
	if got := withoutCompactedPrev(shared, 4); got.Events[0] != update {
		t.Errorf("floor below every event: %v changed", got.Events)
	}
}

// kineClient starts kine as o configures it, stopped on t's cleanup, and
// returns an etcd client of it.
func kineClient(t *testing.T, ctx context.Context, o SQL) *clientv3.Client {
	t.Helper()
	k, err := o.startKine(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Stop)
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{k.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
