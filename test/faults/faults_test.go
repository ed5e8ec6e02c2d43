//go:build faults

package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
)

var (
	repoRoot, etcdBin, apiserverBin string
)

var tasks = schema.GroupVersionResource{Group: "ops.example.com", Version: "v1", Resource: "tasks"}

// TestMain builds the CLI, scaffolds a one-kind project and builds its
// apiserver (with the GOCACHE the other tiers filled), and the etcd the
// e2e tier builds.
func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faults setup:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	tmp, err := os.MkdirTemp("", "apiserver-boot-faults-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)
	cli := filepath.Join(tmp, "apiserver-boot")
	if _, err := harness.Sh(repoRoot, "go", "build", "-o", cli, "./cmd/apiserver-boot"); err != nil {
		return 0, err
	}
	etcdBin = filepath.Join(repoRoot, ".cache", "bin", "etcd")
	if _, err := os.Stat(etcdBin); err != nil {
		if _, err := harness.Sh(repoRoot, "go", "build", "-o", etcdBin, "go.etcd.io/etcd/server/v3"); err != nil {
			return 0, err
		}
	}
	proj := filepath.Join(tmp, "faults")
	os.MkdirAll(proj, 0o755)
	for _, args := range [][]string{
		{"go", "mod", "init", "example.com/faults"},
		{cli, "init", "repo", "--domain", "example.com"},
		{cli, "create", "group", "version", "resource", "--group", "ops", "--version", "v1", "--kind", "Task", "--controller=false"},
		{"go", "build", "-o", "bin/", "./cmd/apiserver"},
	} {
		if _, err := harness.Sh(proj, args[0], args[1:]...); err != nil {
			return 0, err
		}
	}
	apiserverBin = filepath.Join(proj, "bin", "apiserver")
	return m.Run(), nil
}

// load is a set of writing clients: each creates objects through one
// replica, as fast as it is answered, and records what was acknowledged.
type load struct {
	mu       sync.Mutex
	acked    map[string]bool
	times    []time.Time    // when each write was acknowledged
	failures map[string]int // per replica
	server   map[string]int // 5xx per replica
	codes    map[string]int // failures by HTTP status ("no answer": none)
	firstErr string         // the first failure's message
	stop     chan struct{}
	wg       sync.WaitGroup
}

func newLoad() *load {
	return &load{acked: map[string]bool{}, failures: map[string]int{}, server: map[string]int{}, codes: map[string]int{}, stop: make(chan struct{})}
}

// write runs a writer named id on r until stop, for at most max objects.
func (l *load) write(t *testing.T, r *replica, id string, max int) {
	client := dynamic.NewForConfigOrDie(r.config).Resource(tasks).Namespace("default")
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for i := range max {
			select {
			case <-l.stop:
				return
			default:
			}
			name := fmt.Sprintf("%s-%d", id, i)
			err := create(client, name)
			l.record(r.name, name, err)
			if err != nil {
				time.Sleep(50 * time.Millisecond) // the replica is down: do not spin
			}
		}
	}()
}

// create creates the Task name, waiting at most 10 s for the answer.
func create(client dynamic.ResourceInterface, name string) error {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ops.example.com/v1", "kind": "Task", "metadata": map[string]any{"name": name}}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := client.Create(ctx, obj, metav1.CreateOptions{})
	return err
}

// record counts a write of name by the clients of who: acknowledged, or
// failed (and whether with a 5xx).
func (l *load) record(who, name string, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err == nil {
		l.acked[name] = true
		l.times = append(l.times, time.Now())
		return
	}
	l.failures[who]++
	if l.firstErr == "" {
		l.firstErr = err.Error()
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		l.codes["no answer"]++
		return
	}
	l.codes[fmt.Sprint(status.Status().Code)]++
	if status.Status().Code >= 500 {
		l.server[who]++
	}
}

