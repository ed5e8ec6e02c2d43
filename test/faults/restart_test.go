//go:build faults

package faults

import (
	"fmt"
	"maps"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// restartWriters is how many clients write through the replica that stays
// up while the other restarts: more than the machine's CPUs can serve, so
// that the writes go on at the highest rate it allows.
const restartWriters = 16

// TestRestartUnderWrites: on PostgreSQL and on MariaDB (through kine), one
// replica is killed (kill -9) and restarted three times while the other
// takes creates from restartWriters clients without pause. Each time the
// restarted replica must be ready within a minute, and its first LIST must
// hold every create acknowledged before it (a consistent read, which waits
// for its watch cache to reach the database's revision). It writes the
// time to ready of each restart to docs/reliability.md.
func TestRestartUnderWrites(t *testing.T) {
	var rows []string
	t.Run("postgres", func(t *testing.T) {
		pg := testpg.Start(t)
		rows = append(rows, restartUnderWrites(t, "PostgreSQL 15", pg.URL)...)
	})
	t.Run("mariadb", func(t *testing.T) {
		my := testmysql.Start(t)
		rows = append(rows, restartUnderWrites(t, "MariaDB", my.URL)...)
	})
	var doc strings.Builder
	fmt.Fprintf(&doc, `## A replica restarted under sustained writes (SQL)

Two replicas on one database through kine; %d clients create Tasks through a without pause (as
many as a takes: the machine's CPUs are the limit), while b is killed (kill -9) and started again,
three times per database (`+"`TestRestartUnderWrites`"+`). Ready is `+"`/readyz`"+` answering 200; the LIST
through b right after it must hold every create acknowledged before (a consistent read, which waits
for b's watch cache to reach the database's revision).

| database | restart | b ready after | creates/s through a meanwhile | acknowledged before the LIST | missing from b's LIST | 5xx |
| --- | --- | --- | --- | --- | --- | --- |
`, restartWriters)
	for _, r := range rows {
		doc.WriteString(r + "\n")
	}
	t.Log("\n" + doc.String())
	if !t.Failed() {
		writeSection(t, "restart-under-writes", doc.String())
	}
}

// restartUnderWrites runs the three restarts on the database at endpoint
// and returns their rows.
func restartUnderWrites(t *testing.T, database, endpoint string) []string {
	state := t.TempDir()
	storage := []string{"--datastore-endpoint", endpoint}
	a := startReplica(t, "a", apiserverBin, state, storage)
	b := startReplica(t, "b", apiserverBin, state, storage)
	l := newLoad()
	for i := range restartWriters {
		l.write(t, a, fmt.Sprintf("restart-a%d", i), 1_000_000)
	}
	defer l.finish()
	time.Sleep(2 * time.Second)
	var rows []string
	for run := 1; run <= 3; run++ {
		b.Kill(syscall.SIGKILL)
		time.Sleep(time.Second)
		before, failedBefore := l.count(), l.server5xx()
		restarted := time.Now()
		b.Restart(t)
		if !harness.WaitUntil(time.Minute, b.ready) {
			extra := stuckDatabase(t)
			t.Fatalf("%s, restart %d: b not ready a minute after its start, while a took %d creates:\n%s\n%s", database, run, l.count()-before, stacks(b), extra)
		}
		ready := time.Since(restarted)
		rate := float64(l.count()-before) / ready.Seconds()
		acked := l.snapshot()
		missing := lost(t, b, acked)
		if len(missing) > 0 {
			t.Errorf("%s, restart %d: b's LIST lacks %d of %d acknowledged creates: %v", database, run, len(missing), len(acked), first(missing))
		}
		t.Logf("%s, restart %d: b ready after %.1f s; a took %.0f creates/s meanwhile", database, run, ready.Seconds(), rate)
		failed := l.server5xx() - failedBefore
		if failed > 0 {
			t.Errorf("%s, restart %d: %d creates through a got a 5xx: %s", database, run, failed, l.failed())
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %.1f s | %.0f | %d | %d | %d |", database, run, ready.Seconds(), rate, len(acked), len(missing), failed))
		time.Sleep(2 * time.Second) // writes go on through both
	}
	return rows
}

// snapshot is a copy of the acknowledged writes so far.
func (l *load) snapshot() map[string]bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.acked)
}

// server5xx is how many writes got a 5xx so far.
func (l *load) server5xx() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, c := range l.server {
		n += c
	}
	return n
}
