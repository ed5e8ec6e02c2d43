//go:build faults

package faults

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// soakWatch watches Tasks on one replica as an informer does: it lists,
// watches from the list's resourceVersion with bookmarks, resumes from the
// last resourceVersion it saw after a stream ends, and lists again after a
// 410 (Expired). It records the resourceVersion of every event, so that
// checkSoakWatches can tell a missed, repeated or reordered one.
type soakWatch struct {
	r *replica

	mu       sync.Mutex
	segments []*segment // one per list: the events from its resourceVersion
	last     int64      // the last resourceVersion seen (events and bookmarks)
	restarts int

	cancel context.CancelFunc
	done   chan struct{}
}

// segment is what a watch saw from one list's resourceVersion until the
// next list (or the end).
type segment struct {
	from    int64
	events  []int64         // resourceVersions, in the order they arrived
	deleted map[string]bool // the objects of its DELETED events
	broken  bool            // ended by a 410: events after its last were not owed
}

// startSoakWatch starts a watch on r after delay.
func startSoakWatch(t *testing.T, r *replica, delay time.Duration) *soakWatch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &soakWatch{r: r, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return
		}
		w.run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-w.done })
	return w
}

func (w *soakWatch) run(ctx context.Context) {
	var rv string
	for ctx.Err() == nil {
		if rv == "" {
			list, err := tasksOf(w.r).List(ctx, metav1.ListOptions{})
			if err != nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			rv = list.GetResourceVersion()
			from, _ := strconv.ParseInt(rv, 10, 64)
			w.mu.Lock()
			w.segments = append(w.segments, &segment{from: from, deleted: map[string]bool{}})
			w.last = max(w.last, from)
			w.mu.Unlock()
		}
		s, err := tasksOf(w.r).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				rv = w.expired()
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		rv = w.events(ctx, s, rv)
		s.Stop()
		if ctx.Err() == nil {
			w.mu.Lock()
			w.restarts++
			w.mu.Unlock()
		}
	}
}

// expired marks the current segment broken and returns "" (list again).
func (w *soakWatch) expired() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.segments[len(w.segments)-1].broken = true
	return ""
}

// events reads s until it ends, and returns the resourceVersion to resume
// from ("" to list again).
func (w *soakWatch) events(ctx context.Context, s watch.Interface, rv string) string {
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-s.ResultChan():
			if !ok {
				return rv
			}
			if ev.Type == watch.Error {
				if status := apierrors.FromObject(ev.Object); apierrors.IsResourceExpired(status) || apierrors.IsGone(status) {
					return w.expired()
				}
				return rv
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				return rv
			}
			rv = obj.GetResourceVersion()
			n, _ := strconv.ParseInt(rv, 10, 64)
			w.mu.Lock()
			w.last = max(w.last, n)
			if ev.Type != watch.Bookmark {
				seg := w.segments[len(w.segments)-1]
				seg.events = append(seg.events, n)
				if ev.Type == watch.Deleted {
					seg.deleted[obj.GetName()] = true
				}
			}
			w.mu.Unlock()
		}
	}
}

func (w *soakWatch) reached() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.last
}

// checkSoakWatches waits (a minute at most) for every watch to reach the
// last write, stops them, and fails t unless each saw every write after
// its start exactly once, in order. The writes are those acknowledged to
// the clients and those any watch saw (a write whose answer was lost, a
// delete of another client's object: every event of one watch is owed to
// all). It returns the line for docs/reliability.md.
func checkSoakWatches(t *testing.T, watches []*soakWatch, acked []int64, deleted map[string]int64) string {
	truth := map[int64]bool{}
	for _, rv := range acked {
		truth[rv] = true
	}
	var top int64
	for rv := range truth {
		top = max(top, rv)
	}
	harness.WaitUntil(time.Minute, func() bool {
		return !slices.ContainsFunc(watches, func(w *soakWatch) bool { return w.reached() < top })
	})
	events, restarts, relists := 0, 0, 0
	for _, w := range watches {
		w.cancel()
		<-w.done
		for _, seg := range w.segments {
			for _, rv := range seg.events {
				truth[rv] = true
			}
		}
	}
	var missed, repeated, reordered int
	for i, w := range watches {
		restarts += w.restarts
		relists += len(w.segments) - 1
		if len(w.segments) == 0 {
			t.Errorf("watch %d on %s never started", i, w.r.name)
			continue
		}
		for j, seg := range w.segments {
			events += len(seg.events)
			m, rep, ord := seg.check(truth, segmentEnd(w, j, top))
			if !seg.broken {
				// A delete's revision is unknown, but above its object's
				// creation and below top: owed when the creation is.
				m += seg.missedDeletes(deleted)
			}
			if m+rep+ord > 0 {
				t.Errorf("watch %d on %s, from resourceVersion %d: %d writes missed, %d events repeated, %d out of order", i, w.r.name, seg.from, m, rep, ord)
			}
			missed, repeated, reordered = missed+m, repeated+rep, reordered+ord
		}
	}
	return fmt.Sprintf("%d, each listing first and resuming from its last resourceVersion as an informer does (%d resumed streams, %d lists again after a 410), started over the first minute; %d writes (%d creates and updates acknowledged with their revision, %d deletes acknowledged), %d events: %d missed, %d repeated, %d out of order",
		len(watches), restarts, relists, len(truth), len(acked), len(deleted), events, missed, repeated, reordered)
}

