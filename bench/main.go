// Command bench measures apiserver-boot side by side with its peers, in one
// run, and prints the ratios (make bench; go run ./bench -h):
//
//  1. code generation of sample-apiserver's wardle API: `apiserver-boot
//     generate` against k8s.io/code-generator's kube_codegen.sh;
//  2. a no-op `apiserver-boot generate` against a full one;
//  3. `init repo` + `create group version resource`, offline;
//  4. serving, like for like: creates and LISTs of the generated apiserver
//     in delegated mode behind kube-apiserver against a CRD of the same
//     schema on that kube-apiserver, and standalone against kube-apiserver
//     with comparable settings; the etcd ceiling; growth to 100k objects;
//  5. `run local` to ready with a warm build cache;
//  6. what CEL validation rules cost a create;
//  7. code generation growth at 1, 10 and 50 kinds, against kube_codegen.sh
//     on the same types;
//  8. the edit loop: a field added to a types file until `kubectl explain`
//     shows it, through a restart of `run local` and through `run local
//     --watch`, against controller-gen + `kubectl apply` of a CRD on
//     kube-apiserver;
//  9. what validating what the client sent (the request body kept and
//     read back) costs the schema validation of a create, in process;
//  10. storage: the generated apiserver of item 4's project on kine+SQLite
//     and on kine+Postgres (--datastore-endpoint) beside the same binary on
//     its embedded etcd: creates/s at C=1/8/32, LIST 1,000 and watch
//     latency; its binary size and build time with and without kine;
//  11. how long `apiserver-boot adopt` pauses the writes of a CRD while it
//     moves 1,000 and 10,000 objects into the generated apiserver.
//
// Every figure is measured in the same run as its reference, on whatever
// machine runs it: nothing here asserts a time. The results table is printed
// and written to docs/benchmarks.md with the date and the machine.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	"golang.org/x/mod/modfile"
)

// row is one line of the results table.
type row struct {
	Item    string
	Measure string
	Value   string // apiserver-boot
	Ref     string // the reference, measured in the same run (or the target when there is no peer)
	Ratio   string
	Target  string
	Met     string // yes, no, or empty when there is no target
}

// bench holds what every item shares.
type bench struct {
	ctx     context.Context
	repo    string // the apiserver-boot checkout
	tmp     string // temporary folder of this run
	cli     string // apiserver-boot built from repo
	runs    int    // repetitions of each timed command
	profile bool   // take a CPU profile of the generated apiserver under load
	kas     string // kube-apiserver binary for item 4
	k8s     string // the k8s.io/* version the repo pins (v0.37.2)
	goFlags string // GOFLAGS of the environment, kept for commands that add their own
	log     io.Writer

	rows       []row
	notes      map[string][]string
	wardleProj *wardleProject  // shared by items 1 and 2
	kcg        *kubeCodegen    // kube_codegen.sh, installed once for items 1 and 7
	serve      *servingProject // built once, shared by items 4 and 5
	etcdURL    string          // the etcd of items 4 and 6, started once
	etcdSrv    *proc.Server
}

func (b *bench) add(r row) {
	b.rows = append(b.rows, r)
	fmt.Fprintf(b.log, "  => %s: %s (reference %s, ratio %s)\n", r.Measure, r.Value, r.Ref, r.Ratio)
}

func (b *bench) note(item, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	b.notes[item] = append(b.notes[item], msg)
	fmt.Fprintf(b.log, "  note: %s\n", msg)
}

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.log, "[%s] %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// env returns environment entries that add flags to the ambient GOFLAGS.
func (b *bench) goflags(flags ...string) string {
	all := strings.Fields(b.goFlags)
	all = append(all, flags...)
	return "GOFLAGS=" + strings.Join(all, " ")
}

