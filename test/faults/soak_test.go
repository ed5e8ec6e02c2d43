//go:build faults

package faults

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
	"github.com/apiserver-boot/apiserver-boot/test/harness"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TestSoak (make soak; not in CI): SOAK_CLIENTS clients (32) doing mixed
// CRUD and SOAK_WATCHES watches (8) on two replicas for SOAK_DURATION (10
// minutes), on the three-member etcd and then on one PostgreSQL through
// kine (`-run TestSoak/etcd` or `TestSoak/postgres` for one), sampling each
// replica's RSS and goroutines every 10 s. No request may get a 5xx, every
// watch must see every write after its start exactly once and in order
// (soakWatch), and neither RSS nor goroutines may grow: the last quarter's
// average stays within 20% of the second quarter's (the first is warm-up).
func TestSoak(t *testing.T) {
	s := soak{duration: envDuration(t, "SOAK_DURATION", 10*time.Minute), clients: envInt(t, "SOAK_CLIENTS", 32), watches: envInt(t, "SOAK_WATCHES", 8)}
	if os.Getenv("SOAK") == "" {
		t.Skip("the soak runs with make soak (SOAK=1)")
	}
	t.Run("etcd", func(t *testing.T) {
		etcd := etcdCluster(t, etcdBin, 3)
		if !harness.WaitUntil(time.Minute, func() bool { ok, _, leader, _ := status(etcd[0]); return ok && leader != 0 }) {
			t.Fatal("etcd cluster not formed")
		}
		s.run(t, "soak", "on the three-member etcd", onEtcd(etcd))
	})
	t.Run("postgres", func(t *testing.T) {
		pg := testpg.Start(t)
		s.run(t, "soak-postgres", "on one PostgreSQL through kine (`--datastore-endpoint`; internal/testing/testpg)", []string{"--datastore-endpoint", pg.URL})
	})
}

// soak is one soak's load.
type soak struct {
	duration         time.Duration
	clients, watches int
}

// soakLoad counts the clients' requests and records the resourceVersion
// of each acknowledged write.
type soakLoad struct {
	ops, server5xx, other atomic.Int64
	firstErr              atomic.Value
	ctx                   context.Context

	mu    sync.Mutex
	acked []int64
	// deleted is the creation revision of each object whose delete was
	// acknowledged (a delete's answer is a Status, without its revision).
	deleted map[string]int64
	kinds   map[string]int // errors per kind (HTTP status and reason, or the client's error type)
}

func (l *soakLoad) record(err error) {
	if err == nil {
		l.ops.Add(1)
		return
	}
	if l.ctx.Err() != nil {
		return // the end of the run
	}
	kind := clientErrorKind(err)
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		kind = fmt.Sprintf("%d %s", status.Status().Code, status.Status().Reason)
	}
	if errors.As(err, &status) && status.Status().Code >= 500 {
		l.server5xx.Add(1)
	} else {
		l.other.Add(1)
	}
	l.firstErr.CompareAndSwap(nil, err.Error())
	l.mu.Lock()
	l.kinds[kind]++
	l.mu.Unlock()
}

// clientErrorKind names an error that is not the server's answer: a
// timeout, a cancellation, a connection failure, or the innermost error's
// type.
func clientErrorKind(err error) string {
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "client: timeout"
	case errors.Is(err, context.Canceled):
		return "client: canceled"
	case errors.As(err, &netErr):
		return "client: connection"
	}
	for errors.Unwrap(err) != nil {
		err = errors.Unwrap(err)
	}
	return fmt.Sprintf("client: %T", err)
}

// errorKinds is "N KIND, ..." for the errors of the run, most first.
func (l *soakLoad) errorKinds() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	kinds := slices.SortedFunc(maps.Keys(l.kinds), func(a, b string) int { return cmp.Compare(l.kinds[b], l.kinds[a]) })
	var out []string
	for _, k := range kinds {
		out = append(out, fmt.Sprintf("%d %s", l.kinds[k], k))
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// loadAvg is the machine's load average (1, 5, 15 min).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "?"
}

