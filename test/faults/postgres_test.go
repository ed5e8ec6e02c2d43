//go:build faults

package faults

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// TestFaultsPostgres is the fault tier on PostgreSQL through kine: the
// same apiserver binary, two replicas started with --datastore-endpoint on
// one PostgreSQL (internal/testing/testpg: initdb and the server on loopback), the
// same writing clients and checks as on etcd. It writes its section of
// docs/reliability.md.
func TestFaultsPostgres(t *testing.T) {
	pg := testpg.Start(t)
	state := t.TempDir()
	storage := []string{"--datastore-endpoint", pg.URL}
	a := startReplica(t, "a", apiserverBin, state, storage)
	b := startReplica(t, "b", apiserverBin, state, storage)
	var figures []figure
	all := map[string]bool{}
	keep := func(l *load) {
		for k := range l.acked {
			all[k] = true
		}
	}

	explain := func(t *testing.T, missing []string) { explainMissing(t, pg, missing, a, b) }
	stuckDatabase = func(t *testing.T) string { return sessions(pg) }
	defer func() { stuckDatabase = func(*testing.T) string { return "" } }()
	var latency string
	t.Run("a write acknowledged by a reaches a watch on b", func(t *testing.T) {
		latency = propagation(t, a, b, 40)
	})

	// A watch of b, resumed from its last resourceVersion (on a while b is
	// down) through every fault below.
	w := startWatch(t, b, a)

	t.Run("kill -9 of one apiserver replica", func(t *testing.T) {
		figures = append(figures, killReplica(t, a, b, "pg-", keep))
	})
	t.Run("PostgreSQL stopped (fast shutdown) and started", func(t *testing.T) {
		figures = append(figures, databaseOutage(t, a, b, "pg-stop", "PostgreSQL stopped (SIGINT, its fast shutdown), started again 5 s later", pg.Stop, pg.Start, keep, explain))
	})
	t.Run("PostgreSQL killed (kill -9) and started", func(t *testing.T) {
		figures = append(figures, databaseOutage(t, a, b, "pg-kill", "PostgreSQL kill -9 (crash recovery on start), started again 5 s later", pg.Kill, pg.Start, keep, explain))
	})

	exactness := w.check(t, a)
	if missing := lost(t, b, all); len(missing) > 0 {
		t.Errorf("at the end, %d acknowledged writes are missing: %v", len(missing), first(missing))
		explain(t, missing)
	}

	var doc strings.Builder
	doc.WriteString(`## On PostgreSQL (kine)

The same apiserver binary, its two replicas started with ` + "`--datastore-endpoint postgres://…`" + ` on
one PostgreSQL (Debian's, started by the test on loopback: internal/testing/testpg) instead of
` + "`--etcd-servers`" + `, the same clients and checks (` + "`TestFaultsPostgres`" + `).

`)
	table(&doc, figures)
	fmt.Fprintf(&doc, "\nA watch on b, resumed from its last resourceVersion after every interruption (on a while b was down) through all three faults: %s.\n", exactness)
	fmt.Fprintf(&doc, "\nFrom a write acknowledged by a to its ADDED event on a watch on b: %s. "+
		"kine in b learns of another process's writes by polling the database (every quarter second).\n", latency)
	doc.WriteString(`
While PostgreSQL is down, writes fail (their HTTP status and the first message, kine's, are in
the table) and both replicas fail ` + "`/readyz`" + `; they keep running and take writes again,
without a restart, once it is back. A write "answered while it was down" was committed before
the stop and answered just after: it is there afterwards, as every acknowledged write.
`)
	t.Log("\n" + doc.String())
	writeSection(t, "faults-postgres", doc.String())
}