var items = []struct {
	id, name string
	run      func(*bench) error
}{
	{"1", "code generation vs kube_codegen.sh", (*bench).codegen},
	{"2", "no-op generate", (*bench).noop},
	{"3", "init + create, offline", (*bench).scaffold},
	{"4", "serving, like for like, vs a CRD on kube-apiserver", (*bench).serving},
	{"5", "run local to ready", (*bench).runLocal},
	{"6", "what CEL rules cost a create", (*bench).cel},
	{"7", "code generation growth: 1, 10 and 50 kinds", (*bench).growth},
	{"8", "the edit loop vs the CRD loop", (*bench).editLoop},
	{"9", "what validating what the client sent costs a create", (*bench).validation},
	{"10", "storage: the embedded etcd, kine+SQLite and kine+Postgres; what kine costs a build", (*bench).storage},
	{"11", "adopt: how long writes pause while a CRD's objects move", (*bench).adoption},
}

func main() {
	only := flag.String("items", "1,2,3,4,5,6,7,8,9,10,11", "Items to run, comma separated")
	runs := flag.Int("runs", 3, "Repetitions of each timed command (the median is reported)")
	out := flag.String("out", "docs/benchmarks.md", "Write the results here (relative to the checkout; empty: do not write; a run of some -items writes only when -out is given)")
	keep := flag.Bool("keep", false, "Keep the temporary folder (projects, server logs, profiles)")
	profile := flag.Bool("profile", true, "Item 4: take CPU profiles of the generated apiserver under create and LIST load and summarise them")
	kas := flag.String("kube-apiserver", filepath.Join(".cache", "bin", "kube-apiserver"), "Item 4: the kube-apiserver binary (relative to the checkout; built by make test-tools)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A partial run does not replace the document unless asked to.
	outSet := false
	flag.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })
	if !outSet && *only != flag.Lookup("items").DefValue {
		*out = ""
	}
	code := 0
	if err := run(ctx, *only, *runs, *out, *keep, *profile, *kas); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		code = 1
	}
	proc.StopServers()
	os.Exit(code)
}

func run(ctx context.Context, only string, runs int, out string, keep, profile bool, kas string) error {
	b, err := newBench(ctx, runs, profile, kas)
	if err != nil {
		return err
	}
	if b.tmp, err = os.MkdirTemp("", "apiserver-boot-bench-"); err != nil {
		return err
	}
	if keep {
		fmt.Fprintln(b.log, "keeping", b.tmp)
	} else {
		defer os.RemoveAll(b.tmp)
	}
	defer proc.StopServers() // before the folder goes

	started := time.Now()
	machine := describeMachine()
	b.logf("machine: %s", machine.oneLine())
	b.cli = filepath.Join(b.tmp, "apiserver-boot")
	if _, err := proc.Command(ctx, b.repo, nil, "go", "build", "-o", b.cli, "./cmd/apiserver-boot"); err != nil {
		return err
	}
	ran, err := b.runItems(only)
	if err != nil {
		return err
	}
	machine.loadAfter = proc.LoadAvg()
	fmt.Println()
	fmt.Println(b.table())
	for _, id := range ran {
		for _, n := range b.notes[id] {
			fmt.Printf("(%s) %s\n", id, n)
		}
	}
	if out == "" {
		return nil
	}
	return b.writeResults(out, machine, ran, time.Since(started))
}

// newBench reads the checkout's go.mod (the Kubernetes version it pins) in
// the working directory.
func newBench(ctx context.Context, runs int, profile bool, kas string) (*bench, error) {
	repo, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		return nil, fmt.Errorf("run from the apiserver-boot checkout (make bench): %w", err)
	}
	mf, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil {
		return nil, err
	}
	b := &bench{ctx: ctx, repo: repo, runs: max(runs, 1), profile: profile, goFlags: os.Getenv("GOFLAGS"), log: os.Stderr, notes: map[string][]string{}}
	for _, r := range mf.Require {
		if r.Mod.Path == "k8s.io/apimachinery" {
			b.k8s = r.Mod.Version
		}
	}
	if b.kas = kas; !filepath.IsAbs(kas) {
		b.kas = filepath.Join(repo, kas)
	}
	if b.k8s == "" {
		return nil, fmt.Errorf("go.mod does not require k8s.io/apimachinery")
	}
	return b, nil
}