func (l *soakLoad) ack(rv string) {
	n, err := strconv.ParseInt(rv, 10, 64)
	if err != nil {
		return
	}
	l.mu.Lock()
	l.acked = append(l.acked, n)
	l.mu.Unlock()
}

// client creates, gets, updates, lists and deletes Tasks through r until
// the run ends.
func (l *soakLoad) client(r *replica, i int) {
	client := tasksOf(r)
	for n := 0; l.ctx.Err() == nil && n < 1_000_000; n++ {
		name := fmt.Sprintf("soak-%d-%d", i, n)
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ops.example.com/v1", "kind": "Task", "metadata": map[string]any{"name": name}}}
		created, err := client.Create(l.ctx, obj, metav1.CreateOptions{})
		l.record(err)
		if err != nil {
			continue
		}
		l.ack(created.GetResourceVersion())
		_, err = client.Get(l.ctx, name, metav1.GetOptions{})
		l.record(err)
		created.SetLabels(map[string]string{"round": strconv.Itoa(n)})
		updated, err := client.Update(l.ctx, created, metav1.UpdateOptions{})
		l.record(err)
		if err == nil {
			l.ack(updated.GetResourceVersion())
		}
		_, err = client.List(l.ctx, metav1.ListOptions{Limit: 50})
		l.record(err)
		err = client.Delete(l.ctx, name, metav1.DeleteOptions{})
		l.record(err)
		if err == nil {
			l.mu.Lock()
			l.deleted[name], _ = strconv.ParseInt(created.GetResourceVersion(), 10, 64)
			l.mu.Unlock()
		}
	}
}

// end creates one more Task through r once the clients have stopped: its
// revision is above every acknowledged write's, deletes included, so the
// watches are waited for up to it.
func (l *soakLoad) end(t *testing.T, r *replica) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ops.example.com/v1", "kind": "Task", "metadata": map[string]any{"name": "soak-end"}}}
	created, err := tasksOf(r).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the last create, after the clients: %v", err)
	}
	l.ack(created.GetResourceVersion())
}

// run is one soak on two replicas started with the storage flags, and
// writes its section of docs/reliability.md.
func (s soak) run(t *testing.T, section, on string, storage []string) {
	state := t.TempDir()
	replicas := []*replica{startReplica(t, "a", apiserverBin, state, storage), startReplica(t, "b", apiserverBin, state, storage)}
	ctx, cancel := context.WithTimeout(context.Background(), s.duration)
	defer cancel()
	l := &soakLoad{ctx: ctx, kinds: map[string]int{}, deleted: map[string]int64{}}
	loadBefore := loadAvg()
	var wg sync.WaitGroup
	for i := range s.clients {
		wg.Go(func() { l.client(replicas[i%len(replicas)], i) })
	}
	var watches []*soakWatch
	for i := range s.watches {
		// The watches start spread over the first minute.
		w := startSoakWatch(t, replicas[i%len(replicas)], time.Duration(i)*min(time.Minute, s.duration/4)/time.Duration(s.watches))
		watches = append(watches, w)
	}
	samples := sampleReplicas(t, ctx, replicas)
	wg.Wait()
	l.end(t, replicas[0])
	exactness := checkSoakWatches(t, watches, l.acked, l.deleted)

	var b strings.Builder
	fmt.Fprintf(&b, "## Soak%s\n\n`make soak`: %d clients (create, get, update, list of 50, delete) and %d watches on two replicas for %s, %s; RSS and goroutines of each replica sampled every 10 s (the first quarter is warm-up).\n\n", map[bool]string{true: ", on PostgreSQL"}[section != "soak"], s.clients, s.watches, s.duration, on)
	fmt.Fprintf(&b, "Requests answered: %d (%.0f/s); 5xx: %d; other errors: %d (by kind: %s). Load average (1, 5, 15 min) at the start: %s, at the end: %s (%d CPUs).\n\n", l.ops.Load(), float64(l.ops.Load())/s.duration.Seconds(), l.server5xx.Load(), l.other.Load(), l.errorKinds(), loadBefore, loadAvg(), runtime.NumCPU())
	fmt.Fprintf(&b, "Watches: %s.\n\n", exactness)
	growth(t, &b, samples, replicas)
	if l.server5xx.Load() > 0 {
		t.Errorf("%d requests got a 5xx (first error: %v)", l.server5xx.Load(), l.firstErr.Load())
	}
	t.Log("\n" + b.String())
	writeSection(t, section, b.String())
}