// propagation writes n Tasks through a, one every 110 ms (so that they
// fall at every point of kine's polling period), with a watch on b, and
// returns the median and maximum time from each acknowledgement to its
// ADDED event on b. Every event must arrive within 10 s.
func propagation(t *testing.T, a, b *replica, n int) string {
	t.Helper()
	w := startWatch(t, b)
	client := tasksOf(a)
	acked := map[string]time.Time{}
	for i := range n {
		name := fmt.Sprintf("latency-%d", i)
		if err := create(client, name); err != nil {
			t.Fatalf("create %s through a: %v", name, err)
		}
		acked[name] = time.Now()
		time.Sleep(110 * time.Millisecond)
	}
	harness.WaitUntil(10*time.Second, func() bool { return w.added() >= n })
	var lags []time.Duration
	var late []string
	for name, ack := range acked {
		at, ok := w.arrived(name)
		if !ok {
			late = append(late, name)
			continue
		}
		lags = append(lags, at.Sub(ack))
	}
	w.check(t, a)
	if len(late) > 0 {
		t.Fatalf("%d of %d writes through a not seen by a watch on b within 10 s: %v", len(late), n, first(late))
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	s := fmt.Sprintf("median %.2f s, max %.2f s, min %.2f s over %d writes", lags[n/2].Seconds(), lags[n-1].Seconds(), lags[0].Seconds(), n)
	t.Log("a to b:", s)
	return s
}

// databaseOutage takes the database down (down) while clients write
// through a and b, brings it back 5 s later (up), and waits for writes to
// be acknowledged again. Writes must fail while it is down, resume without
// restarting a replica, and nothing acknowledged may be lost.
func databaseOutage(t *testing.T, a, b *replica, prefix, fault string, down, up func() error, keep func(*load), explain func(*testing.T, []string)) figure {
	t.Helper()
	l := newLoad()
	l.write(t, a, prefix+"-a", 20000)
	l.write(t, b, prefix+"-b", 20000)
	time.Sleep(2 * time.Second)
	if err := down(); err != nil {
		t.Fatal(err)
	}
	stopped := time.Now()
	before := l.count()
	unready := harness.WaitUntil(5*time.Second, func() bool { return !a.ready() && !b.ready() })
	time.Sleep(time.Until(stopped.Add(5 * time.Second)))
	during := l.count() - before
	starting := time.Now()
	if err := up(); err != nil {
		t.Fatal(err)
	}
	accepting := time.Since(starting) // up returns once the database accepts connections
	resumed := harness.WaitUntil(time.Minute, func() bool { _, ok := l.firstAfter(starting); return ok })
	took, _ := l.firstAfter(starting)
	ready := harness.WaitUntil(time.Minute, func() bool { return a.ready() && b.ready() })
	time.Sleep(2 * time.Second) // writes go on
	l.finish()
	keep(l)
	if !resumed || !ready {
		t.Fatalf("writes resumed: %v, both replicas ready: %v, a minute after the database started:\n%s", resumed, ready, a.Out.String())
	}
	if l.failures["a"]+l.failures["b"] == 0 {
		t.Errorf("no write failed while the database was down")
	}
	for _, r := range []*replica{a, b} {
		select {
		case <-r.Done():
			t.Errorf("replica %s exited: %v", r.name, r.Err())
		default:
		}
	}
	missing := lost(t, a, l.acked)
	if len(missing) > 0 {
		t.Errorf("%d acknowledged writes lost: %v", len(missing), first(missing))
		explain(t, missing)
	}
	// Creates kine reported done without storing them, which the apiserver
	// caught reading them back (pkg/internal/storage checkedCreates) and failed.
	unstored := strings.Count(a.Out.String(), "the database did not store it") + strings.Count(b.Out.String(), "the database did not store it")
	t.Logf("%s: %d acknowledged, %d while down, failures %s; replicas unready while down: %v; database accepting connections %.1f s after its start, first write %.1f s after its start; creates kine reported done but had not stored (failed by the read-back, so far in both replicas' logs): %d",
		fault, len(l.acked), during, l.failed(), unready, accepting.Seconds(), took.Seconds(), unstored)
	return figure{fault: fault, acked: len(l.acked), lost: len(missing), server5xx: l.server["a"] + l.server["b"],
		otherFailures: fmt.Sprintf("%d failed writes (%s); %d answered in the 5 s it was down; both replicas unready meanwhile: %v",
			l.failures["a"]+l.failures["b"], l.failed(), during, unready),
		recovered: took, recoveredWhat: fmt.Sprintf("from PostgreSQL's start to the first acknowledged write; it accepted connections after %.1f s; no replica restarted", accepting.Seconds())}
}