// runItems runs the items listed in only (comma-separated ids); an item
// that fails gets a failed row and a note, and the others still run.
func (b *bench) runItems(only string) (ran []string, err error) {
	want := map[string]bool{}
	for _, id := range strings.Split(only, ",") {
		want[strings.TrimSpace(id)] = true
	}
	for _, it := range items {
		if !want[it.id] {
			continue
		}
		b.logf("item %s: %s", it.id, it.name)
		loadBefore := proc.LoadAvg()
		err := it.run(b)
		b.note(it.id, "load average (1, 5, 15 min) before this item: %s, after: %s", loadBefore, proc.LoadAvg())
		if err != nil {
			if b.ctx.Err() != nil {
				return nil, b.ctx.Err()
			}
			b.note(it.id, "FAILED: %v", err)
			b.add(row{Item: it.id, Measure: it.name, Value: "failed", Ref: "-", Ratio: "-", Met: "no"})
		}
		ran = append(ran, it.id)
	}
	return ran, nil
}

// writeResults writes the results document to out (relative to the
// checkout), keeping a hand-written analysis at the end of the previous file.
func (b *bench) writeResults(out string, machine machineInfo, ran []string, took time.Duration) error {
	path := out
	if !filepath.IsAbs(path) {
		path = filepath.Join(b.repo, path)
	}
	doc := b.document(machine, ran, took)
	if prev, err := os.ReadFile(path); err == nil {
		if i := strings.Index(string(prev), analysisHeading); i >= 0 {
			doc += "\n" + string(prev[i:])
		}
	}
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		return err
	}
	fmt.Println("\nwrote", out)
	return nil
}

// table renders the rows as a Markdown table.
func (b *bench) table() string {
	var sb strings.Builder
	sb.WriteString("| # | measure | apiserver-boot | reference (same run) | ratio | target | met |\n")
	sb.WriteString("| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range b.rows {
		fmt.Fprintf(&sb, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Item, r.Measure, r.Value, r.Ref, r.Ratio, r.Target, r.Met)
	}
	return sb.String()
}

// machineInfo describes where the figures were measured.
type machineInfo struct {
	date, cpus, cpu, ram, goVersion, kernel string
	loadBefore, loadAfter                   string
}

func describeMachine() machineInfo {
	m := machineInfo{date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), loadBefore: proc.LoadAvg()}
	if out, err := proc.Command(context.Background(), ".", nil, "nproc"); err == nil {
		m.cpus = strings.TrimSpace(out)
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "model name") {
				m.cpu = strings.TrimSpace(line[strings.Index(line, ":")+1:])
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(line, "MemTotal:") {
				kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
				m.ram = fmt.Sprintf("%.1f GiB", kb/1024/1024)
			}
		}
	}
	if out, err := proc.Command(context.Background(), ".", nil, "go", "version"); err == nil {
		m.goVersion = strings.TrimPrefix(strings.TrimSpace(out), "go version ")
	}
	if out, err := proc.Command(context.Background(), ".", nil, "uname", "-r"); err == nil {
		m.kernel = strings.TrimSpace(out)
	}
	return m
}

func (m machineInfo) oneLine() string {
	return fmt.Sprintf("%s CPUs (nproc), %s, %s RAM, %s, load average %s", m.cpus, m.cpu, m.ram, m.goVersion, m.loadBefore)
}

