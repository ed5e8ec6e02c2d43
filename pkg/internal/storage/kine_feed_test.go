//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/k3s-io/kine/pkg/drivers"
	"github.com/k3s-io/kine/pkg/drivers/generic"
)

// TestRevisionFeedNeverBelowAListedRevision: a LIST at revision 0 answers
// the settled revision, which the poll loop may not have passed on to the
// watches yet. Neither the current revision (which kine's watch server
// confirms in progress notifications to every watch of a stream) nor the
// first answer of a watch from the revision after that list may be below
// it: a watch cache told a lower revision than the one it listed at goes
// back. Here the poll loop starts only 300 ms after the list.
func TestRevisionFeedNeverBelowAListedRevision(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	endpoint := "sqlite://" + filepath.Join(t.TempDir(), "state.db")
	o := SQL{Endpoint: endpoint, ConnectTimeout: 5 * time.Second}
	bctx, stop := context.WithCancel(context.Background())
	wg := &sync.WaitGroup{}
	defer wg.Wait()
	defer stop()
	cfg := &drivers.Config{Endpoint: endpoint, ConnectionPoolConfig: generic.ConnectionPoolConfig{MaxIdle: 2},
		CompactTimeout: 5 * time.Second, CompactMinRetain: 1000, CompactBatchSize: 1000, PollBatchSize: 500, PollInterval: time.Hour}
	backend, err := o.openBackend(ctx, bctx, stop, wg, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f, err := openRevisionFeed(ctx, backend, endpoint, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := f.Create(ctx, fmt.Sprintf("/feed/%d", i), []byte("v"), 0); err != nil {
			t.Fatal(err)
		}
	}
	listed, kvs, err := f.List(ctx, "/feed/", "/feed0", 0, 0, false)
	if err != nil || len(kvs) != 3 {
		t.Fatalf("list: %d keys, %v", len(kvs), err)
	}
	if d := f.delivered.Load(); d >= listed {
		t.Fatalf("the poll loop, not started, delivered %d, at or above the listed %d: the test cannot tell", d, listed)
	}
	time.AfterFunc(300*time.Millisecond, func() { f.start(bctx, wg) })
	if rev, _ := f.CurrentRevision(ctx); rev < listed {
		t.Errorf("current revision %d, below the revision %d a list answered", rev, listed)
	}
	wr := f.Watch(ctx, listed+1)
	first := <-wr.Eventc
	if wr.CurrentRevision < listed || first.CurrentRev < listed {
		t.Errorf("a watch from %d (after a list at %d) started at %d, its first answer at %d", listed+1, listed, wr.CurrentRevision, first.CurrentRev)
	}
}
