//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregatorclient "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	crlog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// The adopted group and its resources, and where the test's objects live.
const (
	adoptGroup = "stable.example.com"
	adoptNS    = "e2e-adopt"
)

var (
	crontabsGVR  = schema.GroupVersionResource{Group: adoptGroup, Version: "v1", Resource: "crontabs"}
	calendarsGVR = schema.GroupVersionResource{Group: adoptGroup, Version: "v1", Resource: "calendars"}
	configMapGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// adoptEnv is the control plane of TestAdopt: kube-apiserver and
// kube-controller-manager on their etcd, the project's apiserver in
// delegated mode on an etcd of its own (as build config deploys it), the
// --config folder with the project's APIServices, and clients.
type adoptEnv struct {
	c          *kubeCluster
	admin, dev string       // kubeconfigs of the cluster's users
	config     string       // adopt --config: apiservice.yaml as build config writes it
	cfg        *rest.Config // admin, through kube-apiserver
	dyn        dynamic.Interface
	kube       kubernetes.Interface
	crds       apiextensionsclient.Interface
	aggregator aggregatorclient.Interface
	direct     *rest.Config // admin, straight to the project's apiserver
	directHTTP *http.Client
	directURL  string
}

// TestAdopt moves live CRDs (crontabs and calendars of stable.example.com,
// made by controller-gen from the project's types) into the project's
// apiserver with `apiserver-boot adopt` (issue 34): refusals of --dry-run,
// clients running through the move, every object's identity kept, garbage
// collection after the move, a raw watch from the CRD's era, explain, a
// second run, --rollback and adopting again.
func TestAdopt(t *testing.T) {
	e := startAdoptEnv(t)
	e.applyCRDs(t)
	fx := e.createFixtures(t)
	e.refusals(t, fx)

	// Clients that run through the move.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	crdList, err := e.dyn.Resource(crontabsGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	crdEraRV := crdList.GetResourceVersion()
	inf := startClientGoInformer(t, ctx, e.cfg)
	crc := startControllerRuntimeCache(t, ctx, e.cfg)
	w := startWriter(t, e.cfg)
	before := e.snapshot(t, fx)
	written := w.count()

	out, code := e.adopt(t, e.admin)
	if code != 0 {
		w.halt()
		t.Fatalf("adopt: exit %d\n%s", code, out)
	}
	e.checkAdoptOutput(t, out, len(fx.crontabs)+written+1, len(fx.calendars))
	// A few more writes land in the project's apiserver, then the writer stops.
	time.Sleep(3 * time.Second)
	w.halt()
	t.Logf("writer: %d creates and %d updates acknowledged; %d writes refused and retried (pause messages: %q)",
		len(w.created), w.counter, w.refusedCount, w.pauseMessages())

	t.Run("every object kept with its identity", func(t *testing.T) { e.checkIdentity(t, fx, before) })
	t.Run("the writer lost nothing", func(t *testing.T) { w.check(t, e.dyn) })
	t.Run("informer and controller-runtime cache relisted and hold what exists", func(t *testing.T) {
		e.checkClients(t, inf, crc)
	})
	cancel()
	t.Run("the switch: APIServices, CRD versions, pause removed", func(t *testing.T) { e.checkSwitched(t) })
	t.Run("a watch and a list from the CRD's era get 410", func(t *testing.T) { e.checkCRDEraRV(t, crdEraRV) })
	t.Run("a watch from a copy's own resourceVersion sees its next change", func(t *testing.T) { e.checkCopyRV(t, fx.calendars[0]) })
	t.Run("kubectl explain shows the project's schema", func(t *testing.T) { e.checkExplain(t, false) })
	t.Run("a second adopt has nothing to do", func(t *testing.T) {
		if out, code := e.adopt(t, e.admin); code != 0 || !strings.Contains(out, "nothing to do: ") {
			t.Errorf("second adopt: exit %d, want 0 and %q:\n%s", code, "nothing to do: ", out)
		}
	})
	t.Run("garbage collection after the move", func(t *testing.T) { e.checkGarbageCollection(t, fx) })
	t.Run("the pending deletion completes when its finalizer is removed", func(t *testing.T) { e.checkPendingDeletion(t, fx) })
	t.Run("rollback, then adopt again", func(t *testing.T) { e.checkRollback(t, fx) })
}

// startAdoptEnv starts the control plane: the cluster, the project's
// apiserver with its own etcd and RBAC as aggregate() sets it up, the
// Service, and the --config folder.
func startAdoptEnv(t *testing.T) *adoptEnv {
	t.Helper()
	// --v=2: the garbage collector logs its monitors' resyncs (gcWatches).
	c := startKubeClusterWith(t, clusterOptions{controllerArgs: []string{"--v=2"}})
	e := &adoptEnv{c: c, admin: c.kubeconfig(t, "admin", adminToken), dev: c.kubeconfig(t, "dev", devToken)}
	// A cluster that has run for a while: its etcd's revision, which the
	// CRD's resourceVersions are, is in the thousands.
	bumpRevision(t, c.etcdURL, 3000)
	applyAs(t, e.admin, aggregationRBAC+"---\n"+apiserverClusterRole(t)+"\n")
	apiserverKubeconfig := c.kubeconfig(t, "apiserver",
		kubectlAs(t, e.admin, "create", "token", "apiserver", "-n", aggNamespace, "--duration", "2h"))

	// Its own etcd, as build config deploys it: revisions far below kube-apiserver's.
	etcd := startEtcd(t)
	c.procs["apiserver-etcd"] = etcd.Process
	svcHost := aggService + "." + aggNamespace + ".svc"
	servingCert, servingKey := signCert(t, c.dir, "crontab-apiserver", c.ca, c.caKey, svcHost, svcHost)
	port := harness.FreePort(t)
	c.procs["apiserver"] = harness.Start(t, t.TempDir(), filepath.Join(proj, "bin", "apiserver"),
		"--secure-port", fmt.Sprint(port), "--bind-address", "127.0.0.1",
		"--tls-cert-file", servingCert, "--tls-private-key-file", servingKey,
		"--etcd-servers", etcd.url,
		"--authentication-kubeconfig", apiserverKubeconfig,
		"--authorization-kubeconfig", apiserverKubeconfig,
		"--kubeconfig", apiserverKubeconfig)
	e.directURL = fmt.Sprintf("https://127.0.0.1:%d", port)
	e.directHTTP = c.tlsClient(svcHost, nil)
	if !harness.WaitUntil(2*time.Minute, func() bool {
		select {
		case <-c.procs["apiserver"].Done():
			t.Fatalf("apiserver exited: %v", c.procs["apiserver"].Err())
		default:
		}
		code, _ := get(e.directHTTP, e.directURL+"/readyz", nil)
		return code == http.StatusOK
	}) {
		code, body := get(e.directHTTP, e.directURL+"/readyz?verbose", nil)
		t.Fatalf("apiserver not ready: %d %s", code, body)
	}
	applyAs(t, e.admin, fmt.Sprintf(aggregationService, port))
	e.config = e.writeConfig(t, port, etcd.url)

	var err error
	if e.cfg, err = clientcmd.BuildConfigFromFlags("", e.admin); err != nil {
		t.Fatal(err)
	}
	e.dyn = dynamic.NewForConfigOrDie(e.cfg)
	e.kube = kubernetes.NewForConfigOrDie(e.cfg)
	e.crds = apiextensionsclient.NewForConfigOrDie(e.cfg)
	e.aggregator = aggregatorclient.NewForConfigOrDie(e.cfg)
	e.direct = &rest.Config{Host: e.directURL, BearerToken: adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAFile: c.caFile, ServerName: svcHost}}
	kubectlAs(t, e.admin, "create", "namespace", adoptNS)
	return e
}

