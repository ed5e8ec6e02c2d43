package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
)

// Item 4: the generated apiserver against a CRD of the same schema on
// kube-apiserver, both on one external etcd.

// servingProject is a scaffolded one-kind project, built once.
type servingProject struct {
	dir        string
	buildTime  time.Duration
	group, gvr string
}

// apiserver is the project's apiserver as go build builds it, which the
// serving, storage and adopt items run.
func (p *servingProject) apiserver() string { return filepath.Join(p.dir, "served", "apiserver") }

var widgets = schema.GroupVersionResource{Group: "bench.example.com", Version: "v1", Resource: "widgets"}

// servingProject scaffolds and builds the project of items 4 and 5 once.
func (b *bench) servingProject() (*servingProject, error) {
	if b.serve != nil {
		return b.serve, nil
	}
	p := &servingProject{dir: filepath.Join(b.tmp, "serve")}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	b.logf("scaffolding and building the serving project (one kind, bench/v1 Widget)")
	for _, args := range [][]string{
		{"init", "repo", "--domain", "example.com", "--module", "example.com/serve"},
		{"create", "group", "version", "resource", "--group", "bench", "--version", "v1", "--kind", "Widget"},
	} {
		if _, err := proc.Command(b.ctx, p.dir, nil, b.cli, args...); err != nil {
			return nil, err
		}
	}
	// The build run local does (on etcd: without kine), so that item 5
	// finds a warm build cache.
	d, _, err := proc.TimedCommand(b.ctx, p.dir, nil, "go", "build", "-o", "bin/", "-ldflags=-w", "-tags="+datastore.NoKineTag, "./cmd/apiserver", "./cmd/controller-manager")
	if err != nil {
		return nil, err
	}
	p.buildTime = d
	// The apiserver the other items run, as go build and build container
	// build it (with kine: item 10 stores in SQL); run local's builds of
	// item 5 replace bin/apiserver.
	if _, err := proc.Command(b.ctx, p.dir, nil, "go", "build", "-o", p.apiserver(), "./cmd/apiserver"); err != nil {
		return nil, err
	}
	// The typed-client load of item 4 (not timed).
	if err := writeTypedLoad(p.dir, "example.com/serve"); err != nil {
		return nil, err
	}
	if _, err := proc.Command(b.ctx, p.dir, nil, "go", "build", "-o", "bin/", "./cmd/benchload"); err != nil {
		return nil, err
	}
	b.serve = p
	return p, nil
}

// etcd starts .cache/bin/etcd (built from the module proxy when missing, as the e2e tests do).
func (b *bench) etcd() (string, *proc.Server, error) {
	if b.etcdSrv != nil {
		return b.etcdURL, b.etcdSrv, nil // one data directory, one etcd
	}
	bin := filepath.Join(b.repo, ".cache", "bin", "etcd")
	if _, err := os.Stat(bin); err != nil {
		b.logf("building etcd into .cache/bin/etcd (go build go.etcd.io/etcd/server/v3)")
		if _, err := proc.Command(b.ctx, b.repo, nil, "go", "build", "-o", bin, "go.etcd.io/etcd/server/v3"); err != nil {
			return "", nil, err
		}
	}
	client, err := freeport.Port()
	if err != nil {
		return "", nil, err
	}
	peer, err := freeport.Port()
	if err != nil {
		return "", nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	s, err := proc.StartServer(b.tmp, b.tmp, "etcd", bin, nil, "--name", "bench", "--data-dir", filepath.Join(b.tmp, "etcd-data"),
		"--listen-client-urls", url, "--advertise-client-urls", url,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL, "--initial-cluster", "bench="+peerURL)
	if err != nil {
		return "", nil, err
	}
	err = waitFor(b.ctx, s, time.Minute, func() bool {
		resp, err := http.Get(url + "/health")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(body), `"health":"true"`)
	})
	if err == nil {
		b.etcdURL, b.etcdSrv = url, s
	}
	return url, s, err
}

