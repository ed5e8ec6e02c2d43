//go:build faults

package faults

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
)

// watcher watches Tasks from a list's resourceVersion and, as an informer
// does, resumes from the last event's resourceVersion after every
// interruption (a closed stream, an error event, a refused connection): on
// the next of its replicas, so a watch of one replica that is killed
// resumes on the other when given both. It records each ADDED event and
// when it arrived.
type watcher struct {
	replicas []*replica
	before   map[string]bool // the objects of the list it started from

	mu     sync.Mutex
	seen   map[string]int       // ADDED events per object
	at     map[string]time.Time // when an object's first ADDED event arrived
	order  []string             // the ADDED events, in order
	starts []string             // the replica of each (re)start

	cancel context.CancelFunc
	done   chan struct{}
}

// startWatch lists Tasks through replicas[0] and watches from there.
func startWatch(t *testing.T, replicas ...*replica) *watcher {
	t.Helper()
	list, err := tasksOf(replicas[0]).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list through %s: %v", replicas[0].name, err)
	}
	w := &watcher{replicas: replicas, before: map[string]bool{}, seen: map[string]int{}, at: map[string]time.Time{}, done: make(chan struct{})}
	for _, o := range list.Items {
		w.before[o.GetName()] = true
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.run(ctx, list.GetResourceVersion())
	return w
}

func tasksOf(r *replica) dynamic.ResourceInterface {
	return dynamic.NewForConfigOrDie(r.config).Resource(tasks).Namespace("default")
}

func (w *watcher) run(ctx context.Context, rv string) {
	defer close(w.done)
	for i := 0; ctx.Err() == nil; i = (i + 1) % len(w.replicas) {
		r := w.replicas[i]
		s, err := tasksOf(r).Watch(ctx, metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		w.mu.Lock()
		w.starts = append(w.starts, r.name)
		w.mu.Unlock()
		rv = w.events(ctx, s, rv)
		s.Stop()
	}
}

// events reads s until it ends, an error event or ctx's end, and returns
// the resourceVersion to resume from.
func (w *watcher) events(ctx context.Context, s watch.Interface, rv string) string {
	for {
		select {
		case <-ctx.Done():
			return rv
		case ev, ok := <-s.ResultChan():
			if !ok {
				return rv
			}
			obj, isObj := ev.Object.(*unstructured.Unstructured)
			if !isObj {
				return rv // an error event: resume
			}
			rv = obj.GetResourceVersion()
			if ev.Type == watch.Added {
				w.mu.Lock()
				name := obj.GetName()
				if w.seen[name] == 0 {
					w.at[name] = time.Now()
				}
				w.seen[name]++
				w.order = append(w.order, name)
				w.mu.Unlock()
			}
		}
	}
}

// arrived is when the ADDED event of name arrived.
func (w *watcher) arrived(name string) (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	at, ok := w.at[name]
	return at, ok
}

func (w *watcher) added() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.order)
}

// check lists Tasks through r, waits (30 s at most) for the watch to
// have as many ADDED events as objects were created since it started,
// stops it, and fails t unless each of those objects was seen exactly once
// (acknowledged or not, a created object is in the list). It returns the
// line for docs/reliability.md.
func (w *watcher) check(t *testing.T, r *replica) string {
	t.Helper()
	final, err := tasksOf(r).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list through %s: %v", r.name, err)
	}
	var want []string
	for _, o := range final.Items {
		if !w.before[o.GetName()] {
			want = append(want, o.GetName())
		}
	}
	harness.WaitUntil(30*time.Second, func() bool { return w.added() >= len(want) })
	w.cancel()
	<-w.done
	var twice, never []string
	for _, name := range want {
		switch w.seen[name] {
		case 0:
			never = append(never, name)
		case 1:
		default:
			twice = append(twice, name)
		}
	}
	sort.Strings(never)
	sort.Strings(twice)
	if len(never) > 0 || len(twice) > 0 || len(w.order) != len(want) {
		t.Errorf("the resumed watch: %d objects created, %d events; never seen %v, seen more than once %v", len(want), len(w.order), first(never), first(twice))
	}
	return fmt.Sprintf("%d objects, %d ADDED events after %d watch (re)starts (on %s): each once", len(want), len(w.order), len(w.starts), strings.Join(w.starts, ", "))
}