// bumpRevision writes a key of its own n times to the etcd at url.
func bumpRevision(t *testing.T, url string, n int) {
	t.Helper()
	cli := etcdClient(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range n {
		if _, err := cli.Put(ctx, "/e2e-adopt/revision", fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// writeConfig runs `build config` into a temporary folder and keeps its
// apiservice.yaml, pointed at the test's Service (its port: ExternalName
// localhost) with the test's CA, and returns the folder. None of its
// APIServices is registered: once one of the project's groups is,
// kube-apiserver's aggregated OpenAPI v3 takes every group version the
// project's apiserver publishes, stable.example.com/v1 among them, and
// explain shows the project's schema while the CRD still serves it.
func (e *adoptEnv) writeConfig(t *testing.T, port int, etcdURL string) string {
	t.Helper()
	rendered := t.TempDir()
	if out, err := harness.Sh(proj, cli, "build", "config", "--name", aggService, "--namespace", aggNamespace,
		"--image", "registry.example.com/crontab:e2e", "--etcd-servers", etcdURL, "--output", rendered); err != nil {
		t.Fatalf("build config: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(rendered, deploy.APIServiceFile))
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Decode(b)
	if err != nil {
		t.Fatalf("%s: %v", deploy.APIServiceFile, err)
	}
	ca, err := os.ReadFile(e.c.caFile)
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, obj := range objs {
		s, ok := obj.(*apiregistrationv1.APIService)
		if !ok || s.Spec.Service == nil {
			t.Fatalf("%s holds %T, want APIServices with a Service", deploy.APIServiceFile, obj)
		}
		s.TypeMeta = metav1.TypeMeta{APIVersion: "apiregistration.k8s.io/v1", Kind: "APIService"}
		p := int32(port)
		s.Spec.Service.Port, s.Spec.CABundle = &p, ca
		y, err := yaml.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, string(y))
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, deploy.APIServiceFile), []byte("---\n"+strings.Join(docs, "---\n")))
	t.Logf("--config %s: %d APIServices", dir, len(docs))
	return dir
}

// applyCRDs generates the CRDs of CronTab and Calendar with controller-gen
// from a copy of the project's v1 types (with the markers controller-gen
// needs and "CRD era" in the kinds' descriptions), applies them and checks
// that explain shows them through kube-apiserver.
func (e *adoptEnv) applyCRDs(t *testing.T) {
	t.Helper()
	mod := t.TempDir()
	src := filepath.Join(proj, "pkg", "apis", "stable", "v1")
	if err := os.MkdirAll(filepath.Join(mod, "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"doc.go", "crontab_types.go", "calendar_types.go"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for old, new := range map[string]string{
			"// CronTab is the Schema for the crontabs API.\n": "// CronTab is the Schema for the crontabs API (CRD era).\n//\n" +
				"// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n",
			"// CronTabList is a list of CronTab objects.\n": "// CronTabList is a list of CronTab objects.\n//\n// +kubebuilder:object:root=true\n",
			"// Calendar is the Schema for the calendars API.\n": "// Calendar is the Schema for the calendars API (CRD era).\n//\n" +
				"// +kubebuilder:object:root=true\n// +kubebuilder:subresource:status\n// +kubebuilder:resource:scope=Cluster\n",
			"// CalendarList is a list of Calendar objects.\n": "// CalendarList is a list of Calendar objects.\n//\n// +kubebuilder:object:root=true\n",
		} {
			s = strings.Replace(s, old, new, 1)
		}
		writeFile(t, filepath.Join(mod, "v1", f), []byte(s))
	}
	goSum, err := os.ReadFile(filepath.Join(proj, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "go.sum"), goSum)
	writeFile(t, filepath.Join(mod, "go.mod"), []byte("module example.com/crdtypes\n\ngo 1.26\n\nrequire k8s.io/apimachinery v0.37.2\n"))
	crdDir := t.TempDir()
	if err := timed("adopt: controller-gen", func() error {
		if out, err := harness.Sh(mod, "go", "mod", "tidy"); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		out, err := harness.Sh(mod, "go", "run", "sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0",
			"crd", "paths=./v1", "output:crd:dir="+crdDir)
		if err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	}); err != nil {
		t.Fatalf("controller-gen: %v", err)
	}
	for _, name := range []string{"crontabs", "calendars"} {
		path := filepath.Join(crdDir, adoptGroup+"_"+name+".yaml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("controller-gen wrote no CRD for %s: %v", name, err)
		}
		if !strings.Contains(string(b), "subresources:\n      status: {}") {
			t.Fatalf("the CRD of %s has no status subresource:\n%s", name, b)
		}
		kubectlAs(t, e.admin, "apply", "--server-side", "-f", path)
		kubectlAs(t, e.admin, "wait", "--for", "condition=Established", "--timeout", "2m", "crd/"+name+"."+adoptGroup)
	}
	// Sanity: the CRD's schema is the one explain shows now.
	e.checkExplain(t, true)
}

// checkExplain waits until `kubectl explain crontab --api-version
// stable.example.com/v1` through kube-apiserver shows the CRD's schema
// (crdEra) or the project's, and checks the preferred version (the
// project's v2 after the move) shows v2's renamed field.
func (e *adoptEnv) checkExplain(t *testing.T, crdEra bool) {
	t.Helper()
	var r result
	if !harness.WaitUntil(2*time.Minute, func() bool {
		r = kubectlWith(e.admin, "", "explain", "crontab", "--api-version", adoptGroup+"/v1")
		return r.err == nil && strings.Contains(r.stdout, "CronTab is the Schema for the crontabs API") &&
			strings.Contains(r.stdout, "CRD era") == crdEra
	}) {
		t.Errorf("kubectl explain crontab --api-version %s/v1 (want the %s schema): %v\n%s%s", adoptGroup,
			map[bool]string{true: "CRD's", false: "project's"}[crdEra], r.err, r.stdout, r.stderr)
	}
	if crdEra {
		return
	}
	if r = kubectlWith(e.admin, "", "explain", "crontab.spec"); r.err != nil || !strings.Contains(r.stdout, "schedule") || !regexp.MustCompile(`VERSION:\s+v2`).MatchString(r.stdout) {
		t.Errorf("kubectl explain crontab.spec (the project's preferred v2, with spec.schedule): %v\n%s%s", r.err, r.stdout, r.stderr)
	}
}

// key names an object in the test's maps: resource/namespace/name.
type key struct{ resource, namespace, name string }

func (k key) String() string {
	if k.namespace == "" {
		return k.resource + " " + k.name
	}
	return k.resource + " " + k.namespace + "/" + k.name
}

func (k key) gvr() schema.GroupVersionResource {
	if k.resource == "calendars" {
		return calendarsGVR
	}
	return crontabsGVR
}

// adoptFixtures are the objects the test made before the move.
type adoptFixtures struct {
	crontabs, calendars []key
	dependents          map[key]string // ConfigMap name (in adoptNS) owned by each object
	pending             key            // deleted while it has a finalizer
	owner               key            // deleted through the project after the move
	refused             key            // replicas 7: the CRD takes it, the project's hooks refuse it
	updated, deleted    key            // changed after the switch, before the rollback
}

// createFixtures makes CronTabs and Calendars with labels, annotations,
// spec updates (generation 2), status through /status, finalizers, a
// pending deletion, and a ConfigMap owned by each.
func (e *adoptEnv) createFixtures(t *testing.T) *adoptFixtures {
	t.Helper()
	ctx := context.Background()
	fx := &adoptFixtures{dependents: map[key]string{}}
	for i := range 6 {
		k := key{"crontabs", adoptNS, fmt.Sprintf("crontab-%d", i)}
		var finalizers []any
		if i == 1 {
			finalizers = []any{"example.com/keep"}
		}
		e.create(t, k, map[string]any{"replicas": int64(i%5 + 1), "image": "nginx", "cronSpec": "*/5 * * * *", "tags": []any{"a", fmt.Sprint(i)}}, finalizers)
		fx.crontabs = append(fx.crontabs, k)
	}
	for i := range 3 {
		k := key{"calendars", "", fmt.Sprintf("e2e-adopt-calendar-%d", i)}
		var finalizers []any
		if i == 0 {
			finalizers = []any{"example.com/keep"}
		}
		e.create(t, k, map[string]any{"replicas": int64(i + 2)}, finalizers)
		fx.calendars = append(fx.calendars, k)
	}
	fx.pending = key{"crontabs", adoptNS, "pending"}
	e.create(t, fx.pending, map[string]any{"replicas": int64(2)}, []any{"example.com/hold"})
	fx.refused = key{"crontabs", adoptNS, "seven"}
	e.create(t, fx.refused, map[string]any{"replicas": int64(7)}, nil)
	fx.crontabs = append(fx.crontabs, fx.pending, fx.refused)
	fx.owner, fx.updated, fx.deleted = fx.crontabs[2], fx.crontabs[3], fx.crontabs[4]

	// Spec updates (generation 2) on some, status through /status on all.
	for i, k := range append(append([]key{}, fx.crontabs...), fx.calendars...) {
		if i%2 == 0 {
			e.patch(t, k, "", `{"spec":{"replicas":3}}`)
		}
		status := fmt.Sprintf(`{"status":{"replicas":%d,"observedGeneration":1,"conditions":[{"type":"Ready","status":"True","reason":"Tested","message":"set through /status","lastTransitionTime":"2026-01-02T03:04:05Z","observedGeneration":1}]}}`, i+1)
		e.patch(t, k, "status", status)
		// A ConfigMap owned by it (blockOwnerDeletion false).
		u := e.get(t, k)
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "dep-" + k.resource + "-" + k.name, "namespace": adoptNS,
				"ownerReferences": []any{map[string]any{"apiVersion": adoptGroup + "/v1", "kind": u.GetKind(), "name": k.name,
					"uid": string(u.GetUID()), "blockOwnerDeletion": false}}},
			"data": map[string]any{"owner": k.String()}}}
		if _, err := e.dyn.Resource(configMapGVR).Namespace(adoptNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("ConfigMap owned by %s: %v", k, err)
		}
		fx.dependents[k] = cm.GetName()
	}
	if err := e.dyn.Resource(crontabsGVR).Namespace(adoptNS).Delete(ctx, fx.pending.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if u := e.get(t, fx.pending); u.GetDeletionTimestamp() == nil {
		t.Fatalf("%s has no deletionTimestamp after its deletion", fx.pending)
	}
	return fx
}

func (e *adoptEnv) create(t *testing.T, k key, spec map[string]any, finalizers []any) {
	t.Helper()
	kind := map[string]string{"crontabs": "CronTab", "calendars": "Calendar"}[k.resource]
	meta := map[string]any{"name": k.name, "labels": map[string]any{"app": "e2e-adopt", "name": k.name},
		"annotations": map[string]any{"example.com/note": "made for " + k.String()}}
	if k.namespace != "" {
		meta["namespace"] = k.namespace
	}
	if finalizers != nil {
		meta["finalizers"] = finalizers
	}
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": adoptGroup + "/v1", "kind": kind, "metadata": meta, "spec": spec}}
	if _, err := e.resource(k).Create(context.Background(), u, metav1.CreateOptions{FieldManager: "e2e-adopt"}); err != nil {
		t.Fatalf("create %s: %v", k, err)
	}
}

func (e *adoptEnv) resource(k key) dynamic.ResourceInterface {
	if k.namespace == "" {
		return e.dyn.Resource(k.gvr())
	}
	return e.dyn.Resource(k.gvr()).Namespace(k.namespace)
}

func (e *adoptEnv) patch(t *testing.T, k key, subresource, patch string) {
	t.Helper()
	var sub []string
	if subresource != "" {
		sub = []string{subresource}
	}
	if _, err := e.resource(k).Patch(context.Background(), k.name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "e2e-adopt"}, sub...); err != nil {
		t.Fatalf("patch %s %s %s: %v", k, subresource, patch, err)
	}
}

func (e *adoptEnv) get(t *testing.T, k key) *unstructured.Unstructured {
	t.Helper()
	u, err := e.resource(k).Get(context.Background(), k.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get %s: %v", k, err)
	}
	return u
}

// snapshot reads every fixture through kube-apiserver.
func (e *adoptEnv) snapshot(t *testing.T, fx *adoptFixtures) map[key]*unstructured.Unstructured {
	t.Helper()
	out := map[key]*unstructured.Unstructured{}
	for _, k := range append(append([]key{}, fx.crontabs...), fx.calendars...) {
		out[k] = e.get(t, k)
	}
	return out
}

// adopt runs `apiserver-boot adopt` in the project as the user of
// kubeconfig with the test's --config and args, and returns its output and
// exit code.
func (e *adoptEnv) adopt(t *testing.T, kubeconfig string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	args = append([]string{"adopt", "--kubeconfig", kubeconfig, "--config", e.config}, args...)
	cmd := exec.CommandContext(ctx, cli, args...)
	cmd.Dir = proj
	start := time.Now()
	b, err := cmd.CombinedOutput()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("apiserver-boot %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	t.Logf("apiserver-boot %s (as %s): exit %d after %s\n%s", strings.Join(args[3:], " "), filepath.Base(kubeconfig), code,
		time.Since(start).Round(time.Millisecond), b)
	return string(b), code
}

// unchanged is what a dry run must leave as it was.
type unchanged struct {
	served      map[string]bool   // CRD version -> served
	apiServices map[string]string // name -> service and labels
	rvs         map[key]string
	adoption    bool // the temporary APIService exists
	policies    int  // the pause's policies and bindings
}

func (e *adoptEnv) state(t *testing.T, fx *adoptFixtures) unchanged {
	t.Helper()
	ctx := context.Background()
	s := unchanged{served: map[string]bool{}, apiServices: map[string]string{}, rvs: map[key]string{}}
	for _, name := range []string{"crontabs", "calendars"} {
		crd, err := e.crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name+"."+adoptGroup, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			s.served[name+"/"+v.Name] = v.Served
		}
	}
	list, err := e.aggregator.ApiregistrationV1().APIServices().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list.Items {
		if a.Spec.Group == adoptGroup {
			s.apiServices[a.Name] = fmt.Sprintf("service %v labels %v", a.Spec.Service, a.Labels)
		}
		s.adoption = s.adoption || a.Name == "v1alpha1.adoption.apiserver-boot.io"
	}
	for _, k := range append(append([]key{}, fx.crontabs...), fx.calendars...) {
		s.rvs[k] = e.get(t, k).GetResourceVersion()
	}
	vaps, err := e.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bindings, err := e.kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range vaps.Items {
		if strings.HasPrefix(p.Name, "apiserver-boot-adoption.") {
			s.policies++
		}
	}
	for _, b := range bindings.Items {
		if strings.HasPrefix(b.Name, "apiserver-boot-adoption.") {
			s.policies++
		}
	}
	return s
}

