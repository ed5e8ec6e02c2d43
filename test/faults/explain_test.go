//go:build faults

package faults

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// explainMissing says, for each acknowledged write a LIST did not find,
// where it is: a GET through each replica (read from the database, not
// from the watch cache a LIST is served from) and its rows in kine's table,
// and which of kine's revision-gap lines the replicas logged. A write that
// a GET finds but a LIST does not was skipped by a replica's watch, not
// lost by the database.
func explainMissing(t *testing.T, pg *testpg.Server, names []string, replicas ...*replica) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		t.Logf("explain: connect to the database: %v", err)
		return
	}
	defer conn.Close(ctx)
	for _, name := range first(names) {
		for _, r := range replicas {
			_, err := dynamic.NewForConfigOrDie(r.config).Resource(tasks).Namespace("default").Get(ctx, name, metav1.GetOptions{})
			t.Logf("explain %s: GET through %s: %v", name, r.name, errOrFound(err))
		}
		rows, err := conn.Query(ctx, `SELECT id, name, created, deleted, prev_revision, length(value) FROM kine WHERE name LIKE '%/' || $1 ORDER BY id`, name)
		if err != nil {
			t.Logf("explain %s: query kine: %v", name, err)
			continue
		}
		for rows.Next() {
			var id, created, deleted, prev, size int64
			var key string
			if err := rows.Scan(&id, &key, &created, &deleted, &prev, &size); err == nil {
				t.Logf("explain %s: kine row id=%d name=%s created=%d deleted=%d prev_revision=%d value=%d bytes", name, id, key, created, deleted, prev, size)
			}
		}
		rows.Close()
	}
	for _, r := range replicas {
		for _, line := range strings.Split(r.Out.String(), "\n") {
			if strings.Contains(line, "GAP") || strings.Contains(line, "FILL") || strings.Contains(line, "level=error") {
				t.Logf("explain: %s logged: %s", r.name, line)
			}
		}
	}
}

func errOrFound(err error) string {
	if err == nil {
		return "found"
	}
	return fmt.Sprint(err)
}

// sessions lists PostgreSQL's sessions: what each waits for and runs.
func sessions(pg *testpg.Server) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pg.URL)
	if err != nil {
		return fmt.Sprintf("sessions: %v", err)
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT pid, coalesce(state, ''), coalesce(wait_event_type, ''), coalesce(wait_event, ''), coalesce(now() - xact_start, '0'::interval)::text, left(query, 200) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`)
	if err != nil {
		return fmt.Sprintf("sessions: %v", err)
	}
	defer rows.Close()
	var b strings.Builder
	b.WriteString("--- PostgreSQL sessions ---\n")
	for rows.Next() {
		var pid int32
		var state, waitType, wait, xact, query string
		if err := rows.Scan(&pid, &state, &waitType, &wait, &xact, &query); err != nil {
			return fmt.Sprintf("sessions: %v", err)
		}
		fmt.Fprintf(&b, "pid %d %s wait %s/%s in transaction for %s: %s\n", pid, state, waitType, wait, xact, strings.Join(strings.Fields(query), " "))
	}
	return b.String()
}
