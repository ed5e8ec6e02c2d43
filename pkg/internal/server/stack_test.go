package server

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"
)

// With the floor held, the goroutines started after a collection start
// with a stack of at least 32 KB (Go's own choice here: a few KB).
func TestStackFloorRaisesStartingStack(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := runtime.NumGoroutine()
	holdStackFloor(ctx)
	sample := []metrics.Sample{{Name: "/gc/stack/starting-size:bytes"}}
	for i := 0; i < 100; i++ {
		runtime.GC() // the floor's goroutines are counted once they wait at their depth
		metrics.Read(sample)
		if sample[0].Value.Uint64() >= 32<<10 {
			break
		}
		runtime.Gosched()
	}
	if got := sample[0].Value.Uint64(); got < 32<<10 {
		t.Fatalf("new goroutines start with %d bytes of stack, want at least 32 KB", got)
	}
	if got := runtime.NumGoroutine() - before; got != stackFloorGoroutines {
		t.Errorf("%d goroutines started, want %d", got, stackFloorGoroutines)
	}
}
