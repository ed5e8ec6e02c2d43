//go:build faults

package faults

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

// TestSoak (make soak; not in CI): SOAK_CLIENTS clients (32) doing mixed
// CRUD and SOAK_WATCHES watches (8) on two replicas for SOAK_DURATION (10
// minutes), sampling each replica's RSS and goroutines every 10 s. No
// request may get a 5xx, and neither RSS nor goroutines may grow: the last
// quarter's average stays within 20% of the second quarter's (the first is
// warm-up).
func TestSoak(t *testing.T) {
	duration := envDuration(t, "SOAK_DURATION", 10*time.Minute)
	clients := envInt(t, "SOAK_CLIENTS", 32)
	watches := envInt(t, "SOAK_WATCHES", 8)
	if os.Getenv("SOAK") == "" {
		t.Skip("the soak runs with make soak (SOAK=1)")
	}
	etcd := etcdCluster(t, etcdBin, 3)
	if !harness.WaitUntil(time.Minute, func() bool { ok, _, leader, _ := status(etcd[0]); return ok && leader != 0 }) {
		t.Fatal("etcd cluster not formed")
	}
	state := t.TempDir()
	replicas := []*replica{startReplica(t, "a", apiserverBin, state, onEtcd(etcd)), startReplica(t, "b", apiserverBin, state, onEtcd(etcd))}

	var ops, server5xx, other atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	var wg sync.WaitGroup
	record := func(err error) {
		if err == nil {
			ops.Add(1)
			return
		}
		if ctx.Err() != nil {
			return // the end of the run
		}
		var status apierrors.APIStatus
		if errors.As(err, &status) && status.Status().Code >= 500 {
			server5xx.Add(1)
		} else {
			other.Add(1)
		}
		firstErr.CompareAndSwap(nil, err.Error())
	}
	for i := range clients {
		r := replicas[i%len(replicas)]
		client := dynamic.NewForConfigOrDie(r.config).Resource(tasks).Namespace("default")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ctx.Err() == nil && n < 1_000_000; n++ {
				name := fmt.Sprintf("soak-%d-%d", i, n)
				obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ops.example.com/v1", "kind": "Task", "metadata": map[string]any{"name": name}}}
				created, err := client.Create(ctx, obj, metav1.CreateOptions{})
				record(err)
				if err != nil {
					continue
				}
				_, err = client.Get(ctx, name, metav1.GetOptions{})
				record(err)
				created.SetLabels(map[string]string{"round": strconv.Itoa(n)})
				_, err = client.Update(ctx, created, metav1.UpdateOptions{})
				record(err)
				_, err = client.List(ctx, metav1.ListOptions{Limit: 50})
				record(err)
				record(client.Delete(ctx, name, metav1.DeleteOptions{}))
			}
		}()
	}
	var events atomic.Int64
	for i := range watches {
		client := dynamic.NewForConfigOrDie(replicas[i%len(replicas)].config).Resource(tasks).Namespace("default")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				w, err := client.Watch(ctx, metav1.ListOptions{})
				if err != nil {
					record(err)
					time.Sleep(time.Second)
					continue
				}
				for range w.ResultChan() {
					events.Add(1)
				}
			}
		}()
	}

	type sample struct {
		at         time.Duration
		rss        []int64 // kB per replica
		goroutines []int64
	}
	var samples []sample
	startedAt := time.Now()
	tick := time.NewTicker(10 * time.Second)
	defer tick.Stop()
sampling:
	for {
		select {
		case <-ctx.Done():
			break sampling
		case <-tick.C:
			s := sample{at: time.Since(startedAt)}
			for _, r := range replicas {
				s.rss = append(s.rss, rssKB(t, r.Pid()))
				s.goroutines = append(s.goroutines, goroutines(t, r))
			}
			samples = append(samples, s)
		}
	}
	wg.Wait()

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
	var b strings.Builder
	fmt.Fprintf(&b, "## Soak\n\n`make soak`: %d clients (create, get, update, list of 50, delete) and %d watches on two replicas for %s, on the three-member etcd; RSS and goroutines of each replica sampled every 10 s (the first quarter is warm-up).\n\n", clients, watches, duration)
	fmt.Fprintf(&b, "Requests answered: %d (%.0f/s); watch events: %d; 5xx: %d; other errors: %d.\n\n", ops.Load(), float64(ops.Load())/duration.Seconds(), events.Load(), server5xx.Load(), other.Load())
	b.WriteString("| replica | RSS, 2nd quarter | RSS, last quarter | goroutines, 2nd quarter | goroutines, last quarter |\n| --- | --- | --- | --- | --- |\n")
	for i, r := range replicas {
		r2, r4 := avg(quarter, 2*quarter, i, rss), avg(len(samples)-quarter, len(samples), i, rss)
		g2, g4 := avg(quarter, 2*quarter, i, gor), avg(len(samples)-quarter, len(samples), i, gor)
		fmt.Fprintf(&b, "| %s | %.0f MiB | %.0f MiB | %.0f | %.0f |\n", r.name, r2/1024, r4/1024, g2, g4)
		if r4 > 1.2*r2 {
			t.Errorf("replica %s: RSS grew from %.0f to %.0f MiB", r.name, r2/1024, r4/1024)
		}
		if g4 > 1.2*g2+20 {
			t.Errorf("replica %s: goroutines grew from %.0f to %.0f", r.name, g2, g4)
		}
	}
	if server5xx.Load() > 0 {
		t.Errorf("%d requests got a 5xx (first error: %v)", server5xx.Load(), firstErr.Load())
	}
	t.Log("\n" + b.String())
	writeSection(t, "soak", b.String())
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