// document is docs/benchmarks.md.
func (b *bench) document(m machineInfo, ran []string, took time.Duration) string {
	var sb strings.Builder
	sb.WriteString("# Benchmarks\n\n")
	sb.WriteString("Written by `make bench` (`go run ./bench`, source in [bench/](../bench)); every figure below was measured\n")
	sb.WriteString("in one run, each next to its reference. Single runs on a shared machine: read the ratios, not the absolute\n")
	sb.WriteString("times, and rerun `make bench` on your machine to compare.\n\n")
	fmt.Fprintf(&sb, "- Date: %s (the run took %s)\n", m.date, took.Round(time.Second))
	fmt.Fprintf(&sb, "- Machine: %s CPUs (`nproc`), %s, %s RAM, Linux %s\n", m.cpus, m.cpu, m.ram, m.kernel)
	fmt.Fprintf(&sb, "- Go: %s; k8s.io/* %s\n", m.goVersion, b.k8s)
	fmt.Fprintf(&sb, "- Load average (1, 5, 15 min) before: %s, after: %s. With %s CPUs, a load above %s means other work competed with the bench.\n", m.loadBefore, m.loadAfter, m.cpus, m.cpus)
	fmt.Fprintf(&sb, "- Repetitions: %d per timed command (median reported) unless a row says otherwise.\n\n", b.runs)
	sb.WriteString("## Results\n\n")
	sb.WriteString(b.table())
	sb.WriteString("\n")
	sort.Strings(ran)
	for _, id := range ran {
		if len(b.notes[id]) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "### Notes on %s\n\n", itemName(id))
		for _, n := range b.notes[id] {
			sb.WriteString("- " + strings.ReplaceAll(n, "\n", "\n  ") + "\n")
		}
		sb.WriteString("\n")
	}
	sb.WriteString(methodText)
	return sb.String()
}

func itemName(id string) string {
	for _, it := range items {
		if it.id == id {
			return id + ". " + it.name
		}
	}
	return id
}

// analysisHeading starts the hand-written part of docs/benchmarks.md, which
// a new run keeps (it says which run it analyses).
const analysisHeading = "## Analysis"