// projectObjects lists what the project's own store holds of a resource,
// asking the project's apiserver directly.
func (e *adoptEnv) projectObjects(t *testing.T, gvr schema.GroupVersionResource) []string {
	t.Helper()
	list, err := dynamic.NewForConfigOrDie(e.direct).Resource(gvr).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing %s on the project's apiserver: %v", gvr.Resource, err)
	}
	var names []string
	for _, u := range list.Items {
		names = append(names, u.GetNamespace()+"/"+u.GetName())
	}
	return names
}

// refusals runs --dry-run where the adoption must be refused (a CRD version
// the project does not serve, an object its hooks refuse, users without the
// permissions), then where it can go ahead; none changes anything.
func (e *adoptEnv) refusals(t *testing.T, fx *adoptFixtures) {
	t.Helper()
	ctx := context.Background()
	initial := e.state(t, fx)
	refused := func(t *testing.T, kubeconfig string, wants ...string) {
		t.Helper()
		out, code := e.adopt(t, kubeconfig, "--dry-run")
		if code != 1 {
			t.Errorf("adopt --dry-run: exit %d, want 1", code)
		}
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("adopt --dry-run: no %q in its output", want)
			}
		}
		if now := e.state(t, fx); !cmp.Equal(now, initial, cmp.AllowUnexported(unchanged{}, key{})) {
			t.Errorf("adopt --dry-run changed the cluster (-before +after):\n%s", cmp.Diff(initial, now, cmp.AllowUnexported(unchanged{}, key{})))
		}
	}

	t.Run("refused: a CRD version the project does not serve", func(t *testing.T) {
		applyAs(t, e.admin, unservedVersionCRD)
		kubectlAs(t, e.admin, "wait", "--for", "condition=Established", "--timeout", "2m", "crd/backups.ops.example.com")
		refused(t, e.admin, "backups.ops.example.com: the CRD serves v1beta1, which the project's apiserver does not serve",
			"dry run: the adoption would be refused")
		kubectlAs(t, e.admin, "delete", "crd", "backups.ops.example.com", "--wait=true")
	})
	t.Run("refused: an object the project's hooks refuse", func(t *testing.T) {
		refused(t, e.admin, fmt.Sprintf("crontabs.%s %s/%s: spec.replicas: ", adoptGroup, adoptNS, fx.refused.name), "must not be 7",
			"dry run: the adoption would be refused")
	})
	t.Run("refused: a user without rights", func(t *testing.T) {
		refused(t, e.dev, "missing permission: ")
	})
	t.Run("refused: a user with every right in kube-apiserver but not adopt", func(t *testing.T) {
		applyAs(t, e.admin, kubeRightsForDev)
		defer kubectlAs(t, e.admin, "delete", "clusterrolebinding,clusterrole", "e2e-adopt-kube-rights")
		refused(t, e.dev, `missing permission: verb "adopt" on "`, `in API group "stable.example.com" (the project's apiserver)`)
		// The project's apiserver itself refuses dev its adoption endpoint,
		// and lets the admin (system:masters) in.
		path := "/apis/adoption.apiserver-boot.io/v1alpha1/crontabs." + adoptGroup
		for _, tc := range []struct {
			token string
			code  int
			body  string
		}{
			{devToken, http.StatusForbidden, `User \"dev\"`},
			{nobodyToken, http.StatusForbidden, `User \"nobody\"`},
			{adminToken, http.StatusOK, `"kind":"State"`},
		} {
			code, body := get(e.directHTTP, e.directURL+path, map[string]string{"Authorization": "Bearer " + tc.token, "Accept": "application/json"})
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(body)) == nil {
				body = compact.String()
			}
			if code == http.StatusForbidden {
				tc.body += ` cannot list resource \"crontabs.stable.example.com\" in API group \"adoption.apiserver-boot.io\" at the cluster scope: adoption needs verb \"adopt\" on \"crontabs\" in API group \"stable.example.com\"`
			}
			if code != tc.code || !strings.Contains(body, tc.body) {
				t.Errorf("GET %s on the project's apiserver with %s: %d %s, want %d with %s", path, tc.token, code, body, tc.code, tc.body)
			}
		}
	})
	t.Run("an ordinary create cannot set uid or creationTimestamp", func(t *testing.T) {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": adoptGroup + "/v1", "kind": "CronTab",
			"metadata": map[string]any{"name": "forged", "namespace": adoptNS, "uid": "11111111-2222-3333-4444-555555555555",
				"creationTimestamp": "2001-01-01T00:00:00Z"}, "spec": map[string]any{"replicas": int64(1)}}}
		got, err := dynamic.NewForConfigOrDie(e.direct).Resource(crontabsGVR).Namespace(adoptNS).Create(ctx, u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetUID() == u.GetUID() || got.GetCreationTimestamp().Year() == 2001 {
			t.Errorf("a create on the project's apiserver kept the uid %s and creationTimestamp %s it was given", got.GetUID(), got.GetCreationTimestamp())
		}
	})

	// Fixed, the dry run can go ahead and still changes nothing.
	e.patch(t, fx.refused, "", `{"spec":{"replicas":3}}`)
	initial = e.state(t, fx)
	t.Run("dry run after the fix", func(t *testing.T) {
		out, code := e.adopt(t, e.admin, "--dry-run")
		if code != 0 || !strings.Contains(out, "dry run: the adoption can go ahead") {
			t.Errorf("adopt --dry-run: exit %d, want 0 and %q", code, "dry run: the adoption can go ahead")
		}
		checkPlan(t, out, len(fx.crontabs), len(fx.calendars))
		if now := e.state(t, fx); !cmp.Equal(now, initial, cmp.AllowUnexported(unchanged{}, key{})) {
			t.Errorf("adopt --dry-run changed the cluster (-before +after):\n%s", cmp.Diff(initial, now, cmp.AllowUnexported(unchanged{}, key{})))
		}
		for _, gvr := range []schema.GroupVersionResource{crontabsGVR, calendarsGVR} {
			if names := e.projectObjects(t, gvr); len(names) > 0 {
				t.Errorf("after a dry run the project's store holds %s: %v", gvr.Resource, names)
			}
		}
	})
	if t.Failed() {
		t.FailNow()
	}
}