// failed says how the writes failed: how many by HTTP status, and the
// first failure's message.
func (l *load) failed() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.codes) == 0 {
		return "none"
	}
	var parts []string
	for code, n := range l.codes {
		parts = append(parts, fmt.Sprintf("%d × %s", n, code))
	}
	sort.Strings(parts)
	msg := l.firstErr
	if len(msg) > 160 {
		msg = msg[:160] + "…"
	}
	return strings.Join(parts, ", ") + "; the first: `" + strings.ReplaceAll(msg, "|", "/") + "`"
}

func (l *load) finish() {
	close(l.stop)
	l.wg.Wait()
}

// firstAfter is how long after at the first write was acknowledged.
func (l *load) firstAfter(at time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ack := range l.times {
		if ack.After(at) {
			return ack.Sub(at), true
		}
	}
	return 0, false
}

func (l *load) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.acked)
}

// lost lists the acknowledged objects the API no longer has.
func lost(t *testing.T, r *replica, acked map[string]bool) []string {
	t.Helper()
	list, err := dynamic.NewForConfigOrDie(r.config).Resource(tasks).Namespace("default").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list through %s: %v", r.name, err)
	}
	have := map[string]bool{}
	for _, o := range list.Items {
		have[o.GetName()] = true
	}
	var missing []string
	for name := range acked {
		if !have[name] {
			missing = append(missing, name)
		}
	}
	return missing
}

// figure is one line of docs/reliability.md.
type figure struct {
	fault                    string
	acked, lost, server5xx   int
	otherFailures            string
	recovered                time.Duration
	recoveredWhat, exactness string
}