// waitFor polls ok until it holds, the server exits or timeout passes.
func waitFor(ctx context.Context, s *proc.Server, timeout time.Duration, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if ok() {
			return nil
		}
		if s.Exited() {
			return fmt.Errorf("%s exited: %v\n%s", s.Name, s.Err(), s.LogTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s\n%s", s.Name, timeout, s.LogTail())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// target is one server under load.
type target struct {
	name       string
	srv        *proc.Server   // the server answering (its exit fails the waits)
	cpu        []*proc.Server // whose CPU time a request costs (default srv)
	cfg        *rest.Config
	client     *dynamic.DynamicClient
	http       *http.Client
	gvr        schema.GroupVersionResource // its Widgets
	kubeconfig string                      // for the typed clientset
	direct     *target                     // the server itself when t reaches it through another (for /debug/pprof)
}

func newTarget(name string, srv *proc.Server, cfg *rest.Config, gvr schema.GroupVersionResource, dir string) (*target, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.Timeout = time.Minute
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, err
	}
	// One kubeconfig per target (targets can share a folder).
	kubeconfig := filepath.Join(dir, strings.Trim(regexp.MustCompile(`[^a-z0-9]+`).ReplaceAllString(strings.ToLower(name), "-"), "-")+".kubeconfig")
	if err := writeKubeconfig(kubeconfig, cfg); err != nil {
		return nil, err
	}
	return &target{name: name, srv: srv, cpu: []*proc.Server{srv}, cfg: cfg, client: client, http: hc, gvr: gvr, kubeconfig: kubeconfig}, nil
}

// cpuTimes is the CPU time each of t's servers has used.
func (t *target) cpuTimes() []time.Duration {
	var ds []time.Duration
	for _, s := range t.cpu {
		ds = append(ds, proc.CPUTime(s.Pid()))
	}
	return ds
}

// ready waits for GET /readyz to answer 200.
func (t *target) ready(ctx context.Context, timeout time.Duration) error {
	return waitFor(ctx, t.srv, timeout, func() bool {
		resp, err := t.http.Get(t.cfg.Host + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// generatedServer starts the serving project's apiserver standalone on etcd.
func (b *bench) generatedServer(p *servingProject, etcdURL string) (_ *target, err error) {
	t, err := b.startGenerated(p, filepath.Base(p.dir), "apiserver-boot", "--etcd-servers", etcdURL, "--etcd-prefix", "/apiserver-boot")
	if err != nil {
		return t, err
	}
	// The standalone apiserver serves namespaces and, as a cluster, refuses
	// objects in one that does not exist.
	if err := t.createNamespaces(b.ctx, benchNamespaces()); err != nil {
		t.srv.Stop(15 * time.Second)
		return nil, err
	}
	return t, nil
}

// startGenerated starts the serving project's apiserver standalone with the
// storage flags given, as the target called name; id names its log and
// kubeconfig (one per server: a server refuses another's).
func (b *bench) startGenerated(p *servingProject, id, name string, storage ...string) (_ *target, err error) {
	port, err := freeport.Port()
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(b.tmp, id+".kubeconfig")
	args := append([]string{"--secure-port", fmt.Sprint(port), "--write-kubeconfig", kubeconfig}, storage...)
	s, err := proc.StartServer(p.dir, b.tmp, id+"-apiserver", p.apiserver(), nil, args...)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil { // stopped again unless it serves
			s.Stop(15 * time.Second)
		}
	}()
	var cfg *rest.Config
	if err := waitFor(b.ctx, s, 2*time.Minute, func() bool {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		return err == nil
	}); err != nil {
		return nil, err
	}
	t, err := newTarget(name, s, cfg, widgets, b.tmp)
	if err != nil {
		return nil, err
	}
	err = t.ready(b.ctx, 2*time.Minute)
	return t, err
}

// createNamespaces creates namespaces that do not exist yet.
func (t *target) createNamespaces(ctx context.Context, namespaces []string) error {
	for _, ns := range namespaces {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := t.client.Resource(namespaceGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: creating namespace %s: %w", t.name, ns, err)
		}
	}
	return nil
}

// widgetCRD is the scaffolded Widget's schema as a CustomResourceDefinition
// (of group crdGroup, which installCRD replaces with its target's group):
// spec.replicas (int32, at least 0: the scaffolded Validate hook) and the
// scaffolded status (replicas, observedGeneration, metav1.Condition list),
// with a status subresource.
const widgetCRD = `{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.crd.bench.example.com"},
  "spec": {
    "group": "crd.bench.example.com",
    "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
    "versions": [{
      "name": "v1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "schema": {"openAPIV3Schema": {
        "type": "object",
        "description": "Widget is the Schema for the widgets API.",
        "properties": {
          "apiVersion": {"type": "string"},
          "kind": {"type": "string"},
          "metadata": {"type": "object"},
          "spec": {"type": "object", "description": "WidgetSpec is the desired state of a Widget.", "properties": {
            "replicas": {"type": "integer", "format": "int32", "minimum": 0, "description": "Replicas is the desired number of instances."}
          }},
          "status": {"type": "object", "description": "WidgetStatus is the observed state of a Widget, written by its controller.", "properties": {
            "replicas": {"type": "integer", "format": "int32"},
            "observedGeneration": {"type": "integer", "format": "int64"},
            "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"], "items": {
              "type": "object",
              "required": ["type", "status", "lastTransitionTime", "reason", "message"],
              "properties": {
                "type": {"type": "string", "maxLength": 316},
                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                "observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
                "lastTransitionTime": {"type": "string", "format": "date-time"},
                "reason": {"type": "string", "minLength": 1, "maxLength": 1024},
                "message": {"type": "string", "maxLength": 32768}
              }
            }}
          }}
        }
      }}
    }]
  }
}`

var (
	crdGVR       = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	namespaceGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// installCRD creates the Widget CRD of t's group and the namespaces on
// kube-apiserver and waits until a Widget can be created.
func (t *target) installCRD(ctx context.Context, namespaces []string) error {
	crd := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(strings.ReplaceAll(widgetCRD, crdGroup, t.gvr.Group)), &crd.Object); err != nil {
		return err
	}
	if _, err := t.client.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the CRD: %w", err)
	}
	if err := t.createNamespaces(ctx, namespaces); err != nil {
		return err
	}
	// Served once a create goes through.
	return waitFor(ctx, t.srv, time.Minute, func() bool {
		_, err := t.client.Resource(t.gvr).Namespace("default").Create(ctx, widget(t.gvr.Group, "probe"), metav1.CreateOptions{})
		return err == nil
	})
}

func widget(group, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"replicas": int64(1)},
	}}
}

// creates makes n Widgets in namespace ns with c workers, named from index
// from on, and returns how long it took.
func (t *target) creates(ctx context.Context, ns string, from, n, c int) (time.Duration, error) {
	return t.createMany(ctx, t.gvr, ns, from, n, c, func(i int) *unstructured.Unstructured { return widget(t.gvr.Group, fmt.Sprintf("w-%06d", i)) })
}

// createMany makes objects from..from+n-1 of gvr in ns with c workers and
// returns how long it took.
func (t *target) createMany(ctx context.Context, gvr schema.GroupVersionResource, ns string, from, n, c int, object func(i int) *unstructured.Unstructured) (time.Duration, error) {
	var next atomic.Int64
	next.Store(int64(from))
	n += from
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(n) || ctx.Err() != nil {
					return
				}
				obj := object(int(i))
				if _, err := t.client.Resource(gvr).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
					once.Do(func() { firstErr = fmt.Errorf("%s: create %s/%s: %w", t.name, ns, obj.GetName(), err); cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	return time.Since(start), nil
}

// list GETs every Widget of ns with the given Accept header (and query); it
// returns the time to the last byte, the content type answered and the size.
func (t *target) list(ctx context.Context, ns, accept, query string) (time.Duration, string, int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/apis/%s/%s/namespaces/%s/%s%s", t.cfg.Host, t.gvr.Group, t.gvr.Version, ns, t.gvr.Resource, query), nil)
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Accept", accept)
	start := time.Now()
	resp, err := t.http.Do(req)
	if err != nil {
		return 0, "", 0, err
	}
	defer resp.Body.Close()
	size, err := io.Copy(io.Discard, resp.Body)
	d := time.Since(start)
	if err != nil {
		return 0, "", 0, err
	}
	if resp.StatusCode != http.StatusOK {
		return 0, "", 0, fmt.Errorf("%s: LIST %s: HTTP %d", t.name, ns, resp.StatusCode)
	}
	return d, resp.Header.Get("Content-Type"), size, nil
}

// count lists ns through the dynamic client.
func (t *target) count(ctx context.Context, ns string) (int, error) {
	l, err := t.client.Resource(t.gvr).Namespace(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	return len(l.Items), nil
}

// profileCPU takes a CPU profile of t's server for d while load runs, and
// returns the top of `go tool pprof -top`.
func (b *bench) profileCPU(t *target, name, bin string, d time.Duration, load func() error) (string, error) {
	path := filepath.Join(b.tmp, "generated-apiserver."+name+".cpu.pprof")
	errc := make(chan error, 1)
	at := t
	if t.direct != nil {
		at = t.direct
	}
	go func() {
		resp, err := at.http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", at.cfg.Host, int(d.Seconds())))
		if err != nil {
			errc <- err
			return
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			errc <- fmt.Errorf("/debug/pprof/profile: HTTP %d", resp.StatusCode)
			return
		}
		f, err := os.Create(path)
		if err != nil {
			errc <- err
			return
		}
		defer f.Close()
		_, err = io.Copy(f, resp.Body)
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if err := load(); err != nil {
		return "", err
	}
	if err := <-errc; err != nil {
		return "", err
	}
	out, err := exec.CommandContext(b.ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=2000", bin, path).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go tool pprof: %w: %s", err, out)
	}
	return profileAreas(string(out)), nil
}

// heapTop notes the largest in-use allocation sites of t's server, from
// its /debug/pprof/heap (`go tool pprof -top -sample_index=inuse_space`).
func (b *bench) heapTop(t *target, label, bin string) {
	at := t
	if t.direct != nil {
		at = t.direct
	}
	err := func() error {
		resp, err := at.http.Get(at.cfg.Host + "/debug/pprof/heap?gc=1")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("/debug/pprof/heap: HTTP %d", resp.StatusCode)
		}
		path := filepath.Join(b.tmp, "generated-apiserver."+label+".heap.pprof")
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		if _, err := io.Copy(f, resp.Body); err != nil {
			f.Close()
			return err
		}
		f.Close()
		out, err := exec.CommandContext(b.ctx, "go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=8", bin, path).CombinedOutput()
		if err != nil {
			return fmt.Errorf("go tool pprof: %w: %s", err, out)
		}
		var lines []string
		for _, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(line, "Showing nodes") || (len(lines) > 0 && strings.TrimSpace(line) != "") {
				lines = append(lines, strings.TrimSpace(line))
			}
		}
		b.note("4", "%s: the generated apiserver's heap (in use, after a GC), largest allocation sites:\n```\n%s\n```", label, strings.Join(lines, "\n"))
		return nil
	}()
	if err != nil {
		b.note("4", "%s: heap profile failed: %v", label, err)
	}
}

// profileAreas summarises `pprof -top -cum` output: the share of the
// profile's samples under each area (areas overlap: GC runs inside others).
func profileAreas(top string) string {
	areas := []struct{ name, fn string }{
		{"total samples", "Total samples"},
		{"request handling (handler chain)", "net/http.HandlerFunc.ServeHTTP"},
		{"registry Store.Create", "registry.(*Store).Create"},
		{"etcd3 store Create", "etcd3.(*store).Create"},
		{"etcd client (gRPC)", "grpc.(*ClientConn).Invoke"},
		{"managedFields update", "managedfields/internal.(*FieldManager).Update"},
		{"JSON decode", "serializer/json.(*Serializer).Decode"},
		{"JSON encode", "serializer/json.(*Serializer).Encode"},
		{"protobuf encode", "serializer/protobuf.(*Serializer).Encode"},
		{"protobuf decode", "serializer/protobuf.(*Serializer).Decode"},
		{"watch cache", "cacher.(*watchCache).processEvent"},
		{"admission", "admission."},
		{"strategy hooks (pkg/internal/strategy)", "apiserver-boot/pkg/internal/strategy."},
		{"HTTP/2 and TLS writes", "http2.(*serverConn).writeFrameAsync"},
		{"LIST from the watch cache", "cacher.(*Cacher).GetList"},
		{"consistent read: wait for the cache", "cacher.(*watchCache).waitUntilFreshAndBlock"},
		{"response encoding", "responsewriters.SerializeObject"},
		{"protobuf Marshal (generated)", "List).Marshal"},
		{"gzip of the response", "compress/flate.(*compressor).write"},
		{"slice growth (growslice)", "runtime.growslice"},
		{"memory allocation", "runtime.mallocgc"},
		{"GC background marking", "runtime.gcBgMarkWorker"},
		{"goroutine stack growth", "runtime.newstack"},
	}
	var out []string
	for _, a := range areas {
		for _, line := range strings.Split(top, "\n") {
			if !strings.Contains(line, a.fn) {
				continue
			}
			if a.name == "total samples" {
				out = append(out, strings.TrimSpace(line))
				break
			}
			f := strings.Fields(line)
			if len(f) >= 6 {
				out = append(out, fmt.Sprintf("%-34s %s", a.name, f[4]))
			}
			break
		}
	}
	return strings.Join(out, "\n")
}

// serving is item 4: two pairings on one etcd. (a) aggregated: the
// generated apiserver in delegated mode behind kube-apiserver, as clusters
// run it, against a CRD on that kube-apiserver; (b) standalone: the
// generated apiserver alone against kube-apiserver with the settings that
// make it comparable, then the etcd ceiling, growth to 100,000 objects and
// CPU profiles.
func (b *bench) serving() error {
	p, err := b.servingProject()
	if err != nil {
		return err
	}
	etcdURL, etcd, err := b.etcd()
	if err != nil {
		return err
	}
	haveKAS := true
	if _, err := os.Stat(b.kas); err != nil {
		haveKAS = false
		b.note("4", "SKIPPED every kube-apiserver reference and the aggregated pairing: %s is not built. Build it with `make test-tools` (kube-apiserver from k8s.io/kubernetes, into .cache/bin), then rerun `make bench`. The generated apiserver is measured alone.", b.kas)
	} else {
		out, _ := proc.Command(b.ctx, b.tmp, nil, b.kas, "--version")
		b.logf("reference: %s", strings.TrimSpace(out))
		b.note("4", "reference: %s, on the same etcd as the generated apiserver (other prefixes), serving the Widget CRD in group %s (kube-apiserver cannot serve a CRD and an APIService of one group and version). A difference listed: the generated apiserver is built on k8s.io/apiserver %s, the release after kube-apiserver's (test/tools builds the newest Kubernetes release its module proxy serves)", strings.TrimSpace(out), crdGroup, b.k8s)
		if err := b.aggregatedPairing(p, etcdURL); err != nil {
			if b.ctx.Err() != nil {
				return err
			}
			// The standalone pairing still runs.
			b.note("4", "FAILED: the aggregated pairing: %v", err)
			b.add(row{Item: "4", Measure: "aggregated pairing", Value: "failed", Ref: "-", Ratio: "-", Met: "no"})
		}
	}
	return b.standalonePairing(p, etcdURL, etcd, haveKAS)
}

// pairing is the generated apiserver and its reference (nil when
// kube-apiserver is not built), measured the same way.
type pairing struct {
	label     string
	ours, ref *target
	// creates/s the generated apiserver must reach, as a multiple of the reference's
	createTarget float64
}

func (pr pairing) targets() []*target {
	if pr.ref == nil {
		return []*target{pr.ours}
	}
	return []*target{pr.ours, pr.ref}
}

// levels are the create concurrencies of item 4; n creates per level and server.
var levels = []int{1, 8, 32}

const perLevel = 1000

// namespaces every server of item 4 writes to (kube-apiserver needs them).
func benchNamespaces() []string {
	ns := []string{"warmup", "prof", "listed", "watched"}
	for _, size := range []string{"1k", "10k", "100k"} {
		ns = append(ns, "at-"+size, "fill-"+size)
	}
	for _, c := range levels {
		ns = append(ns, fmt.Sprintf("c%d", c), fmt.Sprintf("typed-json-c%d", c), fmt.Sprintf("typed-protobuf-c%d", c))
	}
	return ns
}

// alternate makes n objects in ns on every target with c workers, in four
// chunks that alternate between the targets so that both see the same
// bursts of other work, and returns each target's creates/s and the CPU
// time of each of its servers.
func (b *bench) alternate(targets []*target, ns string, from, n, c int) (map[*target]float64, map[*target][]time.Duration, error) {
	const chunks = 4
	took, cpu := map[*target]time.Duration{}, map[*target][]time.Duration{}
	for k := 0; k < chunks; k++ {
		for _, t := range targets {
			c0 := t.cpuTimes()
			d, err := t.creates(b.ctx, ns, from+k*n/chunks, n/chunks, c)
			if err != nil {
				return nil, nil, err
			}
			if cpu[t] == nil {
				cpu[t] = make([]time.Duration, len(c0))
			}
			for i, c1 := range t.cpuTimes() {
				cpu[t][i] += c1 - c0[i]
			}
			took[t] += d
		}
	}
	rates := map[*target]float64{}
	for _, t := range targets {
		rates[t] = float64(n) / took[t].Seconds()
	}
	return rates, cpu, nil
}

// createLevels measures creates at each level; before each, before runs
// (when not nil); after each, then runs with the level and the generated
// apiserver's rate. It returns the CPU time of each target over all levels.
func (b *bench) createLevels(pr pairing, before func(c int), then func(c int, rate float64) error) (map[*target][]time.Duration, error) {
	cpu := map[*target][]time.Duration{}
	for _, t := range pr.targets() {
		if _, err := t.creates(b.ctx, "warmup", 0, 50, 8); err != nil {
			return nil, err
		}
	}
	for _, c := range levels {
		b.logf("%s: %d creates per server, %d workers, in alternating chunks", pr.label, perLevel, c)
		if before != nil {
			before(c)
		}
		rates, used, err := b.alternate(pr.targets(), fmt.Sprintf("c%d", c), 0, perLevel, c)
		if err != nil {
			return nil, err
		}
		for t, ds := range used {
			if cpu[t] == nil {
				cpu[t] = make([]time.Duration, len(ds))
			}
			for i, d := range ds {
				cpu[t][i] += d
			}
		}
		r := row{Item: "4", Measure: fmt.Sprintf("%s: creates/s, C=%d", pr.label, c), Value: fmt.Sprintf("%.0f/s", rates[pr.ours]), Target: fmt.Sprintf("≥%gx CRD", pr.createTarget)}
		if pr.ref != nil {
			r.Ref = fmt.Sprintf("%.0f/s (CRD)", rates[pr.ref])
			r.Ratio = fmt.Sprintf("%.2fx", rates[pr.ours]/rates[pr.ref])
			r.Met = yesNo(rates[pr.ours] >= pr.createTarget*rates[pr.ref])
		} else {
			r.Ref, r.Ratio = "skipped", "-"
		}
		b.add(r)
		if then != nil {
			if err := then(c, rates[pr.ours]); err != nil {
				return nil, err
			}
		}
	}
	for _, t := range pr.targets() {
		got, err := t.count(b.ctx, "c1")
		if err != nil {
			return nil, err
		}
		if got != perLevel {
			return nil, fmt.Errorf("%s: LIST of namespace c1 has %d items, want %d", t.name, got, perLevel)
		}
	}
	return cpu, nil
}

const protobufType = "application/vnd.kubernetes.protobuf"

// lists times LISTs of ns: one untimed each, then five alternating; it
// returns each target's median and a description of the runs.
func (b *bench) lists(targets []*target, ns, accept, query string) (map[*target]time.Duration, string, map[*target]string, error) {
	runs := map[*target][]time.Duration{}
	answer, types := map[*target]string{}, map[*target]string{}
	for _, t := range targets {
		if _, _, _, err := t.list(b.ctx, ns, accept, query); err != nil {
			return nil, "", nil, err
		}
	}
	for i := 0; i < 5; i++ {
		for _, t := range targets {
			d, ct, size, err := t.list(b.ctx, ns, accept, query)
			if err != nil {
				return nil, "", nil, err
			}
			runs[t] = append(runs[t], d)
			answer[t] = fmt.Sprintf("%s, %d KB", ct, size/1024)
			types[t] = ct
		}
	}
	lat := map[*target]time.Duration{}
	var detail []string
	for _, t := range targets {
		lat[t] = median(runs[t])
		detail = append(detail, fmt.Sprintf("%s answered %s, runs %s", t.name, answer[t], millis(runs[t])))
	}
	return lat, strings.Join(detail, "; "), types, nil
}

// listRows adds the LIST rows of a pairing (the 1,000 objects of c1).
func (b *bench) listRows(pr pairing, withRV0 bool) error {
	cases := []struct {
		name, header, query string
		limit               float64 // of the CRD's latency; 0: a note, not a row
	}{
		{"JSON", "application/json", "", 0.3},
		{"protobuf", protobufType + ",application/json", "", 0.2},
	}
	if withRV0 {
		cases = append(cases, []struct {
			name, header, query string
			limit               float64
		}{
			{"JSON, resourceVersion=0", "application/json", "?resourceVersion=0", 0},
			{"protobuf, resourceVersion=0", protobufType + ",application/json", "?resourceVersion=0", 0},
		}...)
	}
	for _, cs := range cases {
		lat, detail, types, err := b.lists(pr.targets(), "c1", cs.header, cs.query)
		if err != nil {
			return err
		}
		if cs.limit == 0 {
			// Not a target: served from the watch cache without the
			// consistency round trip to etcd of a plain LIST.
			msg := fmt.Sprintf("%s: LIST %s (Accept: %s): %s median", pr.label, cs.name, cs.header, ms(lat[pr.ours]))
			if pr.ref != nil {
				msg += fmt.Sprintf(", CRD %s median (%.2fx)", ms(lat[pr.ref]), ratio(lat[pr.ours], lat[pr.ref]))
			}
			b.note("4", "%s; %s", msg, detail)
			continue
		}
		r := row{Item: "4", Measure: fmt.Sprintf("%s: LIST 1,000, %s (median of 5)", pr.label, cs.name), Value: ms(lat[pr.ours]), Target: fmt.Sprintf("≤%gx CRD", cs.limit)}
		if pr.ref != nil {
			r.Ref = ms(lat[pr.ref]) + " (CRD"
			if cs.name == "protobuf" {
				r.Ref += ", JSON: CRDs have no protobuf"
			}
			r.Ref += ")"
			q := ratio(lat[pr.ours], lat[pr.ref])
			r.Ratio = fmt.Sprintf("%.2fx", q)
			r.Met = yesNo(q <= cs.limit)
			if want := strings.Split(cs.header, ",")[0]; !strings.HasPrefix(types[pr.ours], want) {
				r.Met = "no (answered " + types[pr.ours] + ")"
			}
		} else {
			r.Ref, r.Ratio = "skipped", "-"
		}
		b.add(r)
		b.note("4", "%s: LIST %s (Accept: %s): %s", pr.label, cs.name, cs.header, detail)
	}
	return nil
}

// cpuRow adds the server CPU per create of a pairing's levels; oursIs
// names the generated apiserver's servers (their CPU times in order).
func (b *bench) cpuRow(pr pairing, cpu map[*target][]time.Duration, oursIs []string, refIs string) {
	creates := len(levels) * perLevel
	perCreate := func(d time.Duration) string {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000/float64(creates))
	}
	sum := func(ds []time.Duration) (total time.Duration) {
		for _, d := range ds {
			total += d
		}
		return total
	}
	var parts []string
	for i, d := range cpu[pr.ours] {
		parts = append(parts, perCreate(d)+" "+oursIs[i])
	}
	r := row{Item: "4", Measure: fmt.Sprintf("%s: server CPU per create (all %d)", pr.label, creates), Value: perCreate(sum(cpu[pr.ours])) + " (" + strings.Join(parts, " + ") + ")", Target: "-"}
	if pr.ref != nil {
		r.Ref = perCreate(sum(cpu[pr.ref])) + " (" + refIs + ")"
		r.Ratio = fmt.Sprintf("%.2fx", ratio(sum(cpu[pr.ours]), sum(cpu[pr.ref])))
	} else {
		r.Ref, r.Ratio = "skipped", "-"
	}
	b.add(r)
}

// typedRows compares the generated typed clientset speaking protobuf with
// the same clientset speaking JSON, on the same server, per level.
func (b *bench) typedRows(p *servingProject, pr pairing) error {
	const rounds = 2
	for _, c := range levels {
		took := map[bool]time.Duration{}
		for k := 0; k < rounds; k++ {
			for _, protobuf := range []bool{false, true} {
				enc := map[bool]string{false: "json", true: "protobuf"}[protobuf]
				d, err := b.typedCreates(p, pr.ours, fmt.Sprintf("typed-%s-c%d", enc, c), fmt.Sprintf("r%d", k), perLevel/rounds, c, protobuf)
				if err != nil {
					return err
				}
				took[protobuf] += d
			}
		}
		pb, js := float64(perLevel)/took[true].Seconds(), float64(perLevel)/took[false].Seconds()
		b.add(row{Item: "4", Measure: fmt.Sprintf("%s: creates/s, C=%d, generated typed clientset speaking protobuf", pr.label, c),
			Value: fmt.Sprintf("%.0f/s", pb), Ref: fmt.Sprintf("%.0f/s (the same clientset speaking JSON)", js), Ratio: fmt.Sprintf("%.2fx", pb/js)})
	}
	return nil
}

// aggregatedPairing is item 4 (a): kube-apiserver as clusters run it,
// serving the CRD and proxying to the generated apiserver in delegated mode.
func (b *bench) aggregatedPairing(p *servingProject, etcdURL string) error {
	b.logf("aggregated: kube-apiserver (cluster settings) and the generated apiserver in delegated mode behind it")
	kas, err := b.kubeAPIServer(b.kas, etcdURL, "/kube-apiserver-cluster", kasCluster)
	if err != nil {
		return err
	}
	defer kas.srv.Stop(15 * time.Second)
	if err := kas.admin.installCRD(b.ctx, benchNamespaces()); err != nil {
		return err
	}
	ours, err := b.delegatedServer(p, etcdURL, kas)
	if err != nil {
		return err
	}
	defer ours.srv.Stop(15 * time.Second)
	pr := pairing{label: "aggregated", ours: ours, ref: kas.target, createTarget: 1.5}
	cpu, err := b.createLevels(pr, nil, nil)
	if err != nil {
		return err
	}
	b.cpuRow(pr, cpu, []string{"generated apiserver", "kube-apiserver proxying"}, "kube-apiserver")
	if err := b.listRows(pr, false); err != nil {
		return err
	}
	if err := b.watchRow(pr); err != nil {
		return err
	}
	if err := b.typedRows(p, pr); err != nil {
		return err
	}
	if b.profile {
		b.profileCreates(ours, "aggregated", p.apiserver(), 10*time.Second)
	}
	b.note("4", "aggregated: kube-apiserver runs %s; the generated apiserver runs in delegated mode (`--authentication-kubeconfig`, `--authorization-kubeconfig`, `--kubeconfig`, with kube-apiserver's administrator as its own identity: requests authenticated by the front-proxy certificate, authorized by SubjectAccessReview, admitted by NamespaceLifecycle, webhooks and policies, priority and fairness from kube-apiserver's FlowSchemas), registered with an APIService; the load's user (bench-user, group bench-users, allowed widgets of both groups by a ClusterRole) reaches both through kube-apiserver, so RBAC, the generated apiserver's SubjectAccessReviews and priority and fairness all take part. Targets read from issue 17: ≥1.5x the CRD's creates/s through the aggregator, ≥2x in the standalone pairing", strings.Join(kas.flags, " "))
	return nil
}

// standalonePairing is item 4 (b), then the ceiling, growth and profiles.
func (b *bench) standalonePairing(p *servingProject, etcdURL string, etcd *proc.Server, haveKAS bool) error {
	ours, err := b.generatedServer(p, etcdURL)
	if err != nil {
		return err
	}
	defer ours.srv.Stop(15 * time.Second)
	pr := pairing{label: "standalone", ours: ours, createTarget: 2}
	if haveKAS {
		kas, err := b.standaloneReference(etcdURL)
		if err != nil {
			return err
		}
		defer kas.srv.Stop(15 * time.Second)
		pr.ref = kas.target
	}
	idle := map[*target]float64{}
	for _, t := range pr.targets() {
		idle[t], _ = proc.RSSMB(t.srv.Pid())
	}
	// Growth: the points at 1,000 and 10,000 stored objects come first (the
	// levels and the typed-client rows below add objects), 100,000 last.
	points := []growthPoint{{stored: 1000, size: "1k"}, {stored: 10000, size: "10k"}, {stored: 100000, size: "100k"}}
	for i := range points[:2] {
		if err := b.growthPoint(pr, &points[i]); err != nil {
			return err
		}
	}
	if err := b.createLevelsAndCeiling(pr, etcdURL, etcd); err != nil {
		return err
	}
	if err := b.listRows(pr, true); err != nil {
		return err
	}
	if err := b.typedRows(p, pr); err != nil {
		return err
	}
	// Growth: 100,000 stored objects.
	if err := b.growthPoint(pr, &points[2]); err != nil {
		return err
	}
	if b.profile {
		b.heapTop(ours, fmt.Sprintf("standalone at %s objects", thousands(points[len(points)-1].stored)), p.apiserver())
	}
	b.growthRows(pr, points)
	b.standaloneRSSRows(pr, points, idle)
	// Where the generated apiserver spends its time under create and list
	// load (last: its creates would count as stored objects above).
	if b.profile {
		b.profiles(p, ours)
	}
	return nil
}

// standaloneReference starts kube-apiserver with the comparable settings
// and installs the Widget CRD on it.
func (b *bench) standaloneReference(etcdURL string) (_ *kubeAPI, err error) {
	kas, err := b.kubeAPIServer(b.kas, etcdURL, "/kube-apiserver", kasComparable)
	if err != nil {
		return nil, err
	}
	if err := kas.admin.installCRD(b.ctx, benchNamespaces()); err != nil {
		kas.srv.Stop(15 * time.Second)
		return nil, err
	}
	b.note("4", "standalone: kube-apiserver runs %s; what it still does that the standalone generated apiserver does not: its aggregator and built-in APIs in front of the CRD handler, its controllers (in the background), and the CRD's pruning of unknown fields", strings.Join(kas.flags, " "))
	return kas, nil
}

// createLevelsAndCeiling runs the create levels, each followed by the
// ceiling at its concurrency, and adds their rows, the CPU row and etcd's
// CPU per create.
func (b *bench) createLevelsAndCeiling(pr pairing, etcdURL string, etcd *proc.Server) error {
	var ceilings []row
	etcdCPU := time.Duration(0)
	var e0 time.Duration
	cpu, err := b.createLevels(pr, func(int) { e0 = proc.CPUTime(etcd.Pid()) }, func(c int, rate float64) error {
		etcdCPU += proc.CPUTime(etcd.Pid()) - e0
		// The ceiling: etcd's own create transactions, same value size, same
		// concurrency, same etcd, right after.
		size, err := storedSize(b.ctx, etcdURL, "/apiserver-boot/")
		if err != nil {
			return err
		}
		raw, err := rawCreates(b.ctx, etcdURL, fmt.Sprintf("/ceiling/c%d", c), size, perLevel, c)
		if err != nil {
			return err
		}
		rawRate := float64(perLevel) / raw.Seconds()
		ceilings = append(ceilings, row{Item: "4", Measure: fmt.Sprintf("standalone: creates/s as a share of etcd's, C=%d", c), Value: fmt.Sprintf("%.0f/s", rate),
			Ref: fmt.Sprintf("%.0f/s (etcd txn, %d B)", rawRate, size), Ratio: fmt.Sprintf("%.2fx", rate/rawRate), Target: "≥0.6x etcd", Met: yesNo(rate >= 0.6*rawRate)})
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range ceilings {
		b.add(r)
	}
	b.note("4", "the ceiling: etcd's own client (go.etcd.io/etcd/client/v3, one connection) writing %d values per level, each a transaction that puts the key if it does not exist, as the apiserver's storage does for a create, with values of the size the generated apiserver stored for a Widget; same etcd, same concurrency, right after the apiserver's creates", perLevel)
	b.cpuRow(pr, cpu, []string{"generated apiserver"}, "kube-apiserver")
	b.note("4", "standalone: etcd CPU during the creates of the levels (both servers' when kube-apiserver runs): %.2f ms per create", float64(etcdCPU.Microseconds())/1000/float64(len(pr.targets())*len(levels)*perLevel))
	return nil
}

// standaloneRSSRows adds the RSS rows: at 10,000 and 100,000 stored
// objects against their targets, and idle before the load.
func (b *bench) standaloneRSSRows(pr pairing, points []growthPoint, idle map[*target]float64) {
	ours := pr.ours
	rss, held := map[int]map[*target]float64{}, map[int]int{}
	for _, p := range points[1:] {
		rss[p.stored], held[p.stored] = p.rss, p.actual
	}
	for _, m := range []struct {
		stored int
		target string
		met    func(ours, ref float64) bool
	}{
		{10000, "≤150 MB", func(ours, ref float64) bool { return ours <= 150 }},
		{100000, "≤0.3x kube-apiserver", func(ours, ref float64) bool { return ref > 0 && ours <= 0.3*ref }},
	} {
		o := rss[m.stored][ours]
		r := row{Item: "4", Measure: fmt.Sprintf("standalone: RSS at %s objects", thousands(held[m.stored])), Value: fmt.Sprintf("%.0f MB", o), Target: m.target}
		if pr.ref != nil {
			ref := rss[m.stored][pr.ref]
			r.Ref = fmt.Sprintf("%.0f MB (all of kube-apiserver)", ref)
			r.Ratio = fmt.Sprintf("%.2fx", o/ref)
			r.Met = yesNo(m.met(o, ref))
		} else {
			r.Ref, r.Ratio = "skipped", "-"
			if m.stored == 10000 {
				r.Met = yesNo(m.met(o, 0))
			}
		}
		b.add(r)
	}
	r := row{Item: "4", Measure: "standalone: RSS idle, before the load", Value: fmt.Sprintf("%.0f MB", idle[ours]), Ratio: "-"}
	if pr.ref != nil {
		r.Ref = fmt.Sprintf("%.0f MB (all of kube-apiserver)", idle[pr.ref])
		r.Ratio = fmt.Sprintf("%.2fx", idle[ours]/idle[pr.ref])
	} else {
		r.Ref = "skipped"
	}
	b.add(r)
}

// profileCreates profiles the generated apiserver during d of creates
// (C=32) through t and notes it.
func (b *bench) profileCreates(t *target, label, bin string, d time.Duration) {
	b.logf("%s: profiling the generated apiserver under create load (C=32)", label)
	top, err := b.profileCPU(t, label+"-create", bin, d, func() error {
		ctx, cancel := context.WithTimeout(b.ctx, d)
		defer cancel()
		_, err := t.creates(ctx, "prof", 0, 1000000, 32)
		if ctx.Err() != nil {
			return nil // the profile's time is up
		}
		return err
	})
	if err != nil {
		b.note("4", "%s: CPU profile failed: %v", label, err)
		return
	}
	b.note("4", "%s: CPU profile of the generated apiserver during 10 s of creates (C=32): cumulative share of samples per area (`go tool pprof -top -cum`):\n```\n%s\n```", label, top)
}

// growthPoint is one stored size of the growth measurement.
type growthPoint struct {
	stored int
	actual int                 // what both servers held before its timed creates (stored or more)
	rss    map[*target]float64 // MB, as filled
	size   string              // 1k: its namespaces are fill-1k and at-1k (its timed creates)
	rates  map[*target]float64
	list   map[*target]time.Duration
}

// growthCreates is how many creates each growth point times per server.
const growthCreates = 4000

// growthPoint fills every target to p.stored objects (namespace fill-<size>;
// the first point also writes the 1,000 objects of namespace listed), then
// times growthCreates creates (C=8, alternating) and LISTs of listed.
func (b *bench) growthPoint(pr pairing, p *growthPoint) error {
	if p.size == "1k" {
		for _, t := range pr.targets() {
			if _, err := t.creates(b.ctx, "listed", 0, 1000, 8); err != nil {
				return err
			}
		}
	}
	// Both servers hold the same number: at least p.stored, more when one
	// already holds more (the typed-client rows write to ours only).
	have := map[*target]int{}
	p.actual = p.stored
	for _, t := range pr.targets() {
		n, err := t.total(b.ctx)
		if err != nil {
			return err
		}
		have[t], p.actual = n, max(p.actual, n)
	}
	for _, t := range pr.targets() {
		if have[t] < p.actual {
			b.logf("%s: filling to %d objects", t.name, p.actual)
			if _, err := t.creates(b.ctx, "fill-"+p.size, 0, p.actual-have[t], 32); err != nil {
				return err
			}
		}
	}
	// The resident set as filled, before the timed creates.
	p.rss = map[*target]float64{}
	for _, t := range pr.targets() {
		var err error
		if p.rss[t], err = proc.RSSMB(t.srv.Pid()); err != nil {
			return err
		}
	}
	rates, _, err := b.alternate(pr.targets(), "at-"+p.size, 0, growthCreates, 8)
	if err != nil {
		return err
	}
	p.rates = rates
	p.list, _, _, err = b.lists(pr.targets(), "listed", "application/json", "")
	return err
}

func (b *bench) growthRows(pr pairing, points []growthPoint) {
	for _, p := range points {
		r := row{Item: "4", Measure: fmt.Sprintf("standalone: creates/s, C=8, %s objects stored", thousands(p.actual)), Value: fmt.Sprintf("%.0f/s", p.rates[pr.ours])}
		l := row{Item: "4", Measure: fmt.Sprintf("standalone: LIST 1,000, JSON, %s objects stored", thousands(p.actual)), Value: ms(p.list[pr.ours])}
		if pr.ref != nil {
			r.Ref, r.Ratio = fmt.Sprintf("%.0f/s (CRD)", p.rates[pr.ref]), fmt.Sprintf("%.2fx", p.rates[pr.ours]/p.rates[pr.ref])
			l.Ref, l.Ratio = ms(p.list[pr.ref])+" (CRD)", fmt.Sprintf("%.2fx", ratio(p.list[pr.ours], p.list[pr.ref]))
		} else {
			r.Ref, r.Ratio, l.Ref, l.Ratio = "skipped", "-", "skipped", "-"
		}
		b.add(r)
		b.add(l)
	}
	first, last := points[0], points[len(points)-1]
	q := last.rates[pr.ours] / first.rates[pr.ours]
	r := row{Item: "4", Measure: fmt.Sprintf("standalone: creates/s at %s stored over at %s", thousands(last.actual), thousands(first.actual)),
		Value: fmt.Sprintf("%.2fx", q), Target: "≥0.8x", Met: yesNo(q >= 0.8), Ratio: "-"}
	if pr.ref != nil {
		r.Ref = fmt.Sprintf("%.2fx (CRD)", last.rates[pr.ref]/first.rates[pr.ref])
	} else {
		r.Ref = "skipped"
	}
	b.add(r)
}

// total is how many Widgets t stores, in every namespace.
func (t *target) total(ctx context.Context) (int, error) {
	l, err := t.client.Resource(t.gvr).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return 0, err
	}
	n := len(l.Items)
	if rest := l.GetRemainingItemCount(); rest != nil {
		n += int(*rest)
	}
	return n, nil
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// profiles takes CPU profiles of the generated apiserver under create and
// LIST load and notes them per area.
func (b *bench) profiles(p *servingProject, ours *target) {
	const d = 10 * time.Second
	bin := p.apiserver()
	b.profileCreates(ours, "standalone", bin, d)
	b.logf("profiling the generated apiserver under protobuf LISTs of 1,000 objects")
	lists := 0
	top, err := b.profileCPU(ours, "list", bin, d, func() error {
		for end := time.Now().Add(d); time.Now().Before(end); lists++ {
			if _, _, _, err := ours.list(b.ctx, "c1", protobufType, ""); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.note("4", "CPU profile failed: %v", err)
	} else {
		b.note("4", "CPU profile of the generated apiserver during 10 s of protobuf LISTs of 1,000 objects, one after the other (%d LISTs):\n```\n%s\n```", lists, top)
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func millis(ds []time.Duration) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%.1f", float64(d.Microseconds())/1000))
	}
	return strings.Join(parts, ", ") + " ms"
}