// missedDeletes counts the acknowledged deletes of objects created after
// seg's start that seg has no DELETED event of.
func (seg *segment) missedDeletes(deleted map[string]int64) int {
	n := 0
	for name, created := range deleted {
		if created > seg.from && !seg.deleted[name] {
			n++
		}
	}
	return n
}

// segmentEnd is the last resourceVersion segment j of w owes: the run's
// last write, or, for a segment a 410 ended, the last event it saw.
func segmentEnd(w *soakWatch, j int, top int64) int64 {
	seg := w.segments[j]
	if !seg.broken {
		return top
	}
	if len(seg.events) == 0 {
		return seg.from
	}
	return seg.events[len(seg.events)-1]
}

// check counts the writes of truth in (from, end] that seg lacks, its
// events seen more than once, and those that came after a later one.
func (seg *segment) check(truth map[int64]bool, end int64) (missed, repeated, reordered int) {
	seen := map[int64]bool{}
	prev := seg.from
	for _, rv := range seg.events {
		switch {
		case seen[rv]:
			repeated++
		case rv <= prev:
			reordered++
		}
		seen[rv] = true
		prev = max(prev, rv)
	}
	for rv := range truth {
		if rv > seg.from && rv <= end && !seen[rv] {
			missed++
		}
	}
	return missed, repeated, reordered
}

// TestSegmentCheck: the soak's accounting tells a missed write, a
// repeated event and one out of order, and owes nothing outside the
// segment's range.
func TestSegmentCheck(t *testing.T) {
	truth := map[int64]bool{10: true, 11: true, 12: true, 13: true, 20: true}
	for _, c := range []struct {
		name                        string
		seg                         segment
		end                         int64
		missed, repeated, reordered int
	}{
		{"every write once, in order", segment{from: 10, events: []int64{11, 12, 13}}, 13, 0, 0, 0},
		{"one missed", segment{from: 10, events: []int64{11, 13}}, 13, 1, 0, 0},
		{"one repeated", segment{from: 10, events: []int64{11, 12, 12, 13}}, 13, 0, 1, 0},
		{"one out of order", segment{from: 10, events: []int64{11, 13, 12}}, 13, 0, 0, 1},
		{"at or below the start is out of order", segment{from: 11, events: []int64{11, 12, 13}}, 13, 0, 0, 1},
		{"beyond the end is not owed", segment{from: 10, events: []int64{11, 12, 13}}, 19, 0, 0, 0},
		{"up to the end is owed", segment{from: 10, events: []int64{11, 12, 13}}, 20, 1, 0, 0},
	} {
		m, rep, ord := c.seg.check(truth, c.end)
		if m != c.missed || rep != c.repeated || ord != c.reordered {
			t.Errorf("%s: missed %d, repeated %d, reordered %d; want %d, %d, %d", c.name, m, rep, ord, c.missed, c.repeated, c.reordered)
		}
	}
}

// TestMissedDeletes: an acknowledged delete of an object created after
// the segment's start is owed as a DELETED event; one created before is
// not (its delete's revision is unknown).
func TestMissedDeletes(t *testing.T) {
	seg := segment{from: 10, deleted: map[string]bool{"seen": true}}
	deleted := map[string]int64{"seen": 11, "lost": 12, "before": 9}
	if n := seg.missedDeletes(deleted); n != 1 {
		t.Errorf("missed deletes: %d, want 1 (lost)", n)
	}
}
