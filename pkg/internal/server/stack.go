package server

import "context"

// The stack floor. Go starts a goroutine with a stack of the average size
// the goroutines had at the last collection (GODEBUG adaptivestackstart,
// on by default), and copies the stack to one twice as large whenever it
// runs out. A request to the server runs in three new goroutines (the
// HTTP/2 stream's, the timeout filter's, and the finisher's of a write),
// which reach the depth of JSON decoding, validation and managedFields
// from a stack sized by the average of the server's idle goroutines, a
// few KB (2-4 KB measured): each request's goroutines grow their stacks
// several times, about a tenth of the CPU of a create (docs/benchmarks.md,
// notes on item 4). stackFloorGoroutines goroutines, each waiting at a
// depth of stackFloorBytes, raise that average while the server has few
// goroutines (with the 140 of an idle standalone server, new goroutines
// start at 64 KB: about 7 MB more RSS), and weigh less and less as
// goroutines grow in number (thousands of watches), where the average of
// what they use is Go's own choice again.
const (
	stackFloorGoroutines = 4
	stackFloorBytes      = 1 << 20
	stackFloorFrame      = 64 << 10 // below the size the compiler moves to the heap
)

// holdStackFloor starts the stack floor's goroutines; they return when ctx
// is done.
func holdStackFloor(ctx context.Context) {
	for range stackFloorGoroutines {
		go holdStack(ctx.Done(), stackFloorBytes/stackFloorFrame)
	}
}

// holdStack waits for done at a depth of frames frames of stackFloorFrame
// bytes each.
func holdStack(done <-chan struct{}, frames int) byte {
	var frame [stackFloorFrame]byte
	frame[frames%len(frame)] = byte(frames)
	if frames > 1 {
		frame[0] = holdStack(done, frames-1)
	} else {
		<-done
	}
	return frame[0] + frame[len(frame)-1]
}
