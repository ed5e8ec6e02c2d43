package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// Item 10: the generated apiserver of item 4's project on its embedded
// etcd, on kine+SQLite and on kine+Postgres, side by side in one run; then
// what kine costs its binary and its build.

// storageWatched is how many creates the watch latency is measured over.
const storageWatched = 200

// storage is item 10.
func (b *bench) storage() error {
	p, err := b.servingProject()
	if err != nil {
		return err
	}
	if err := b.storageServing(p); err != nil {
		return err
	}
	return b.kineBuild(p)
}

// storageServing starts the three servers, measures them and stops them.
func (b *bench) storageServing(p *servingProject) error {
	pgURL, stopPG, err := b.storagePostgres()
	if err != nil {
		return err
	}
	defer stopPG()
	ts, err := b.storageServers(p, pgURL)
	defer func() {
		for _, t := range ts {
			t.srv.Stop(15 * time.Second)
		}
	}()
	if err != nil {
		return err
	}
	if err := b.storageCreates(ts); err != nil {
		return err
	}
	lat, detail, _, err := b.lists(ts, "c1", "application/json", "")
	if err != nil {
		return err
	}
	b.storageRows(ts, "LIST 1,000, JSON (median of 5)", func(t *target) string { return ms(lat[t]) },
		func(t, ref *target) float64 { return ratio(lat[t], lat[ref]) })
	b.note("10", "LIST of the 1,000 objects of namespace c1, one untimed then five alternating between the servers: %s", detail)
	return b.watchRows(ts)
}

// storagePostgres starts a PostgreSQL server (stopped when the bench ends)
// and creates the database of item 10; "" when PostgreSQL is not installed.
// stop stops the server.
func (b *bench) storagePostgres() (url string, stop func(), err error) {
	pg, err := testpg.New()
	if errors.Is(err, testpg.ErrNotInstalled) {
		b.note("10", "SKIPPED kine+Postgres: %v", err)
		return "", func() {}, nil
	}
	if err != nil {
		return "", nil, err
	}
	stop = func() {
		if err := pg.Close(); err != nil {
			b.logf("stopping PostgreSQL: %v", err)
		}
	}
	out, _ := proc.Command(b.ctx, b.tmp, nil, filepath.Join(mustBinDir(), "postgres"), "--version")
	b.note("10", "Postgres: %s, started by internal/testing/testpg on loopback (initdb into a temporary folder, default settings: fsync and synchronous_commit on)", strings.TrimSpace(out))
	if url, err = pg.CreateDatabase("bench"); err != nil {
		stop()
		return "", nil, err
	}
	return url, stop, nil
}

func mustBinDir() string {
	dir, _ := testpg.BinDir()
	return dir
}

// storageServers starts the serving project's apiserver on the embedded
// etcd, kine+SQLite and (pgURL not empty) kine+Postgres, at once; the
// embedded etcd first (the reference).
func (b *bench) storageServers(p *servingProject, pgURL string) ([]*target, error) {
	dir := filepath.Join(b.tmp, "storage")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	specs := []struct {
		id, name string
		args     []string
	}{
		{"storage-etcd", "embedded etcd", []string{"--embedded-etcd-data-dir", filepath.Join(dir, "etcd")}},
		{"storage-sqlite", "kine+SQLite", []string{"--datastore-endpoint", "sqlite://" + filepath.Join(dir, "state.db")}},
	}
	if pgURL != "" {
		specs = append(specs, struct {
			id, name string
			args     []string
		}{"storage-postgres", "kine+Postgres", []string{"--datastore-endpoint", pgURL}})
	}
	var ts []*target
	for _, sp := range specs {
		b.logf("starting the generated apiserver on %s", sp.name)
		args := append(sp.args, "--cert-dir", filepath.Join(dir, sp.id+"-certs"))
		t, err := b.startGenerated(p, sp.id, sp.name, args...)
		if err != nil {
			return ts, err
		}
		ts = append(ts, t)
		if err := t.createNamespaces(b.ctx, []string{"warmup", "c1", "c8", "c32", "watch"}); err != nil {
			return ts, err
		}
	}
	return ts, nil
}

// storageCreates times perLevel creates per server at each level, in
// chunks alternating between the servers, and adds the rows.
func (b *bench) storageCreates(ts []*target) error {
	for _, t := range ts {
		if _, err := t.creates(b.ctx, "warmup", 0, 50, 8); err != nil {
			return err
		}
	}
	for _, c := range levels {
		b.logf("storage: %d creates per server, %d workers, in alternating chunks", perLevel, c)
		rates, _, err := b.alternate(ts, fmt.Sprintf("c%d", c), 0, perLevel, c)
		if err != nil {
			return err
		}
		b.storageRows(ts, fmt.Sprintf("creates/s, C=%d", c), func(t *target) string { return fmt.Sprintf("%.0f/s", rates[t]) },
			func(t, ref *target) float64 { return rates[t] / rates[ref] })
	}
	for _, t := range ts {
		got, err := t.count(b.ctx, "c1")
		if err != nil {
			return err
		}
		if got != perLevel {
			return fmt.Errorf("%s: LIST of namespace c1 has %d items, want %d", t.name, got, perLevel)
		}
	}
	return nil
}