const methodText = `## How each figure is measured

1. **Code generation.** sample-apiserver's wardle API (pinned version, from the module cache) is put into a
   project scaffolded with ` + "`init repo`" + ` and ` + "`create group version resource`" + ` (group wardle; Flunder and Fischer in
   v1alpha1, Flunder in v1beta1): its ` + "`types.go`" + ` files verbatim plus our markers (` + "`+resource`" + `, ` + "`+storageversion`" + ` on
   v1beta1, whose shape the internal type has, as in sample-apiserver), and the hand-written v1alpha1 ` + "`conversion.go`" + ` and
   ` + "`defaults.go`" + `. Where our generator cannot take a wardle shape, the failure is reported and the smallest adaptation
   applied (notes above). ` + "`apiserver-boot generate --force`" + ` (a full run) is timed against sample-apiserver's own
   ` + "`hack/update-codegen.sh`" + ` (kube_codegen.sh ` + "`gen_helpers`" + `, ` + "`gen_openapi`" + `, ` + "`gen_client`" + `) run on a writable copy of
   sample-apiserver's tree, with ` + "`GOFLAGS=-modcacherw`" + ` and the known API rule violations updated rather than diffed.
   kube_codegen.sh runs ` + "`go install`" + ` for its generators on every call; the first install is timed separately and
   excluded, the up-to-date checks of later calls are part of every run. Runs alternate between the two. Both trees
   must then pass ` + "`go build ./...`" + ` (reported, not timed). apiserver-boot also writes protobuf, CRD schemas,
   registration, strategies and controller wiring, which kube_codegen.sh does not. The "driver cache cold" row runs
   ` + "`generate --force`" + ` with XDG_CACHE_HOME a fresh empty folder per run, so that the go/packages driver's copies of
   dependency files without function bodies (os.UserCacheDir()/apiserver-boot/bodyless-go) are rebuilt, and GOCACHE
   pinned to ` + "`go env GOCACHE`" + ` so that Go's build cache stays warm; it runs after each kube_codegen.sh run of the
   alternation, and its reference is the warm full generate's median.
2. **No-op generate.** ` + "`apiserver-boot generate`" + ` again on the generated wardle project, nothing changed, against the
   full run of item 1.
3. **init + create.** ` + "`init repo --domain example.com --module example.com/x`" + ` then ` + "`create group version resource`" + ` in
   an empty folder, with ` + "`GOFLAGS=-mod=mod GOPROXY=off`" + ` (warm module cache, no network). Both commands generate code.
4. **Serving, like for like.** One scaffolded project (one kind, the scaffolded spec and status) built once; one
   etcd built from go.etcd.io/etcd/server/v3 (.cache/bin/etcd); kube-apiserver from .cache/bin (` + "`make test-tools`" + `)
   serving a CustomResourceDefinition of the same schema (status subresource, same fields and bounds) in group
   crd.bench.example.com, each server under its own etcd prefix. Two pairings, one after the other:
   (a) **aggregated**, what clusters run: kube-apiserver with RBAC, its default admission plugins, priority and
   fairness and aggregation (front-proxy client certificate), and the generated apiserver in delegated mode behind
   it (registered by an APIService; authentication by the front-proxy certificate, authorization by
   SubjectAccessReview, admission and priority and fairness from kube-apiserver's objects); clients reach both
   through kube-apiserver, and the CPU of a create through the aggregator counts both processes. (b)
   **standalone**: the generated apiserver alone (bearer token, NamespaceLifecycle admission against the namespaces it
   serves, priority and fairness off, an authorizer allowing its token) against kube-apiserver with the settings that
   make it comparable: ` + "`--authorization-mode=AlwaysAllow --enable-priority-and-fairness=false`" + ` and every default
   admission plugin but NamespaceLifecycle disabled (the list read from its ` + "`--help`" + `); the notes list what kube-apiserver still runs. In each pairing the same
   client-go dynamic client (JSON, no client-side rate limit, bearer token over TLS, HTTP/2) first creates 50
   objects on each server (warm-up), then 1,000 objects with C = 1, 8 and 32 workers into a namespace per C, in
   four chunks of 250 that alternate between the servers so that both see the same bursts of other work. Server
   CPU per create is read from /proc/<pid>/stat around the chunks: unlike the rates it does not depend on how
   much CPU the machine leaves the servers. Then it LISTs the 1,000 objects of one namespace five times per server
   after one untimed LIST, alternating (time to the last byte, median; the client accepts gzip, as client-go
   does), as JSON and as protobuf (CRDs have no protobuf: kube-apiserver answers
   ` + "`application/vnd.kubernetes.protobuf,application/json`" + ` with JSON); standalone also with ` + "`resourceVersion=0`" + `
   (notes). Then the project's generated typed clientset (` + "`pkg/client/clientset/versioned`" + `, run as a small program
   built in the project, ten untimed warm-up creates) creates 1,000 objects per C speaking protobuf and 1,000
   speaking JSON, in alternating halves. **The ceiling** (standalone): right after the creates of each C, etcd's
   own client writes the same number of values of the size the generated apiserver stored, each a transaction
   that puts the key if it does not exist (as the apiserver's storage does for a create), with C concurrent
   writers on one connection. **Growth** (standalone): both servers are filled (C=32) to 1,000 and
   10,000 stored objects before the creates above, and to 100,000 after them (to more when one already holds
   more: both hold the same count, which the rows give); at each size VmRSS is read from /proc/<pid>/status,
   then 4,000 creates (C=8, alternating chunks) and five LISTs of the same 1,000 objects are timed. Last, CPU
   profiles of the generated apiserver (its /debug/pprof) during 10 s of creates (C=32; aggregated and
   standalone) and 10 s of back-to-back protobuf LISTs, summarised per area, and the largest in-use allocation
   sites of its heap at 100,000 objects.
5. **run local.** ` + "`apiserver-boot run local`" + ` in the project of item 4, already built once (warm build cache, generate
   cache filled): from start to the "Ready." line, which is printed once the kubeconfig is written and /readyz answers.
6. **CEL rules.** One project serves two kinds scaffolded by ` + "`create group version resource`" + ` (` + "`--controller=false`" + `),
   Plain and Ruled, whose specs get the same 20 fields added to the scaffolded replicas (10 integers, 10 strings with a
   MaxLength); Ruled adds 50 ` + "`+kubebuilder:validation:XValidation`" + ` rules on its spec type (bounds, lengths,
   prefixes, sums of two fields). Its apiserver runs on the etcd of item 4's kind; after 50 warm-up creates of each,
   1,000 creates of each kind with C = 1 and 8, in four chunks alternating between the kinds. Reported: the time
   per create of Ruled next to Plain's; both go through the same custom resource validation, so the ratio is what
   the rules cost.
7. **Codegen growth.** The same API at 1 kind (one group, v1), 10 kinds (5 groups × v1 and v2 × 1 kind) and 50 kinds
   (5 groups × v1 and v2 × 5 kinds), as an apiserver-boot project and as a sample-apiserver style tree for
   kube_codegen.sh. Every kind has the same Go types in both: the scaffolded ones (` + "`create group version resource`" + `),
   the spec given six fields beside its int32 replicas (two strings, a ` + "`[]string`" + `, a ` + "`map[string]string`" + `, a nested
   struct with a pointer, an ` + "`*int64`" + `), the status (replicas, observedGeneration, ` + "`[]metav1.Condition`" + `) its conditions
   marked a map list; v2 of a kind has v1's shape (conversion is generated). The apiserver-boot project is what a
   user gets: ` + "`init repo`" + `, then one ` + "`create group version resource`" + ` per kind and version (each ends with a generate;
   v1 becomes the storage version), then the fields added to each scaffolded ` + "`<kind>_types.go`" + `; this scaffolding is
   not timed (notes). The kube_codegen.sh tree has sample-apiserver's go.mod, go.sum, ` + "`hack/update-codegen.sh`" + ` and
   models-schema command with the module path changed, an internal version per group (` + "`pkg/apis/<group>`" + `, the kinds
   of v1) and versioned packages with sample-apiserver's tags (` + "`+genclient`" + `, deepcopy, conversion to the internal version, defaulter,
   openapi, groupName, openapi model package), each kind the apiserver-boot project's edited types file with these
   tags in place of apiserver-boot's ` + "`+resource`" + ` and ` + "`+subresource`" + `; the script runs as in item 1 (gen_helpers, gen_openapi, gen_client).
   After one untimed run of each tool per size, ` + "`generate --force`" + ` and the script alternate, size after size, for the
   number of repetitions (medians). The growth row divides each tool's 50-kind median by its 1-kind median; the target
   (≤3x) is apiserver-boot's. All six trees must then pass ` + "`go build ./...`" + ` (reported, not timed).
8. **The edit loop.** A string field (a new name each time) is added to the spec of a one-kind project's types
   file (` + "`pkg/apis/edit/v1/widget_types.go`" + `, scaffolded by ` + "`init repo`" + ` and ` + "`create group version resource`" + `;
   built once by an untimed first ` + "`run local`" + `); the time runs from that write until
   ` + "`kubectl explain widgets.spec.<field> --api-version edit.example.com/v1`" + ` succeeds (polled once the tools say they are done: run local's "Ready." or "Reloaded in" line, kubectl
   apply's return, so that polling does not take CPU from the build; every kubectl call gets a fresh
   ` + "`--cache-dir`" + `, so discovery and OpenAPI are fetched anew, on both sides). apiserver-boot, two
   ways, both with ` + "`--controller-manager=false`" + ` and the embedded etcd: (a) ` + "`run local`" + ` is stopped (SIGTERM to
   its process group) and started again, which generates, builds and starts the apiserver; (b) one
   ` + "`run local --watch`" + `, which notices the write, waits 200 ms for more, regenerates and rebuilds while the old
   apiserver serves, then restarts it on the same etcd data and kubeconfig. The reference: a kubebuilder-style
   module (` + "`api/v1`" + ` with ` + "`+groupName`" + `; its ` + "`widget_types.go`" + ` the project's scaffolded one with ` + "`+kubebuilder:object:root=true`" + `
   and ` + "`+kubebuilder:subresource:status`" + ` in place of apiserver-boot's markers, so the same spec and status) gets the same edit, then
   ` + "`controller-gen crd paths=./api/... output:crd:dir=config/crd`" + ` (controller-gen at the version go.mod pins,
   installed once into .cache/bin, not timed) and ` + "`kubectl apply -f`" + ` of the CRD file to kube-apiserver (cluster
   settings as in item 4, started once on item 4's etcd, the CRD applied once before timing). Each apiserver-boot run alternates with a CRD loop
   run; each row's reference is the median of the CRD runs that alternated with it. The notes break each run down
   from run local's own output lines.
10. **Storage.** The project of item 4, its apiserver binary built once, started three times standalone and
   running at once: on its embedded etcd (no storage flag; ` + "`--embedded-etcd-data-dir`" + ` and ` + "`--cert-dir`" + ` in the run's
   temporary folder: the store ` + "`run local`" + ` uses), with ` + "`--datastore-endpoint sqlite://PATH`" + ` (a new file in that folder)
   and with ` + "`--datastore-endpoint postgres://…`" + ` on a new database of a PostgreSQL server started on loopback by
   internal/testing/testpg (Debian's package, ` + "`initdb`" + ` into a temporary folder, default settings; the kine+Postgres rows are
   skipped, with a note, where PostgreSQL is not installed). kine runs in the apiserver's process in both cases.
   After 50 untimed creates on each, the client of item 4 creates 1,000 Widgets per server with C = 1, 8 and 32
   workers, in four chunks of 250 alternating between the three servers; then LISTs the 1,000 objects of the C=1
   namespace five times per server after one untimed LIST, alternating (JSON, time to the last byte, median).
   Watch latency, one server after the other: a watch on an empty namespace of the server, then 10 untimed and
   200 timed creates one at a time on the same server, each after the ADDED event of the one before; each
   figure is the time from sending the create to its event arriving on the watch, median and p99 of the 200.
   The time from the create's answer to the event is in the notes: many events arrive before the answer does
   (the notes count them), which makes that figure mostly 0. This is one apiserver process: kine hands its own writes
   to its watches at once and polls the table only for other writers, so the latency between two apiservers on
   one Postgres (a quarter second's poll) is not here; the fault tier measures it (docs/reliability.md). Rows give
   each kine store against the embedded etcd of the same run; ratios are kine's figure over etcd's (above 1:
   more creates/s, slower LISTs and watches). **Build**: ` + "`go build ./cmd/apiserver`" + ` in that project as generated, and
   the same build as run local makes it when it stores in etcd, with the build tag ` + "`apiserverboot_nokine`" + `, which leaves
   the framework's kine files out (pkg/internal/storage keeps its flags; ` + "`startKine`" + ` refuses
   ` + "`--datastore-endpoint`" + `); ` + "`go version -m`" + ` must show github.com/k3s-io/kine in the first binary only. One untimed round of both, then both alternating for the repetitions (median): with every
   package in the build cache, so the times are what kine adds to a rebuild (mostly the link), not to a first
   build with an empty cache (docs/storage.md gives that, measured by hand). Run alone with
   ` + "`go run ./bench -items 10`" + ` (about two minutes once item 4's project is built).
11. **Adopt.** The project of item 4 (Widget, bench.example.com/v1). For 1,000 and then 10,000 Widgets, each on its
   own: a kube-apiserver with the cluster settings of item 4 on a new etcd prefix, serving a Widget CRD of
   bench.example.com (item 4's CRD schema in the project's group), the Widgets created through it in one namespace
   (16 workers, untimed); the project's apiserver in delegated mode on another prefix of the same etcd (its own
   store, as build config deploys it), reachable through an ExternalName Service but registered by no APIService
   (the CRD serves the group version); ` + "`<dir>/config/apiservice.yaml`" + ` holds the APIService build config would write.
   Then ` + "`apiserver-boot adopt --kubeconfig <admin> --config <dir>/config`" + ` in the project, and the row is the pause it
   prints: from the creation of the policy binding that refuses writes of Widgets to its deletion (the wait until
   both kube-apiserver and the project's apiserver refuse them, reading every object at one resourceVersion, storing it with its identity in the
   project's store, switching the APIService and the CRD's served version, reading every object back through
   kube-apiserver and comparing). The reference is one LIST of the same Widgets from the CRD through
   kube-apiserver (JSON, to the last byte), taken just before: what any move must at least read. The notes give
   the whole command's time, plan included. Run alone with ` + "`go run ./bench -items 11`" + `.
`