// unservedVersionCRD serves backups.ops.example.com (a project kind, served
// by the project in v1) in a version the project does not serve.
const unservedVersionCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backups.ops.example.com}
spec:
  group: ops.example.com
  names: {kind: Backup, plural: backups, singular: backup, listKind: BackupList}
  scope: Namespaced
  versions:
  - {name: v1beta1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`

// kubeRightsForDev gives dev every verb kube-apiserver knows on every
// resource, but not the custom verb adopt.
const kubeRightsForDev = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: e2e-adopt-kube-rights}
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: [get, list, watch, create, update, patch, delete, deletecollection]
- nonResourceURLs: ["*"]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: e2e-adopt-kube-rights}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-adopt-kube-rights}
subjects: [{kind: User, name: dev}]
`

// checkPlan checks the plan's line of each resource: the versions, and
// the number of objects (of crontabs, at least that many).
func checkPlan(t *testing.T, out string, crontabs, calendars int) {
	t.Helper()
	for resource, n := range map[string]int{"crontabs": crontabs, "calendars": calendars} {
		re := regexp.MustCompile(regexp.QuoteMeta(resource+"."+adoptGroup) + `: CRD serves v1 \(stores v1\); the project serves ([v0-9a-z,]+) \(stores (v[0-9a-z]+)\); (\d+) objects`)
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("no plan line for %s.%s (%s)", resource, adoptGroup, re)
			continue
		}
		if !strings.Contains(","+m[1]+",", ",v1,") {
			t.Errorf("plan of %s: the project serves %s, which lacks v1", resource, m[1])
		}
		// The writer may add crontabs: at least n of them.
		var got int
		fmt.Sscan(m[3], &got)
		if got < n || resource == "calendars" && got != n {
			t.Errorf("plan of %s: %d objects, want %d", resource, got, n)
		}
	}
}