// storageRows adds one row per kine server (ts[1:]) against the embedded
// etcd (ts[0]).
func (b *bench) storageRows(ts []*target, measure string, value func(*target) string, ratioTo func(t, ref *target) float64) {
	ref := ts[0]
	for _, t := range ts[1:] {
		b.add(row{Item: "10", Measure: fmt.Sprintf("storage: %s, %s", measure, t.name), Value: value(t),
			Ref: value(ref) + " (" + ref.name + ")", Ratio: fmt.Sprintf("%.2fx", ratioTo(t, ref))})
	}
}

// watchRows measures the watch latency on each server in turn and adds
// the median and p99 rows.
func (b *bench) watchRows(ts []*target) error {
	med, p99 := map[*target]time.Duration{}, map[*target]time.Duration{}
	var detail []string
	for _, t := range ts {
		b.logf("%s: watch latency over %d creates", t.name, storageWatched)
		sent, afterAck, err := t.watchLatency(b.ctx, "watch", storageWatched)
		if err != nil {
			return err
		}
		med[t], p99[t] = percentile(sent, 50), percentile(sent, 99)
		early := 0
		for i, d := range afterAck {
			if d <= 0 {
				early, afterAck[i] = early+1, 0
			}
		}
		detail = append(detail, fmt.Sprintf("%s: %d of %d events arrived before the create's answer; from the answer, median %s, p99 %s, max %s (0 when the event came first)",
			t.name, early, len(afterAck), ms(percentile(afterAck, 50)), ms(percentile(afterAck, 99)), ms(percentile(afterAck, 100))))
	}
	for _, q := range []struct {
		name string
		of   map[*target]time.Duration
	}{{"median", med}, {"p99", p99}} {
		b.storageRows(ts, fmt.Sprintf("watch latency, create sent to its event, same server, %s of %d", q.name, storageWatched), func(t *target) string { return ms(q.of[t]) },
			func(t, ref *target) float64 { return ratio(q.of[t], q.of[ref]) })
	}
	b.note("10", "watch latency: the rows time each create from its request being sent to its ADDED event on the watch, since many events reach the watch before the create's answer reaches the client (counted here): %s", strings.Join(detail, "; "))
	b.note("10", "the watch is on the server that writes: kine hands its own writes to its watches at once and polls the table only for another writer's; the latency between two apiservers on one Postgres (kine's poll, every quarter second) is measured by the fault tier (docs/reliability.md)")
	return nil
}

// percentile is the p-th percentile of ds (nearest rank).
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// arrival is a watch event of a Widget and when it was received.
type arrival struct {
	name string
	at   time.Time
}

// watchLatency watches ns and creates n Widgets in it one after the
// other (after ten untimed), each once the event of the one before
// arrived; it returns for each the time from sending the create to its
// ADDED event, and from the create's answer to the event (negative when
// the event came first).
func (t *target) watchLatency(ctx context.Context, ns string, n int) (sent, afterAck []time.Duration, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := t.client.Resource(t.gvr).Namespace(ns).Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: watch %s: %w", t.name, ns, err)
	}
	defer w.Stop()
	events := make(chan arrival, 16)
	go func() {
		defer close(events)
		for ev := range w.ResultChan() {
			at := time.Now()
			u, ok := ev.Object.(*unstructured.Unstructured)
			if ev.Type != watch.Added || !ok {
				continue
			}
			select {
			case events <- arrival{u.GetName(), at}:
			case <-ctx.Done():
				return
			}
		}
	}()
	const warmup = 10
	for i := 0; i < warmup+n; i++ {
		name := fmt.Sprintf("watched-%04d", i)
		start := time.Now()
		if _, err := t.client.Resource(t.gvr).Namespace(ns).Create(ctx, widget(t.gvr.Group, name), metav1.CreateOptions{}); err != nil {
			return nil, nil, fmt.Errorf("%s: create %s/%s: %w", t.name, ns, name, err)
		}
		acked := time.Now()
		at, err := waitEvent(events, name, 30*time.Second)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.name, err)
		}
		if i >= warmup {
			sent, afterAck = append(sent, at.Sub(start)), append(afterAck, at.Sub(acked))
		}
	}
	return sent, afterAck, nil
}

// waitEvent waits for the event of name, skipping others.
func waitEvent(events <-chan arrival, name string, timeout time.Duration) (time.Time, error) {
	deadline := time.After(timeout)
	for {
		select {
		case a, ok := <-events:
			if !ok {
				return time.Time{}, fmt.Errorf("the watch ended before the event of %s", name)
			}
			if a.name == name {
				return a.at, nil
			}
		case <-deadline:
			return time.Time{}, fmt.Errorf("no watch event for %s within %s", name, timeout)
		}
	}
}