// TestFaults kills what a production topology loses and measures the cost.
func TestFaults(t *testing.T) {
	etcd := etcdCluster(t, etcdBin, 3)
	if !harness.WaitUntil(time.Minute, func() bool {
		for _, m := range etcd {
			if ok, _, leader, _ := status(m); !ok || leader == 0 {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("etcd cluster not formed:\n%s", etcd[0].Out.String())
	}
	state := t.TempDir()
	a := startReplica(t, "a", apiserverBin, state, onEtcd(etcd))
	b := startReplica(t, "b", apiserverBin, state, onEtcd(etcd))
	var figures []figure
	all := map[string]bool{}
	keep := func(l *load) {
		for k := range l.acked {
			all[k] = true
		}
	}

	t.Run("kill -9 of one apiserver replica", func(t *testing.T) {
		figures = append(figures, killReplica(t, a, b, "", keep))
	})

	for _, which := range []string{"follower", "leader"} {
		t.Run("kill -9 of the etcd "+which, func(t *testing.T) {
			var victim *member
			_, _, leader, _ := status(etcd[0])
			for _, m := range etcd {
				_, _, _, id := status(m)
				if (id == leader) == (which == "leader") {
					victim = m
					break
				}
			}
			if victim == nil {
				t.Fatal("no such member")
			}
			l := newLoad()
			l.write(t, a, which+"-a", 20000)
			l.write(t, b, which+"-b", 20000)
			time.Sleep(2 * time.Second)
			killed := time.Now()
			victim.Kill(syscall.SIGKILL)
			before := l.count()
			// Down for longer than etcd's request timeout (5 s and two
			// election timeouts): a write the dead leader had taken fails
			// then; the writers' next ones go to the new leader.
			time.Sleep(10 * time.Second)
			during := l.count() - before
			resumed, ok := l.firstAfter(killed)
			restarted := time.Now()
			victim.Restart(t)
			// The member catches up: its raft index reaches the others'.
			caughtUp := harness.WaitUntil(2*time.Minute, func() bool {
				ok, index, _, _ := status(victim)
				if !ok {
					return false
				}
				for _, m := range etcd {
					if _, other, _, _ := status(m); other > index+5 {
						return false
					}
				}
				return true
			})
			recovered := time.Since(restarted)
			l.finish()
			keep(l)
			if !caughtUp {
				t.Errorf("the restarted member %s did not catch up", victim.name)
			}
			if during == 0 || !ok {
				t.Errorf("no write acknowledged while the %s was down: the quorum should take them", which)
			}
			missing := lost(t, a, l.acked)
			if len(missing) > 0 {
				t.Errorf("%d acknowledged writes lost: %v", len(missing), first(missing))
			}
			figures = append(figures, figure{fault: fmt.Sprintf("kill -9 of the etcd %s (%s), restarted", which, victim.name), acked: len(l.acked), lost: len(missing),
				server5xx: l.server["a"] + l.server["b"], otherFailures: fmt.Sprintf("%d failed requests; %d writes acknowledged in the 10 s it was down, the first %.1f s after the kill", l.failures["a"]+l.failures["b"], during, resumed.Seconds()),
				recovered: recovered, recoveredWhat: "the member caught up"})
		})
	}

	t.Run("all of etcd stopped and started: replicas unready meanwhile, a resumed watch sees every event once", func(t *testing.T) {
		w := startWatch(t, b)
		l := newLoad()
		l.write(t, a, "all-a", 20000)
		l.write(t, b, "all-b", 20000)
		time.Sleep(2 * time.Second)
		for _, m := range etcd {
			m.Kill(syscall.SIGKILL)
		}
		unready := harness.WaitUntil(30*time.Second, func() bool { return !a.ready() && !b.ready() })
		if !unready {
			t.Errorf("the replicas still say ready without etcd")
		}
		time.Sleep(2 * time.Second)
		restarted := time.Now()
		for _, m := range etcd {
			m.Restart(t)
		}
		if !harness.WaitUntil(2*time.Minute, func() bool { return a.ready() && b.ready() }) {
			t.Fatalf("the replicas did not become ready again without a restart:\n%s", a.Out.String())
		}
		recovered := time.Since(restarted)
		time.Sleep(2 * time.Second) // writes go on
		l.finish()
		keep(l)
		missing := lost(t, a, l.acked)
		if len(missing) > 0 {
			t.Errorf("%d acknowledged writes lost: %v", len(missing), first(missing))
		}
		// Every object written meanwhile reaches the watch exactly once.
		exactness := w.check(t, b)
		figures = append(figures, figure{fault: "all 3 etcd members kill -9, then started", acked: len(l.acked), lost: len(missing),
			server5xx: l.server["a"] + l.server["b"], otherFailures: fmt.Sprintf("%d failed requests while etcd was down; both replicas unready: %v", l.failures["a"]+l.failures["b"], unready),
			recovered: recovered, recoveredWhat: "both replicas ready, not restarted",
			exactness: exactness})
	})

	t.Run("SIGTERM of a replica under load: no failed request for a client that retries elsewhere", func(t *testing.T) {
		// A client of b that, like a Service in front of the replicas,
		// retries a refused or 429 request on the other replica.
		l := newLoad()
		l.write(t, a, "term-a", 20000)
		failover := failoverWriter(t, l, []*replica{b, a}, "term-b", 20000)
		time.Sleep(2 * time.Second)
		stopped := time.Now()
		b.Kill(syscall.SIGTERM)
		drained := time.Since(stopped)
		time.Sleep(2 * time.Second)
		b.Restart(t)
		if !harness.WaitUntil(time.Minute, b.ready) {
			t.Fatalf("b not ready after its restart:\n%s", b.Out.String())
		}
		l.finish()
		failover.Wait()
		keep(l)
		missing := lost(t, a, l.acked)
		if len(missing) > 0 || l.failures["a"] > 0 || l.failures["failover"] > 0 {
			t.Errorf("%d acknowledged writes lost; failed requests: %d of a's clients, %d of the retrying client", len(missing), l.failures["a"], l.failures["failover"])
		}
		figures = append(figures, figure{fault: "SIGTERM of a replica (b) under load, as in a rolling update", acked: len(l.acked), lost: len(missing),
			server5xx: l.server["a"] + l.server["failover"], otherFailures: fmt.Sprintf("%d failed requests (a's clients and the retrying client)", l.failures["a"]+l.failures["failover"]),
			recovered: drained, recoveredWhat: "b stopped (shutdown delay and draining)"})
	})

	if missing := lost(t, a, all); len(missing) > 0 {
		t.Errorf("at the end, %d acknowledged writes are missing: %v", len(missing), first(missing))
	}
	report(t, figures)
}

// killReplica kills b (SIGKILL) while clients write through a and b, and
// restarts it: a's clients must see no error and nothing acknowledged may
// be lost. prefix sets the objects' names apart.
func killReplica(t *testing.T, a, b *replica, prefix string, keep func(*load)) figure {
	l := newLoad()
	l.write(t, a, prefix+"a1", 20000)
	l.write(t, a, prefix+"a2", 20000)
	l.write(t, b, prefix+"b1", 20000)
	l.write(t, b, prefix+"b2", 20000)
	time.Sleep(2 * time.Second)
	b.Kill(syscall.SIGKILL)
	time.Sleep(3 * time.Second)
	restarted := time.Now()
	b.Restart(t)
	if !harness.WaitUntil(time.Minute, b.ready) {
		extra := stuckDatabase(t)
		dump := stacks(b)
		b.Restart(t) // for the subtests after this one
		t.Fatalf("b not ready after restart:\n%s\n%s", dump, extra)
	}
	recovered := time.Since(restarted)
	l.finish()
	keep(l)
	missing := lost(t, a, l.acked)
	if len(missing) > 0 || l.failures["a"] > 0 {
		t.Errorf("%d acknowledged writes lost (%v); clients of the other replica saw %d errors", len(missing), first(missing), l.failures["a"])
	}
	return figure{fault: "kill -9 of one apiserver replica (b), restarted", acked: len(l.acked), lost: len(missing),
		server5xx: l.server["a"] + l.server["b"], otherFailures: fmt.Sprintf("%d on a (its clients); %d on b (down)", l.failures["a"], l.failures["b"]),
		recovered: recovered, recoveredWhat: "b ready after its restart"}
}

// failoverWriter creates objects through the first ready replica of
// replicas, retrying a request that failed at the connection or with 429
// (Retry-After) on the next: what clients behind a Service get.
func failoverWriter(t *testing.T, l *load, replicas []*replica, id string, max int) *sync.WaitGroup {
	var wg sync.WaitGroup
	wg.Add(1)
	clients := make([]dynamic.ResourceInterface, len(replicas))
	for i, r := range replicas {
		clients[i] = dynamic.NewForConfigOrDie(r.config).Resource(tasks).Namespace("default")
	}
	go func() {
		defer wg.Done()
		for i := range max {
			select {
			case <-l.stop:
				return
			default:
			}
			name := fmt.Sprintf("%s-%d", id, i)
			var err error
			for attempt := range 10 {
				err = create(clients[attempt%len(clients)], name)
				if err == nil || apierrors.IsAlreadyExists(err) && attempt > 0 {
					err = nil // an earlier attempt got through
					break
				}
				if !retriable(err) {
					break
				}
			}
			l.record("failover", name, err)
		}
	}()
	return &wg
}

// retriable: the request did not reach a serving replica, or was told to
// come back (429 with Retry-After during a graceful shutdown).
func retriable(err error) bool {
	if apierrors.IsTooManyRequests(err) || apierrors.IsServiceUnavailable(err) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "connection reset") || strings.Contains(msg, "EOF") ||
		strings.Contains(msg, "server is shutting down") || strings.Contains(msg, "http2: client connection lost")
}

func first(list []string) []string {
	if len(list) > 5 {
		return list[:5]
	}
	return list
}

// report prints the figures and writes docs/reliability.md.
func report(t *testing.T, figures []figure) {
	var b strings.Builder
	b.WriteString(`# Reliability

What a failure costs, measured by the fault tier (` + "`make test-faults`" + `, run by ` + "`make test`" + ` and CI;
test/faults). Everything runs on loopback: a three-member etcd cluster (the etcd the tests
build), two replicas of a generated project's apiserver on it (standalone mode, one shared
token), and clients creating objects through each replica as fast as they are answered. Each
fault is injected while they write; afterwards every acknowledged write is looked up.

Reproduce: ` + "`make test-faults`" + ` (it rewrites this file).

`)
	table(&b, figures)
	for _, f := range figures {
		if f.exactness != "" {
			fmt.Fprintf(&b, "\nThe watch through the etcd outage: %s.\n", f.exactness)
		}
	}
	b.WriteString(`
What each line means:

- **apiserver replica killed**: the replica's own clients fail until it is back; the other
  replica's clients must see no error, and nothing acknowledged may be lost.
- **etcd member or leader killed**: the two others keep the quorum; writes must go on while the
  member is down (a new leader is elected when it was the leader), and the member catches up
  with the others' raft index after its restart.
- **all of etcd**: the replicas must report not ready (` + "`/readyz`" + `) while etcd is down and
  become ready again without a restart; a watch resumed from its last resourceVersion must see
  every object created meanwhile exactly once.
- **SIGTERM under load**: the stopping replica fails ` + "`/readyz`" + ` at once, serves for
  ` + "`--shutdown-delay-duration`" + `, drains, and answers late requests 429 with Retry-After; a client
  that retries a refused or 429 request on the other replica (what a Service does) sees no failure.

Controller-manager failover needs Leases, which only kube-apiserver serves: it is measured in
test/e2e ` + "`TestAggregation`" + ` ("leader election on a Lease"), with two controller-managers of
the project on kube-apiserver. The leader is killed with SIGKILL (no release); the follower must
take the Lease within the lease duration (15 s) and two of client-go's jittered retry periods
(about 25 s in all: the test prints how long it took, 16.8 s and 20.4 s in two runs), and it
must reconcile an object created meanwhile. ` + "`make soak`" + ` (below) runs long mixed
traffic, not in CI.
`)
	t.Log("\n" + b.String())
	writeSection(t, "faults", b.String())
}

// table writes the figures as a Markdown table.
func table(b *strings.Builder, figures []figure) {
	b.WriteString("| fault | writes acknowledged | acknowledged and lost | 5xx | failed requests | recovery |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, f := range figures {
		fmt.Fprintf(b, "| %s | %d | %d | %d | %s | %.1f s (%s) |\n", f.fault, f.acked, f.lost, f.server5xx, f.otherFailures, f.recovered.Seconds(), f.recoveredWhat)
	}
}

// writeSection replaces one tier's part of docs/reliability.md (the fault
// tier's, the soak's), keeping the other's.
func writeSection(t *testing.T, name, text string) {
	path := filepath.Join(repoRoot, "docs", "reliability.md")
	old, _ := os.ReadFile(path)
	begin, end := "<!-- "+name+" -->\n", "<!-- /"+name+" -->\n"
	section := begin + text + end
	doc := string(old)
	if i, j := strings.Index(doc, begin), strings.Index(doc, end); i >= 0 && j > i {
		doc = doc[:i] + section + doc[j+len(end):]
	} else if name == "faults" {
		doc = section + doc
	} else if k := strings.Index(doc, "<!-- /faults -->\n"); k >= 0 && !strings.HasPrefix(name, "soak") {
		k += len("<!-- /faults -->\n") // another fault scenario's: after the fault tier's
		doc = doc[:k] + "\n" + section + doc[k:]
	} else {
		doc += "\n" + section
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Errorf("writing docs/reliability.md: %v", err)
	}
}

// stuckDatabase says what the database does when a replica is stuck (set
// by a test that runs one); "" otherwise.
var stuckDatabase = func(t *testing.T) string { return "" }

// stacks has r print its goroutines (SIGQUIT, which also ends it) and
// returns its output, for a replica that does not become ready.
func stacks(r *replica) string {
	before := len(r.Out.String())
	r.Signal(syscall.SIGQUIT)
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
	}
	out := r.Out.String()
	return out[:before] + "\n--- goroutines (SIGQUIT) ---\n" + out[before:]
}