// checkAdoptOutput checks the plan and the last line of a successful adopt.
func (e *adoptEnv) checkAdoptOutput(t *testing.T, out string, crontabsAtLeast, calendars int) {
	t.Helper()
	checkPlan(t, out, crontabsAtLeast, calendars)
	m := regexp.MustCompile(`adopted (.+): (\d+) objects; writes paused for (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Errorf("adopt printed no %q line", "adopted ...: N objects; writes paused for D")
		return
	}
	for _, r := range []string{"crontabs." + adoptGroup, "calendars." + adoptGroup} {
		if !strings.Contains(m[1], r) {
			t.Errorf("adopted %s: %s missing", m[1], r)
		}
	}
	var n int
	fmt.Sscan(m[2], &n)
	if n < crontabsAtLeast+calendars {
		t.Errorf("adopted %d objects, want at least %d", n, crontabsAtLeast+calendars)
	}
	pause, err := time.ParseDuration(strings.TrimSuffix(m[3], "."))
	if err != nil {
		t.Errorf("writes paused for %q: %v", m[3], err)
	}
	t.Logf("adopted %d objects; writes paused for %s", n, pause)
}

// identityFields are what adopt keeps of each object.
var identityFields = [][]string{
	{"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"metadata", "generation"}, {"metadata", "labels"},
	{"metadata", "annotations"}, {"metadata", "finalizers"}, {"metadata", "ownerReferences"}, {"metadata", "managedFields"},
	{"metadata", "deletionTimestamp"}, {"metadata", "deletionGracePeriodSeconds"}, {"spec"}, {"status"},
}

// checkIdentity reads every fixture through kube-apiserver, now served by
// the project, and compares it with what was read before the move; every
// dependent ConfigMap is still there.
func (e *adoptEnv) checkIdentity(t *testing.T, fx *adoptFixtures, before map[key]*unstructured.Unstructured) {
	for k, old := range before {
		now := e.get(t, k)
		for _, f := range identityFields {
			a, _, _ := unstructured.NestedFieldNoCopy(old.Object, f...)
			b, _, _ := unstructured.NestedFieldNoCopy(now.Object, f...)
			if !cmp.Equal(a, b) {
				t.Errorf("%s %s changed in the move (-CRD +project):\n%s", k, strings.Join(f, "."), cmp.Diff(a, b))
			}
		}
		if now.GetResourceVersion() == old.GetResourceVersion() {
			t.Errorf("%s has the CRD's resourceVersion %s: not read from the project's store?", k, old.GetResourceVersion())
		}
	}
	for gvr, want := range map[schema.GroupVersionResource]int{crontabsGVR: -1, calendarsGVR: len(fx.calendars)} {
		list, err := e.dyn.Resource(gvr).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		direct := e.projectObjects(t, gvr)
		if len(direct) != len(list.Items) || want >= 0 && len(list.Items) != want {
			t.Errorf("%s: kube-apiserver lists %d, the project's apiserver %d, want %d (-1: any, equal)", gvr.Resource, len(list.Items), len(direct), want)
		}
	}
	e.checkDependents(t, fx, nil)
}

// checkDependents checks that every dependent ConfigMap is there, with its
// owner's uid, except those of gone.
func (e *adoptEnv) checkDependents(t *testing.T, fx *adoptFixtures, gone map[key]bool) {
	t.Helper()
	for owner, name := range fx.dependents {
		_, err := e.dyn.Resource(configMapGVR).Namespace(adoptNS).Get(context.Background(), name, metav1.GetOptions{})
		switch {
		case gone[owner]:
		case apierrors.IsNotFound(err):
			t.Errorf("the ConfigMap %s owned by %s was deleted", name, owner)
		case err != nil:
			t.Error(err)
		}
	}
}

// checkSwitched checks what the switch left: the CRD versions unserved,
// each APIService of the group pointing at the project's Service without
// the automanaged label, the pause and the temporary APIService removed.
func (e *adoptEnv) checkSwitched(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"crontabs", "calendars"} {
		crd, err := e.crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name+"."+adoptGroup, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				t.Errorf("CRD %s still serves %s", crd.Name, v.Name)
			}
		}
	}
	for _, v := range []string{"v1", "v2"} {
		a, err := e.aggregator.ApiregistrationV1().APIServices().Get(ctx, v+"."+adoptGroup, metav1.GetOptions{})
		if err != nil {
			t.Errorf("APIService %s.%s: %v", v, adoptGroup, err)
			continue
		}
		if a.Spec.Service == nil || a.Spec.Service.Name != aggService || a.Labels["kube-aggregator.kubernetes.io/automanaged"] != "" {
			t.Errorf("APIService %s: service %v labels %v, want the project's Service and no automanaged label", a.Name, a.Spec.Service, a.Labels)
		}
	}
	s := e.state(t, &adoptFixtures{})
	if s.adoption || s.policies > 0 {
		t.Errorf("after adopt: temporary APIService there: %v; %d policies and bindings of the pause left", s.adoption, s.policies)
	}
}

// checkCRDEraRV resumes a watch and a list at the resourceVersion of a list
// made on the CRD: the project answers 410 Gone, never a silent watch.
func (e *adoptEnv) checkCRDEraRV(t *testing.T, rv string) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	gone := func(err error) bool { return apierrors.IsResourceExpired(err) || apierrors.IsGone(err) }
	_, err := e.dyn.Resource(crontabsGVR).Namespace(adoptNS).List(ctx, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	if !gone(err) {
		t.Errorf("list at the CRD's resourceVersion %s: %v, want 410 Gone", rv, err)
	} else {
		t.Logf("list at the CRD's resourceVersion %s: %v", rv, err)
	}
	w, err := e.dyn.Resource(crontabsGVR).Namespace(adoptNS).Watch(ctx, metav1.ListOptions{ResourceVersion: rv})
	if err != nil {
		if !gone(err) {
			t.Errorf("watch at the CRD's resourceVersion %s: %v, want 410 Gone", rv, err)
		}
		t.Logf("watch at the CRD's resourceVersion %s: %v", rv, err)
		return
	}
	defer w.Stop()
	select {
	case ev, ok := <-w.ResultChan():
		status, isStatus := ev.Object.(*metav1.Status)
		if !ok || ev.Type != watch.Error || !isStatus || status.Code != http.StatusGone {
			t.Errorf("watch at the CRD's resourceVersion %s: first event %s %#v, want an ERROR with 410", rv, ev.Type, ev.Object)
		} else {
			t.Logf("watch at the CRD's resourceVersion %s: ERROR %d %s", rv, status.Code, status.Message)
		}
	case <-ctx.Done():
		t.Errorf("watch at the CRD's resourceVersion %s: silent for 20 s, want 410 Gone", rv)
	}
}

// checkCopyRV watches k, an object nothing changed since the move, from the
// resourceVersion its copy got in the project's store: the project's floor
// is below every copy, so the watch is accepted and sees the object's next
// change (a label patched here).
func (e *adoptEnv) checkCopyRV(t *testing.T, k key) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	obj := e.get(t, k)
	w, err := e.resource(k).Watch(ctx, metav1.ListOptions{ResourceVersion: obj.GetResourceVersion(), FieldSelector: "metadata.name=" + k.name})
	if err != nil {
		t.Fatalf("watch %s from its copy's resourceVersion %s: %v", k, obj.GetResourceVersion(), err)
	}
	defer w.Stop()
	e.patch(t, k, "", `{"metadata":{"labels":{"watched-from-copy":"yes"}}}`)
	select {
	case ev := <-w.ResultChan():
		if u, ok := ev.Object.(*unstructured.Unstructured); ev.Type != watch.Modified || !ok || u.GetLabels()["watched-from-copy"] != "yes" {
			t.Errorf("watch %s from its copy's resourceVersion %s: first event %s %#v, want MODIFIED with the label", k, obj.GetResourceVersion(), ev.Type, ev.Object)
		}
	case <-ctx.Done():
		t.Errorf("watch %s from its copy's resourceVersion %s: no event within 20 s of a patch", k, obj.GetResourceVersion())
	}
}

// gcWatches tells whether kube-controller-manager's garbage collector
// has synced its monitors with discovery naming resource added.
func (e *adoptEnv) gcWatches(resource string) bool {
	for _, line := range strings.Split(e.c.procs["kube-controller-manager"].Out.String(), "\n") {
		added, _, _ := strings.Cut(line, "removed:")
		if strings.Contains(line, "syncing garbage collector with updated resources from discovery") && strings.Contains(added, resource) {
			return true
		}
	}
	return false
}

// checkGarbageCollection waits until the garbage collector watches crontabs
// through the project (its preferred version is the project's v2) and a
// margin; no dependent was deleted; deleting an owner deletes its dependent.
func (e *adoptEnv) checkGarbageCollection(t *testing.T, fx *adoptFixtures) {
	start := time.Now()
	if !harness.WaitUntil(5*time.Minute, func() bool { return e.gcWatches(adoptGroup + "/v2, Resource=crontabs") }) {
		t.Fatalf("kube-controller-manager's garbage collector does not watch %s/v2 crontabs after %s", adoptGroup, time.Since(start).Round(time.Second))
	}
	t.Logf("the garbage collector watches crontabs through the project's v2 %s after the checks began; waiting 40 s more", time.Since(start).Round(time.Second))
	time.Sleep(40 * time.Second)
	e.checkDependents(t, fx, nil)

	if err := e.resource(fx.owner).Delete(context.Background(), fx.owner.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	dep := fx.dependents[fx.owner]
	if !harness.WaitUntil(2*time.Minute, func() bool {
		_, err := e.dyn.Resource(configMapGVR).Namespace(adoptNS).Get(context.Background(), dep, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}) {
		t.Errorf("the garbage collector did not delete %s after its owner %s was deleted through the project", dep, fx.owner)
	}
	e.checkDependents(t, fx, map[key]bool{fx.owner: true})
}

// checkPendingDeletion removes the finalizer of the object deleted before
// the move: the project deletes it, and the garbage collector its dependent.
func (e *adoptEnv) checkPendingDeletion(t *testing.T, fx *adoptFixtures) {
	e.patch(t, fx.pending, "", `{"metadata":{"finalizers":null}}`)
	if _, err := e.resource(fx.pending).Get(context.Background(), fx.pending.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%s after its last finalizer was removed: %v, want NotFound", fx.pending, err)
	}
	dep := fx.dependents[fx.pending]
	if !harness.WaitUntil(2*time.Minute, func() bool {
		_, err := e.dyn.Resource(configMapGVR).Namespace(adoptNS).Get(context.Background(), dep, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}) {
		t.Errorf("the garbage collector did not delete %s after its owner %s was deleted", dep, fx.pending)
	}
}

// checkRollback changes objects through the project (an update, a new
// object, a deletion), rolls back, finds the changes in the CRD and the
// new object's new uid printed, then adopts again.
func (e *adoptEnv) checkRollback(t *testing.T, fx *adoptFixtures) {
	ctx := context.Background()
	e.patch(t, fx.updated, "", `{"metadata":{"labels":{"changed":"after-the-switch"}},"spec":{"replicas":5}}`)
	added := key{"crontabs", adoptNS, "after-the-switch"}
	e.create(t, added, map[string]any{"replicas": int64(4)}, nil)
	oldUID := e.get(t, added).GetUID()
	if err := e.resource(fx.deleted).Delete(ctx, fx.deleted.name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	out, code := e.adopt(t, e.admin, "--rollback")
	if code != 0 || !regexp.MustCompile(`rolled back .*crontabs\.`+regexp.QuoteMeta(adoptGroup)+`.*; writes paused for \S+`).MatchString(out) {
		t.Fatalf("adopt --rollback: exit %d, want 0 and %q", code, "rolled back crontabs.stable.example.com, ...: ...; writes paused for D")
	}
	for _, name := range []string{"crontabs", "calendars"} {
		crd, err := e.crds.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, name+"."+adoptGroup, metav1.GetOptions{})
		if err != nil || !crd.Spec.Versions[0].Served {
			t.Errorf("after the rollback the CRD of %s does not serve v1: %v", name, err)
		}
	}
	if a, err := e.aggregator.ApiregistrationV1().APIServices().Get(ctx, "v1."+adoptGroup, metav1.GetOptions{}); err != nil || a.Spec.Service != nil {
		t.Errorf("after the rollback APIService v1.%s is not local: %v %v", adoptGroup, err, a)
	}
	u := e.get(t, fx.updated)
	if u.GetLabels()["changed"] != "after-the-switch" {
		t.Errorf("the update made through the project is not in the CRD: labels %v", u.GetLabels())
	}
	if r, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas"); r != 5 {
		t.Errorf("the update made through the project is not in the CRD: replicas %d, want 5", r)
	}
	if _, err := e.resource(fx.deleted).Get(ctx, fx.deleted.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%s, deleted through the project, after the rollback: %v, want NotFound", fx.deleted, err)
	}
	newUID := e.get(t, added).GetUID()
	line := fmt.Sprintf("new uid: crontabs.%s %s/%s (was %s, now %s)", adoptGroup, adoptNS, added.name, oldUID, newUID)
	if !strings.Contains(out, line) {
		t.Errorf("rollback did not print %q", line)
	}

	out, code = e.adopt(t, e.admin)
	if code != 0 || !strings.Contains(out, "adopted ") {
		t.Fatalf("adopt after the rollback: exit %d, want 0 and %q", code, "adopted ...")
	}
	if got := e.get(t, added).GetUID(); got != newUID {
		t.Errorf("%s after adopting again: uid %s, want the CRD's %s", added, got, newUID)
	}
	if _, err := e.resource(fx.deleted).Get(ctx, fx.deleted.name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("%s after adopting again: %v, want NotFound", fx.deleted, err)
	}
	if u := e.get(t, fx.updated); u.GetLabels()["changed"] != "after-the-switch" {
		t.Errorf("%s after adopting again: labels %v", fx.updated, u.GetLabels())
	}
}

// requestLog counts the requests a client makes for crontabs: lists
// (including watch-list streams) and watches, and the errors its watches
// ended with.
type requestLog struct {
	mu                      sync.Mutex
	lists, watches, gone410 int
	watchErrors             []string
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func (l *requestLog) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if strings.HasSuffix(req.URL.Path, "/crontabs") && req.Method == http.MethodGet {
			q := req.URL.Query()
			l.mu.Lock()
			if q.Get("watch") == "" || q.Get("watch") == "false" || q.Get("sendInitialEvents") == "true" {
				l.lists++
			} else {
				l.watches++
			}
			if resp != nil && resp.StatusCode == http.StatusGone {
				l.gone410++
			}
			l.mu.Unlock()
		}
		return resp, err
	})
}

func (l *requestLog) watchError(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
		l.gone410++
	}
	l.watchErrors = append(l.watchErrors, err.Error())
}

func (l *requestLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("%d lists, %d watches, %d answered 410 Gone; watch errors: %q", l.lists, l.watches, l.gone410, l.watchErrors)
}

// countingConfig is cfg whose requests for crontabs log counts.
func countingConfig(cfg *rest.Config, log *requestLog) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.Wrap(log.wrap)
	return c
}

// clientGoInformer is a dynamic informer on crontabs, through kube-apiserver.
type clientGoInformer struct {
	informer toolscache.SharedIndexInformer
	log      *requestLog
}

func startClientGoInformer(t *testing.T, ctx context.Context, cfg *rest.Config) *clientGoInformer {
	t.Helper()
	log := &requestLog{}
	factory := dynamicinformer.NewDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(countingConfig(cfg, log)), 0)
	inf := factory.ForResource(crontabsGVR).Informer()
	if err := inf.SetWatchErrorHandlerWithContext(func(ctx context.Context, r *toolscache.Reflector, err error) {
		log.watchError(err)
		toolscache.DefaultWatchErrorHandler(ctx, r, err)
	}); err != nil {
		t.Fatal(err)
	}
	factory.Start(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the client-go informer did not sync")
	}
	return &clientGoInformer{informer: inf, log: log}
}

// controllerRuntimeCache is a controller-runtime cache of crontabs, through kube-apiserver.
type controllerRuntimeCache struct {
	cache crcache.Cache
	log   *requestLog
}

func startControllerRuntimeCache(t *testing.T, ctx context.Context, cfg *rest.Config) *controllerRuntimeCache {
	t.Helper()
	crlog.SetLogger(klog.Background())
	log := &requestLog{}
	c, err := crcache.New(countingConfig(cfg, log), crcache.Options{
		DefaultWatchErrorHandler: func(ctx context.Context, r *toolscache.Reflector, err error) {
			log.watchError(err)
			toolscache.DefaultWatchErrorHandler(ctx, r, err)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(crontabsGVR.GroupVersion().WithKind("CronTab"))
	if _, err := c.GetInformer(ctx, u); err != nil {
		t.Fatal(err)
	}
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		t.Fatal("the controller-runtime cache did not sync")
	}
	return &controllerRuntimeCache{cache: c, log: log}
}

func (c *controllerRuntimeCache) objects(ctx context.Context) (map[string]string, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(crontabsGVR.GroupVersion().WithKind("CronTabList"))
	if err := c.cache.List(ctx, list); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, u := range list.Items {
		out[u.GetNamespace()+"/"+u.GetName()] = string(u.GetUID()) + "@" + u.GetResourceVersion()
	}
	return out, nil
}

func (i *clientGoInformer) objects() map[string]string {
	out := map[string]string{}
	for _, o := range i.informer.GetStore().List() {
		u := o.(*unstructured.Unstructured)
		out[u.GetNamespace()+"/"+u.GetName()] = string(u.GetUID()) + "@" + u.GetResourceVersion()
	}
	return out
}

// checkClients waits until the informer and the cache hold exactly the
// crontabs kube-apiserver lists (uid and resourceVersion), and checks that
// both relisted after a 410.
func (e *adoptEnv) checkClients(t *testing.T, inf *clientGoInformer, crc *controllerRuntimeCache) {
	ctx := context.Background()
	var want, got, gotCR map[string]string
	same := func() bool {
		list, err := e.dyn.Resource(crontabsGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		want = map[string]string{}
		for _, u := range list.Items {
			want[u.GetNamespace()+"/"+u.GetName()] = string(u.GetUID()) + "@" + u.GetResourceVersion()
		}
		got = inf.objects()
		gotCR, err = crc.objects(ctx)
		return err == nil && cmp.Equal(want, got) && cmp.Equal(want, gotCR)
	}
	start := time.Now()
	if !harness.WaitUntil(4*time.Minute, same) {
		t.Errorf("after 4 minutes the clients do not hold what exists:\ninformer (-want +got):\n%s\ncontroller-runtime cache (-want +got):\n%s",
			cmp.Diff(want, got), cmp.Diff(want, gotCR))
	} else {
		t.Logf("both clients hold the %d crontabs that exist %s after adopt ended", len(want), time.Since(start).Round(time.Millisecond))
	}
	t.Logf("client-go informer: %s", inf.log)
	t.Logf("controller-runtime cache: %s", crc.log)
	for name, log := range map[string]*requestLog{"client-go informer": inf.log, "controller-runtime cache": crc.log} {
		log.mu.Lock()
		if log.lists < 2 || log.gone410 == 0 {
			t.Errorf("%s did not relist after a 410: %d lists, %d answers 410", name, log.lists, log.gone410)
		}
		log.mu.Unlock()
	}
}

// writer creates CronTabs and updates one in a loop through kube-apiserver,
// retrying each write until it is acknowledged; beside it a reader gets and
// lists crontabs and calendars, which must never fail.
type writer struct {
	res          dynamic.ResourceInterface
	calendars    dynamic.ResourceInterface
	reads        int
	readErrors   []string
	stop, done   chan struct{}
	readerDone   chan struct{}
	mu           sync.Mutex
	created      []string
	counter      int // the last acknowledged value of the counter's annotation
	refusedCount int
	messages     map[string]bool
}

func startWriter(t *testing.T, cfg *rest.Config) *writer {
	t.Helper()
	// Without client-go's default limit of 5 requests a second.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 1000, 1000
	dyn := dynamic.NewForConfigOrDie(cfg)
	w := &writer{res: dyn.Resource(crontabsGVR).Namespace(adoptNS), calendars: dynamic.NewForConfigOrDie(cfg).Resource(calendarsGVR),
		stop: make(chan struct{}), done: make(chan struct{}), readerDone: make(chan struct{}), messages: map[string]bool{}}
	if _, err := w.res.Create(context.Background(), writerObject("writer-counter"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	go w.run()
	go w.runReader()
	return w
}

func writerObject(name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": adoptGroup + "/v1", "kind": "CronTab",
		"metadata": map[string]any{"name": name, "namespace": adoptNS, "labels": map[string]any{"app": "e2e-adopt-writer"}},
		"spec":     map[string]any{"replicas": int64(2)}}}
}

func (w *writer) run() {
	defer close(w.done)
	ctx := context.Background()
	for i := 1; ; i++ {
		name := fmt.Sprintf("writer-%d", i)
		if !w.retry(func() error {
			_, err := w.res.Create(ctx, writerObject(name), metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil // an earlier attempt was stored though its answer was lost
			}
			return err
		}) {
			return
		}
		w.mu.Lock()
		w.created = append(w.created, name)
		w.mu.Unlock()
		patch := fmt.Sprintf(`{"metadata":{"annotations":{"example.com/count":"%d"}}}`, i)
		if !w.retry(func() error {
			_, err := w.res.Patch(ctx, "writer-counter", types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		}) {
			return
		}
		w.mu.Lock()
		w.counter = i
		w.mu.Unlock()
		time.Sleep(50 * time.Millisecond)
	}
}

// runReader reads until the writer is halted.
func (w *writer) runReader() {
	defer close(w.readerDone)
	for {
		select {
		case <-w.stop:
			return
		case <-time.After(20 * time.Millisecond):
		}
		w.read(context.Background())
	}
}

// read gets the writer's counter and lists crontabs and calendars.
func (w *writer) read(ctx context.Context) {
	_, err := w.res.Get(ctx, "writer-counter", metav1.GetOptions{})
	errs := []error{err}
	_, err = w.res.List(ctx, metav1.ListOptions{Limit: 5})
	errs = append(errs, err)
	_, err = w.calendars.List(ctx, metav1.ListOptions{})
	errs = append(errs, err)
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, err := range errs {
		w.reads++
		if err != nil {
			w.readErrors = append(w.readErrors, err.Error())
		}
	}
}

// retry runs f until it succeeds (true) or the writer is halted (false).
func (w *writer) retry(f func() error) bool {
	for {
		select {
		case <-w.stop:
			return false
		default:
		}
		err := f()
		if err == nil {
			return true
		}
		w.mu.Lock()
		w.refusedCount++
		w.messages[err.Error()] = true
		w.mu.Unlock()
		time.Sleep(100 * time.Millisecond)
	}
}

func (w *writer) halt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
	<-w.readerDone
}

func (w *writer) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.created)
}

// pauseMessages are the distinct errors the writer retried after.
func (w *writer) pauseMessages() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for m := range w.messages {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// check finds every acknowledged write.
func (w *writer) check(t *testing.T, dyn dynamic.Interface) {
	ctx := context.Background()
	for _, name := range w.created {
		if _, err := w.res.Get(ctx, name, metav1.GetOptions{}); err != nil {
			t.Errorf("the acknowledged create of %s is lost: %v", name, err)
		}
	}
	u, err := w.res.Get(ctx, "writer-counter", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var n int
	fmt.Sscan(u.GetAnnotations()["example.com/count"], &n)
	if n < w.counter {
		t.Errorf("writer-counter holds count %d, but the update to %d was acknowledged", n, w.counter)
	}
	// Writes are refused by the pause; anything else (a 404 or 503 of a
	// half-switched API) is not expected.
	for _, m := range w.pauseMessages() {
		if !strings.Contains(m, "paused while apiserver-boot adopt moves them") {
			t.Errorf("a write failed with another error than the pause: %s", m)
		}
	}
	// Reads go on through the pause and the switch: each moment one side
	// serves the group.
	if len(w.readErrors) > 0 {
		t.Errorf("%d of %d reads failed during the move: %q", len(w.readErrors), w.reads, w.readErrors)
	}
	b, _ := json.Marshal(map[string]any{"creates": len(w.created), "updates": w.counter, "retried": w.refusedCount, "reads": w.reads})
	t.Logf("writer: %s", b)
}
