//go:build !apiserverboot_nokine

package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// BenchmarkKineWatchStart measures what an informer's start costs through
// kine's socket (docs/storage.md): a LIST at revision 0 of 100 keys, then
// a watch from the revision after it, until the watch is created; and a
// watch from 50 revisions back, until it has sent those 50 events.
func BenchmarkKineWatchStart(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { watchStart(b, "sqlite://"+filepath.Join(b.TempDir(), "state.db")) })
	b.Run("postgres", func(b *testing.B) { watchStart(b, testpg.Start(b).URL) })
	b.Run("mysql", func(b *testing.B) { watchStart(b, testmysql.Start(b).URL) })
}

func watchStart(b *testing.B, endpoint string) {
	o := SQL{Endpoint: endpoint, ConnectTimeout: 5 * time.Second, CompactMinRetain: 1000, Replicas: 1}
	k, err := o.startKine(b.Context())
	if err != nil {
		b.Fatal(err)
	}
	defer k.Stop()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{k.Endpoint}, DialTimeout: 5 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := b.Context()
	var last int64
	for i := 0; i < 100; i++ {
		resp, err := c.Put(ctx, fmt.Sprintf("/bench/%03d", i), "v")
		if err != nil {
			b.Fatal(err)
		}
		last = resp.Header.Revision
	}
	b.Run("list-then-watch", func(b *testing.B) {
		for b.Loop() {
			list, err := c.Get(ctx, "/bench/", clientv3.WithPrefix())
			if err != nil || len(list.Kvs) != 100 {
				b.Fatalf("list: %d keys, %v", len(list.Kvs), err)
			}
			wctx, cancel := context.WithCancel(ctx)
			w := c.Watch(wctx, "/bench/", clientv3.WithPrefix(), clientv3.WithRev(list.Header.Revision+1), clientv3.WithCreatedNotify())
			if r := <-w; !r.Created {
				b.Fatalf("watch: %+v", r)
			}
			cancel()
		}
	})
	b.Run("watch-50-back", func(b *testing.B) {
		for b.Loop() {
			wctx, cancel := context.WithCancel(ctx)
			w := c.Watch(wctx, "/bench/", clientv3.WithPrefix(), clientv3.WithRev(last-49))
			for n := 0; n < 50; {
				r, ok := <-w
				if !ok || r.Err() != nil {
					b.Fatalf("watch: %v", r.Err())
				}
				n += len(r.Events)
			}
			cancel()
		}
	})
}