// sample is one reading of each replica's RSS and goroutines.
type sample struct {
	at         time.Duration
	rss        []int64 // kB per replica
	goroutines []int64
}

// sampleReplicas reads each replica's RSS and goroutines every 10 s until
// ctx ends.
func sampleReplicas(t *testing.T, ctx context.Context, replicas []*replica) []sample {
	var samples []sample
	startedAt := time.Now()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return samples
		case <-tick.C:
			s := sample{at: time.Since(startedAt)}
			for _, r := range replicas {
				s.rss = append(s.rss, rssKB(t, r.Pid()))
				s.goroutines = append(s.goroutines, goroutines(t, r))
			}
			samples = append(samples, s)
		}
	}
}

// growth writes the table of each replica's RSS and goroutines in the
// second and the last quarter of the run, and fails t where either grew.
func growth(t *testing.T, b *strings.Builder, samples []sample, replicas []*replica) {
	quarter := len(samples) / 4
	if quarter == 0 {
		t.Fatalf("%d samples: run longer (SOAK_DURATION)", len(samples))
	}
	avg := func(from, to, replica int, pick func(sample) []int64) float64 {
		var sum int64
		for _, s := range samples[from:to] {
			sum += pick(s)[replica]
		}
		return float64(sum) / float64(to-from)
	}
	rss := func(s sample) []int64 { return s.rss }
	gor := func(s sample) []int64 { return s.goroutines }
	b.WriteString("| replica | RSS, 2nd quarter | RSS, last quarter | goroutines, 2nd quarter | goroutines, last quarter |\n| --- | --- | --- | --- | --- |\n")
	for i, r := range replicas {
		r2, r4 := avg(quarter, 2*quarter, i, rss), avg(len(samples)-quarter, len(samples), i, rss)
		g2, g4 := avg(quarter, 2*quarter, i, gor), avg(len(samples)-quarter, len(samples), i, gor)
		fmt.Fprintf(b, "| %s | %.0f MiB | %.0f MiB | %.0f | %.0f |\n", r.name, r2/1024, r4/1024, g2, g4)
		if r4 > 1.2*r2 {
			t.Errorf("replica %s: RSS grew from %.0f to %.0f MiB", r.name, r2/1024, r4/1024)
		}
		if g4 > 1.2*g2+20 {
			t.Errorf("replica %s: goroutines grew from %.0f to %.0f", r.name, g2, g4)
		}
	}
}

// rssKB is a process's resident set size (VmRSS, kB).
func rssKB(t *testing.T, pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// goroutines reads go_goroutines from the replica's /metrics.
func goroutines(t *testing.T, r *replica) int64 {
	resp, err := r.client.Get(r.config.Host + "/metrics")
	if err != nil {
		t.Errorf("%s /metrics: %v", r.name, err)
		return 0
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(body), "\n") {
		if rest, ok := strings.CutPrefix(line, "go_goroutines "); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			return int64(n)
		}
	}
	t.Errorf("%s /metrics has no go_goroutines", r.name)
	return 0
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	if v := os.Getenv(name); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", name, v, err)
		}
		return d
	}
	return def
}

func envInt(t *testing.T, name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("%s=%q: want a positive number", name, v)
		}
		return n
	}
	return def
}
