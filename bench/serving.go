package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"
	"k8s.io/client-go/util/keyutil"
)

// Item 4: the generated apiserver against a CRD of the same schema on
// kube-apiserver, both on one external etcd.

// servingProject is a scaffolded one-kind project, built once.
type servingProject struct {
	dir        string
	buildTime  time.Duration
	group, gvr string
}

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
		if _, err := command(b.ctx, p.dir, nil, b.cli, args...); err != nil {
			return nil, err
		}
	}
	// The build run local does, so that item 5 finds a warm build cache.
	d, _, err := timedCommand(b.ctx, p.dir, nil, "go", "build", "-o", "bin/", "./cmd/apiserver", "./cmd/controller-manager")
	if err != nil {
		return nil, err
	}
	p.buildTime = d
	b.serve = p
	return p, nil
}

// etcd starts .cache/bin/etcd (built from the module proxy when missing, as the e2e tests do).
func (b *bench) etcd() (string, *server, error) {
	if b.etcdSrv != nil {
		return b.etcdURL, b.etcdSrv, nil // one data directory, one etcd
	}
	bin := filepath.Join(b.repo, ".cache", "bin", "etcd")
	if _, err := os.Stat(bin); err != nil {
		b.logf("building etcd into .cache/bin/etcd (go build go.etcd.io/etcd/server/v3)")
		if _, err := command(b.ctx, b.repo, nil, "go", "build", "-o", bin, "go.etcd.io/etcd/server/v3"); err != nil {
			return "", nil, err
		}
	}
	client, err := freePort()
	if err != nil {
		return "", nil, err
	}
	peer, err := freePort()
	if err != nil {
		return "", nil, err
	}
	url := fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	s, err := startServer(b.tmp, b.tmp, "etcd", bin, nil, "--name", "bench", "--data-dir", filepath.Join(b.tmp, "etcd-data"),
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
func waitFor(ctx context.Context, s *server, timeout time.Duration, ok func() bool) error {
	deadline := time.Now().Add(timeout)
	for {
		if ok() {
			return nil
		}
		if s.exited() {
			return fmt.Errorf("%s exited: %v\n%s", s.name, s.err, s.logTail())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s\n%s", s.name, timeout, s.logTail())
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
	name   string
	srv    *server
	cfg    *rest.Config
	client *dynamic.DynamicClient
	http   *http.Client
}

func newTarget(name string, srv *server, cfg *rest.Config) (*target, error) {
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
	return &target{name: name, srv: srv, cfg: cfg, client: client, http: hc}, nil
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

// generatedServer starts the serving project's apiserver on etcd.
func (b *bench) generatedServer(p *servingProject, etcdURL string) (*target, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(b.tmp, filepath.Base(p.dir)+".kubeconfig") // one per project: a server refuses another's
	s, err := startServer(p.dir, b.tmp, filepath.Base(p.dir)+"-apiserver", filepath.Join(p.dir, "bin", "apiserver"), nil,
		"--etcd-servers", etcdURL, "--etcd-prefix", "/apiserver-boot", "--secure-port", fmt.Sprint(port), "--write-kubeconfig", kubeconfig)
	if err != nil {
		return nil, err
	}
	var cfg *rest.Config
	if err := waitFor(b.ctx, s, 2*time.Minute, func() bool {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
		return err == nil
	}); err != nil {
		return nil, err
	}
	t, err := newTarget("apiserver-boot", s, cfg)
	if err != nil {
		return nil, err
	}
	return t, t.ready(b.ctx, 2*time.Minute)
}

// kubeAPIServer starts kube-apiserver on etcd under its own prefix.
func (b *bench) kubeAPIServer(bin, etcdURL string) (*target, error) {
	dir := filepath.Join(b.tmp, "kube-apiserver")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	tokenBytes := make([]byte, 16)
	if _, err := rand.Read(tokenBytes); err != nil {
		return nil, err
	}
	token := hex.EncodeToString(tokenBytes)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		return nil, err
	}
	key, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, err
	}
	saKey := filepath.Join(dir, "sa.key")
	if err := os.WriteFile(saKey, key, 0o600); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s, err := startServer(dir, b.tmp, "kube-apiserver", bin, nil,
		"--etcd-servers", etcdURL, "--etcd-prefix", "/kube-apiserver",
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", fmt.Sprint(port),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens, "--authorization-mode", "RBAC",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", saKey, "--service-account-signing-key-file", saKey,
		"--service-cluster-ip-range", "10.0.0.0/24",
		// The kubernetes Service's endpoints would hold the loopback address, which endpoints refuse.
		"--endpoint-reconciler-type", "none")
	if err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: fmt.Sprintf("https://127.0.0.1:%d", port), BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	t, err := newTarget("CRD on kube-apiserver", s, cfg)
	if err != nil {
		return nil, err
	}
	return t, t.ready(b.ctx, 3*time.Minute)
}

// widgetCRD is the scaffolded Widget's schema as a CustomResourceDefinition:
// spec.replicas (int32, at least 0: the scaffolded Validate hook) and the
// scaffolded status (replicas, observedGeneration, metav1.Condition list),
// with a status subresource.
const widgetCRD = `{
  "apiVersion": "apiextensions.k8s.io/v1",
  "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.bench.example.com"},
  "spec": {
    "group": "bench.example.com",
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

// installCRD creates the Widget CRD and the namespaces on kube-apiserver and
// waits until a Widget can be created.
func (t *target) installCRD(ctx context.Context, namespaces []string) error {
	crd := &unstructured.Unstructured{}
	if err := json.Unmarshal([]byte(widgetCRD), &crd.Object); err != nil {
		return err
	}
	if _, err := t.client.Resource(crdGVR).Create(ctx, crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating the CRD: %w", err)
	}
	for _, ns := range namespaces {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := t.client.Resource(namespaceGVR).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	// Served once a create goes through.
	return waitFor(ctx, t.srv, time.Minute, func() bool {
		_, err := t.client.Resource(widgets).Namespace("default").Create(ctx, widget("probe"), metav1.CreateOptions{})
		return err == nil
	})
}

func widget(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "bench.example.com/v1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"replicas": int64(1)},
	}}
}

// creates makes n Widgets in namespace ns with c workers, named from index
// from on, and returns how long it took.
func (t *target) creates(ctx context.Context, ns string, from, n, c int) (time.Duration, error) {
	return t.createMany(ctx, widgets, ns, from, n, c, func(i int) *unstructured.Unstructured { return widget(fmt.Sprintf("w-%06d", i)) })
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/apis/%s/%s/namespaces/%s/%s%s", t.cfg.Host, widgets.Group, widgets.Version, ns, widgets.Resource, query), nil)
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
	l, err := t.client.Resource(widgets).Namespace(ns).List(ctx, metav1.ListOptions{})
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
	go func() {
		resp, err := t.http.Get(fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", t.cfg.Host, int(d.Seconds())))
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
		{"strategy hooks (builders)", "apiserver-boot/pkg/builders."},
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

// cpuTime is the user and system CPU time pid has used.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	// USER_HZ is 100 on Linux.
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// serving is item 4.
func (b *bench) serving() error {
	p, err := b.servingProject()
	if err != nil {
		return err
	}
	etcdURL, etcd, err := b.etcd()
	if err != nil {
		return err
	}
	ours, err := b.generatedServer(p, etcdURL)
	if err != nil {
		return err
	}
	defer ours.srv.stop(15 * time.Second)

	kasBin := b.kas
	var crd *target
	levels := []int{1, 8, 32}
	namespaces := []string{"warmup", "c1", "c8", "c32", "fill", "prof"}
	if _, err := os.Stat(kasBin); err != nil {
		b.note("4", "SKIPPED the CRD reference: %s is not built. Build it with `make test-tools` (kube-apiserver from k8s.io/kubernetes, into .cache/bin), then rerun `make bench`. The generated apiserver is measured alone.", kasBin)
	} else {
		out, _ := command(b.ctx, b.tmp, nil, kasBin, "--version")
		b.logf("starting %s", strings.TrimSpace(out))
		if crd, err = b.kubeAPIServer(kasBin, etcdURL); err != nil {
			return err
		}
		defer crd.srv.stop(15 * time.Second)
		if err := crd.installCRD(b.ctx, namespaces); err != nil {
			return err
		}
		b.note("4", "reference: %s with the Widget CRD, on the same etcd (prefix /kube-apiserver; the generated apiserver uses /apiserver-boot)", strings.TrimSpace(out))
	}
	targets := []*target{ours}
	if crd != nil {
		targets = append(targets, crd)
	}
	idle := map[*target]float64{}
	for _, t := range targets {
		idle[t], _ = rssMB(t.srv.pid())
	}

	const n = 1000
	// CPU time used by each server (and by etcd for it) per create: unlike
	// the rates, it does not depend on how much CPU other work left us.
	serverCPU, etcdCPU := map[*target]time.Duration{}, map[*target]time.Duration{}
	for _, t := range targets {
		if _, err := t.creates(b.ctx, "warmup", 0, 50, 8); err != nil {
			return err
		}
	}
	// Each level in four chunks, alternating between the servers, so that
	// both see the same bursts of other work on the machine.
	const chunks = 4
	var ceilings []row
	for _, c := range levels {
		rates := map[*target]float64{}
		took := map[*target]time.Duration{}
		b.logf("%d creates per server, %d workers, in %d alternating chunks", n, c, chunks)
		for k := 0; k < chunks; k++ {
			for _, t := range targets {
				s0, e0 := cpuTime(t.srv.pid()), cpuTime(etcd.pid())
				d, err := t.creates(b.ctx, fmt.Sprintf("c%d", c), k*n/chunks, n/chunks, c)
				if err != nil {
					return err
				}
				serverCPU[t] += cpuTime(t.srv.pid()) - s0
				etcdCPU[t] += cpuTime(etcd.pid()) - e0
				took[t] += d
			}
		}
		for _, t := range targets {
			rates[t] = float64(n) / took[t].Seconds()
		}
		// The ceiling: etcd's own create transactions, same value size, same
		// concurrency, same etcd, right after.
		size, err := storedSize(b.ctx, etcdURL, "/apiserver-boot/")
		if err != nil {
			return err
		}
		raw, err := rawCreates(b.ctx, etcdURL, fmt.Sprintf("/ceiling/c%d", c), size, n, c)
		if err != nil {
			return err
		}
		rawRate := float64(n) / raw.Seconds()
		ceilings = append(ceilings, row{Item: "4", Measure: fmt.Sprintf("creates/s as a share of etcd's, C=%d", c), Value: fmt.Sprintf("%.0f/s", rates[ours]),
			Ref: fmt.Sprintf("%.0f/s (etcd txn, %d B)", rawRate, size), Ratio: fmt.Sprintf("%.2fx", rates[ours]/rawRate), Target: "≥0.6x etcd", Met: yesNo(rates[ours] >= 0.6*rawRate)})
		r := row{Item: "4", Measure: fmt.Sprintf("creates/s, C=%d", c), Value: fmt.Sprintf("%.0f/s", rates[ours]), Target: "≥2x CRD"}
		if crd != nil {
			r.Ref = fmt.Sprintf("%.0f/s (CRD)", rates[crd])
			r.Ratio = fmt.Sprintf("%.2fx", rates[ours]/rates[crd])
			r.Met = yesNo(rates[ours] >= 2*rates[crd])
		} else {
			r.Ref, r.Ratio = "skipped", "-"
		}
		b.add(r)
	}
	for _, r := range ceilings {
		b.add(r)
	}
	b.note("4", "the ceiling: etcd's own client (go.etcd.io/etcd/client/v3, one connection) writing %d values per level, each a transaction that puts the key if it does not exist, as the apiserver's storage does for a create, with values of the size the generated apiserver stored for a Widget; same etcd, same concurrency, right after the apiserver's creates", n)
	creates := len(levels) * n
	perCreate := func(d time.Duration) string {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000/float64(creates))
	}
	r := row{Item: "4", Measure: fmt.Sprintf("server CPU per create (all %d)", creates), Value: perCreate(serverCPU[ours]), Target: "-"}
	if crd != nil {
		r.Ref = perCreate(serverCPU[crd]) + " (kube-apiserver)"
		r.Ratio = fmt.Sprintf("%.2fx", ratio(serverCPU[ours], serverCPU[crd]))
		b.note("4", "etcd CPU per create: %s for the generated apiserver, %s for the CRD", perCreate(etcdCPU[ours]), perCreate(etcdCPU[crd]))
	} else {
		r.Ref, r.Ratio = "skipped", "-"
	}
	b.add(r)
	for _, t := range targets {
		got, err := t.count(b.ctx, "c1")
		if err != nil {
			return err
		}
		if got != n {
			return fmt.Errorf("%s: LIST of namespace c1 has %d items, want %d", t.name, got, n)
		}
	}

	const protobuf = "application/vnd.kubernetes.protobuf"
	for _, accept := range []struct{ name, header, query, target string }{
		{"JSON", "application/json", "", "≤0.5x CRD"},
		{"protobuf", protobuf + ",application/json", "", "≤0.3x CRD"},
		{"JSON, resourceVersion=0", "application/json", "?resourceVersion=0", ""},
		{"protobuf, resourceVersion=0", protobuf + ",application/json", "?resourceVersion=0", ""},
	} {
		lat := map[*target]time.Duration{}
		runs := map[*target][]time.Duration{}
		answer := map[*target]string{}
		for _, t := range targets { // one untimed warm-up LIST each
			if _, _, _, err := t.list(b.ctx, "c1", accept.header, accept.query); err != nil {
				return err
			}
		}
		for i := 0; i < 5; i++ {
			for _, t := range targets {
				d, ct, size, err := t.list(b.ctx, "c1", accept.header, accept.query)
				if err != nil {
					return err
				}
				runs[t] = append(runs[t], d)
				answer[t] = fmt.Sprintf("%s, %d KB", ct, size/1024)
			}
		}
		var detail []string
		for _, t := range targets {
			lat[t] = median(runs[t])
			detail = append(detail, fmt.Sprintf("%s answered %s, runs %s", t.name, answer[t], millis(runs[t])))
		}
		if accept.target == "" {
			// Not a target: served from the watch cache without the
			// consistency round trip to etcd of a plain LIST.
			msg := fmt.Sprintf("LIST %s (Accept: %s): %s median", accept.name, accept.header, ms(lat[ours]))
			if crd != nil {
				msg += fmt.Sprintf(", CRD %s median (%.2fx)", ms(lat[crd]), ratio(lat[ours], lat[crd]))
			}
			b.note("4", "%s; %s", msg, strings.Join(detail, "; "))
			continue
		}
		r := row{Item: "4", Measure: fmt.Sprintf("LIST 1,000, %s (median of 5)", accept.name), Value: ms(lat[ours]), Target: accept.target}
		if crd != nil {
			r.Ref = ms(lat[crd]) + " (CRD"
			if accept.name == "protobuf" {
				r.Ref += ", JSON: CRDs have no protobuf"
			}
			r.Ref += ")"
			q := ratio(lat[ours], lat[crd])
			r.Ratio = fmt.Sprintf("%.2fx", q)
			limit := 0.5
			if accept.name == "protobuf" {
				limit = 0.3
			}
			r.Met = yesNo(q <= limit)
		} else {
			r.Ref, r.Ratio = "skipped", "-"
		}
		b.add(r)
		b.note("4", "LIST %s (Accept: %s): %s", accept.name, accept.header, strings.Join(detail, "; "))
	}

	// Fill to 10,000 objects, then read the resident set.
	const total = 10000
	filled := 50 + len(levels)*n
	for _, t := range targets {
		b.logf("%s: filling to %d objects", t.name, total)
		if _, err := t.creates(b.ctx, "fill", 0, total-filled, 32); err != nil {
			return err
		}
	}
	rss := map[*target]float64{}
	for _, t := range targets {
		if rss[t], err = rssMB(t.srv.pid()); err != nil {
			return err
		}
	}
	r = row{Item: "4", Measure: "RSS at 10,000 objects", Value: fmt.Sprintf("%.0f MB", rss[ours]), Target: "≤150 MB", Met: yesNo(rss[ours] <= 150)}
	if crd != nil {
		r.Ref = fmt.Sprintf("%.0f MB (all of kube-apiserver)", rss[crd])
		r.Ratio = fmt.Sprintf("%.2fx", rss[ours]/rss[crd])
	} else {
		r.Ref, r.Ratio = "skipped", "-"
	}
	b.add(r)
	r = row{Item: "4", Measure: "RSS idle, before the load", Value: fmt.Sprintf("%.0f MB", idle[ours]), Ratio: "-"}
	if crd != nil {
		r.Ref = fmt.Sprintf("%.0f MB (all of kube-apiserver)", idle[crd])
		r.Ratio = fmt.Sprintf("%.2fx", idle[ours]/idle[crd])
	} else {
		r.Ref = "skipped"
	}
	b.add(r)

	// Where the generated apiserver spends its time under create and list load.
	if b.profile {
		const d = 10 * time.Second
		bin := filepath.Join(p.dir, "bin", "apiserver")
		b.logf("profiling the generated apiserver under create load (C=32)")
		top, err := b.profileCPU(ours, "create", bin, d, func() error {
			ctx, cancel := context.WithTimeout(b.ctx, d)
			defer cancel()
			_, err := ours.creates(ctx, "prof", 0, 1000000, 32)
			if ctx.Err() != nil {
				return nil // the profile's time is up
			}
			return err
		})
		if err != nil {
			b.note("4", "CPU profile failed: %v", err)
		} else {
			b.note("4", "CPU profile of the generated apiserver during 10 s of creates (C=32): cumulative share of samples per area (`go tool pprof -top -cum`):\n```\n%s\n```", top)
		}
		b.logf("profiling the generated apiserver under protobuf LISTs of 1,000 objects")
		lists := 0
		top, err = b.profileCPU(ours, "list", bin, d, func() error {
			for end := time.Now().Add(d); time.Now().Before(end); lists++ {
				if _, _, _, err := ours.list(b.ctx, "c1", protobuf, ""); err != nil {
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
	return nil
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func millis(ds []time.Duration) string {
	var parts []string
	for _, d := range ds {
		parts = append(parts, fmt.Sprintf("%.1f", float64(d.Microseconds())/1000))
	}
	return strings.Join(parts, ", ") + " ms"
}
