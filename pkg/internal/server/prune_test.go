package server

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// probe is a kind whose Go types hold fields (spec.experimental,
// status.debug) that its standard channel's CRD manifest leaves out.
type probeSpec struct {
	Mode         string `json:"mode,omitempty"`
	Experimental string `json:"experimental,omitempty"`
}
type probeStatus struct {
	Ready bool   `json:"ready,omitempty"`
	Debug string `json:"debug,omitempty"`
}
type probe struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              probeSpec   `json:"spec,omitempty"`
	Status            probeStatus `json:"status,omitempty"`
}
type probeList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []probe `json:"items"`
}

func (p *probe) DeepCopyObject() runtime.Object {
	c := *p
	p.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	return &c
}
func (l *probeList) DeepCopyObject() runtime.Object {
	c := *l
	l.ListMeta.DeepCopyInto(&c.ListMeta)
	c.Items = nil
	for i := range l.Items {
		c.Items = append(c.Items, *l.Items[i].DeepCopyObject().(*probe))
	}
	return &c
}
func (probe) OpenAPIModelName() string     { return "com.example.prune.v1.Probe" }
func (probeList) OpenAPIModelName() string { return "com.example.prune.v1.ProbeList" }

var probesGVR = schema.GroupVersionResource{Group: "prune.example.com", Version: "v1", Resource: "probes"}

// probeManifest is the schema of the standard channel's manifest: no
// spec.experimental nor status.debug, a default for spec.mode. probeMarkers is the one the Go
// types' markers give: every field they have.
const (
	probeManifest = `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{"mode":{"type":"string","default":"auto"}}},
  "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`
	probeMarkers = `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{"mode":{"type":"string","default":"auto"},"experimental":{"type":"string"}}},
  "status":{"type":"object","properties":{"ready":{"type":"boolean"},"debug":{"type":"string"}}}}}`
)

// probeGroup serves probe with its schema from its CRD manifest (manifest)
// or from its markers, defaulted on every decode as generated defaulters do.
func probeGroup(manifest bool) *builders.APIGroup {
	gv := probesGVR.GroupVersion()
	s := builders.Schema{Model: probe{}.OpenAPIModelName(), OpenAPIV3: probeMarkers}
	if manifest {
		s = builders.Schema{Model: probe{}.OpenAPIModelName(), OpenAPIV3: probeManifest, Manifest: "config/crd/bases/prune.example.com_probes.yaml"}
	}
	return &builders.APIGroup{
		Name: gv.Group, Versions: []string{"v1"}, StorageVersion: "v1",
		AddToScheme: func(s *runtime.Scheme) error {
			for _, v := range []schema.GroupVersion{gv, {Group: gv.Group, Version: runtime.APIVersionInternal}} {
				s.AddKnownTypeWithName(v.WithKind("Probe"), &probe{})
				s.AddKnownTypeWithName(v.WithKind("ProbeList"), &probeList{})
			}
			s.AddTypeDefaultingFunc(&probe{}, func(obj any) { builders.ApplySchemaDefaults(obj.(runtime.Object)) })
			metav1.AddToGroupVersion(s, gv)
			return nil
		},
		Resources: []*builders.Resource{builders.NewResource[*probe](builders.Resource{
			Kind: "Probe", Plural: "probes", Singular: "probe", Versions: []string{"v1"}, StorageVersion: "v1", StatusSubresource: true,
			Schemas: map[string]builders.Schema{"v1": s},
			New:     func() runtime.Object { return &probe{} },
			NewList: func() runtime.Object { return &probeList{} },
		}, probeHooks{})},
	}
}

// probeHooks sets spec.experimental on a probe named "hooked".
type probeHooks struct{}

func (probeHooks) PrepareForCreate(_ context.Context, p *probe) {
	if p.Name == "hooked" {
		p.Spec.Experimental = "hook"
	}
}

// probeDefinitions are widgetDefinitions' and probe's, as openapi-gen
// writes them from the Go types (spec.experimental included).
func probeDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := widgetDefinitions(ref)
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
	defs[probe{}.OpenAPIModelName()] = common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(metav1.ObjectMeta{}.OpenAPIModelName())}},
		"spec":     {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"mode": str, "experimental": str}}},
		"status":   {SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"ready": {SchemaProps: spec.SchemaProps{Type: []string{"boolean"}}}, "debug": str}}},
	}}}, Dependencies: []string{metav1.ObjectMeta{}.OpenAPIModelName()}}
	defs[probeList{}.OpenAPIModelName()] = common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(metav1.ListMeta{}.OpenAPIModelName())}},
		"items":    {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(probe{}.OpenAPIModelName())}}}}},
	}}}, Dependencies: []string{metav1.ListMeta{}.OpenAPIModelName(), probe{}.OpenAPIModelName()}}
	return defs
}

// startProbes runs a standalone server of probeGroup(manifest) with its data
// in dir.
func startProbes(t *testing.T, dir string, manifest bool) (cfg *rest.Config, stop func()) {
	t.Helper()
	o := standaloneOptions(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = Run(ctx, Project{Name: "probes", Groups: []*builders.APIGroup{probeGroup(manifest)}, OpenAPIDefinitions: probeDefinitions}, o)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("the server did not stop within a minute")
		}
	}
	defer func() {
		if cfg == nil {
			stop()
		}
	}()
	cfg = waitServing(t, o.WriteKubeconfig, done, func() error { return runErr })
	return cfg, stop
}

// storedProbes reads the probes a stopped server left in its etcd (in dir),
// by name, as stored.
func storedProbes(t *testing.T, dir string) map[string]string {
	t.Helper()
	ctx := context.Background()
	cli, stopEtcd := stoppedServersEtcd(t, dir)
	defer stopEtcd()
	resp, err := cli.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, kv := range resp.Kvs {
		if _, name, ok := strings.Cut(string(kv.Key), "/probes/"); ok {
			out[name] = string(kv.Value)
		}
	}
	return out
}

// stoppedServersEtcd starts the embedded etcd a stopped server left in dir
// and returns a client of it; stop stops both.
func stoppedServersEtcd(t *testing.T, dir string) (cli *clientv3.Client, stop func()) {
	t.Helper()
	etcd, stopEtcd, err := storage.Open(context.Background(), storage.Backend{Embedded: &storage.EmbeddedEtcd{DataDir: filepath.Join(dir, "etcd")}, EmbeddedCertDir: filepath.Join(dir, "etcd-certs")})
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := transport.TLSInfo{CertFile: etcd.CertFile, KeyFile: etcd.KeyFile, TrustedCAFile: etcd.CAFile}.ClientConfig()
	if err != nil {
		stopEtcd()
		t.Fatal(err)
	}
	cli, err = clientv3.New(clientv3.Config{Endpoints: etcd.Servers, TLS: tlsConfig, DialTimeout: 5 * time.Second})
	if err != nil {
		stopEtcd()
		t.Fatal(err)
	}
	return cli, func() { cli.Close(); stopEtcd() }
}

// warnings collects the warnings a server answers with.
type warnings struct {
	sync.Mutex
	got []string
}

func (w *warnings) HandleWarningHeader(code int, agent, text string) {
	w.Lock()
	defer w.Unlock()
	w.got = append(w.got, text)
}

func (w *warnings) take() []string {
	w.Lock()
	defer w.Unlock()
	got := w.got
	w.got = nil
	return got
}

func newProbe(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "prune.example.com/v1", "kind": "Probe", "metadata": map[string]any{"name": name}, "spec": spec}}
}

// TestManifestSchemaPrunes: a kind whose schema is its CRD manifest's does
// not store a field the manifest leaves out, though its Go type has it,
// and reports it as kube-apiserver reports a custom resource's unknown
// field (fieldValidation Strict: 400; Warn, the default: a warning; Ignore:
// nothing), on create, update and patches; an object stored with the field
// before (the kind's schema from its markers, which keep it) is read back
// and written again without it. The manifest's defaults are applied.
func TestManifestSchemaPrunes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts servers")
	}
	ctx := context.Background()
	dir := t.TempDir()
	unknown := `unknown field "spec.experimental"`

	// Before: the schema from the markers, which declare spec.experimental.
	cfg, stop := startProbes(t, dir, false)
	warned := &warnings{}
	cfg.WarningHandler = warned
	probes := dynamic.NewForConfigOrDie(cfg).Resource(probesGVR)
	got, err := probes.Create(ctx, newProbe("old", map[string]any{"experimental": "x"}), metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		t.Fatalf("markers kind: %v", err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "spec", "experimental"); v != "x" {
		t.Errorf("markers kind: created %v, want spec.experimental kept", got.Object["spec"])
	}
	if w := warned.take(); len(w) != 0 {
		t.Errorf("markers kind: warnings %q", w)
	}
	stop()
	if stored := storedProbes(t, dir)["old"]; !strings.Contains(stored, `"experimental":"x"`) {
		t.Fatalf("markers kind: stored %s, want spec.experimental", stored)
	}

	// After: the schema from the CRD manifest, which leaves it out.
	cfg, stop = startProbes(t, dir, true)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	cfg.WarningHandler = warned
	probes = dynamic.NewForConfigOrDie(cfg).Resource(probesGVR)

	old, err := probes.Get(ctx, "old", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(old.Object, "spec", "experimental"); found {
		t.Errorf("stored before with spec.experimental, read back: %v, want it pruned", old.Object["spec"])
	}
	list, err := probes.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %v", err, list)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(list.Items[0].Object, "spec", "experimental"); found {
		t.Errorf("stored before with spec.experimental, listed: %v, want it pruned", list.Items[0].Object["spec"])
	}
	// Written again (an update that changes nothing else): stored without it.
	if _, err := probes.Update(ctx, old, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := warned.take(); len(w) != 0 {
		t.Errorf("update of an object read back: warnings %q", w)
	}

	// Strict: refused, as kube-apiserver refuses a custom resource's
	// unknown field.
	_, err = probes.Create(ctx, newProbe("strict", map[string]any{"experimental": "x"}), metav1.CreateOptions{FieldValidation: "Strict"})
	// kube-apiserver's words for a custom resource (the same handler's).
	if want := `Probe in version "v1" cannot be handled as a Probe: strict decoding error: ` + unknown; !apierrors.IsBadRequest(err) || err.Error() != want {
		t.Errorf("create, Strict: %v, want 400 %q", err, want)
	}
	// Warn (the default): created without it, with a warning.
	for _, validation := range []string{"", "Warn", "Ignore"} {
		name := "fresh-" + strings.ToLower(validation)
		if validation == "" {
			name = "fresh-default"
		}
		got, err := probes.Create(ctx, newProbe(name, map[string]any{"experimental": "x"}), metav1.CreateOptions{FieldValidation: validation})
		if err != nil {
			t.Fatalf("create, fieldValidation %q: %v", validation, err)
		}
		want := []string{unknown}
		if validation == "Ignore" {
			want = nil
		}
		if w := warned.take(); strings.Join(w, "\n") != strings.Join(want, "\n") {
			t.Errorf("create, fieldValidation %q: warnings %q, want %q", validation, w, want)
		}
		if s, _ := json.Marshal(got.Object["spec"]); string(s) != `{"mode":"auto"}` {
			t.Errorf("create, fieldValidation %q: spec %s, want {\"mode\":\"auto\"} (pruned, defaulted)", validation, s)
		}
	}
	// A merge patch that sets it: refused with Strict, pruned with Warn.
	patch := []byte(`{"spec":{"experimental":"x","mode":"manual"}}`)
	_, err = probes.Patch(ctx, "fresh-default", types.MergePatchType, patch, metav1.PatchOptions{FieldValidation: "Strict"})
	if err == nil || !strings.Contains(err.Error(), unknown) {
		t.Errorf("merge patch, Strict: %v, want refused naming spec.experimental", err)
	}
	got, err = probes.Patch(ctx, "fresh-default", types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := warned.take(); len(w) != 1 || w[0] != unknown {
		t.Errorf("merge patch, Warn: warnings %q, want %q", w, unknown)
	}
	if s, _ := json.Marshal(got.Object["spec"]); string(s) != `{"mode":"manual"}` {
		t.Errorf("merge patch: spec %s, want {\"mode\":\"manual\"}", s)
	}
	// Server-side apply: refused, as kube-apiserver refuses it for the CRD
	// (its type converter reads the manifest's schema), whatever the
	// fieldValidation.
	apply := []byte(`{"apiVersion":"prune.example.com/v1","kind":"Probe","metadata":{"name":"applied"},"spec":{"experimental":"x"}}`)
	_, err = probes.Patch(ctx, "applied", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "test", FieldValidation: "Ignore"})
	if err == nil || !strings.Contains(err.Error(), ".spec.experimental: field not declared in schema") {
		t.Errorf("apply: %v, want refused: .spec.experimental: field not declared in schema", err)
	}
	apply = []byte(`{"apiVersion":"prune.example.com/v1","kind":"Probe","metadata":{"name":"applied"},"spec":{"mode":"manual"}}`)
	if _, err := probes.Patch(ctx, "applied", types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "test"}); err != nil {
		t.Fatalf("apply: %v", err)
	}
	// A strategic merge patch (which a CRD does not take; the Go types
	// do): refused with Strict as the patch handler refuses a field the Go
	// type lacks, pruned with Warn.
	_, err = probes.Patch(ctx, "fresh-ignore", types.StrategicMergePatchType, patch, metav1.PatchOptions{FieldValidation: "Strict"})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "strict decoding error: "+unknown) {
		t.Errorf("strategic merge patch, Strict: %v, want Invalid naming spec.experimental", err)
	}
	got, err = probes.Patch(ctx, "fresh-ignore", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := warned.take(); len(w) != 1 || w[0] != unknown {
		t.Errorf("strategic merge patch, Warn: warnings %q, want %q", w, unknown)
	}
	if s, _ := json.Marshal(got.Object["spec"]); string(s) != `{"mode":"manual"}` {
		t.Errorf("strategic merge patch: spec %s, want {\"mode\":\"manual\"}", s)
	}
	// /status: the status field the manifest leaves out, reported and
	// pruned.
	got.Object["status"] = map[string]any{"ready": true, "debug": "x"}
	_, err = probes.UpdateStatus(ctx, got, metav1.UpdateOptions{FieldValidation: "Strict"})
	if !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), `unknown field "status.debug"`) {
		t.Errorf("/status, Strict: %v, want 400 naming status.debug", err)
	}
	got, err = probes.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if w := warned.take(); len(w) != 1 || w[0] != `unknown field "status.debug"` {
		t.Errorf("/status, Warn: warnings %q", w)
	}
	if s, _ := json.Marshal(got.Object["status"]); string(s) != `{"ready":true}` {
		t.Errorf("/status: status %s, want {\"ready\":true}", s)
	}
	// Set by a hook: not stored either.
	if _, err := probes.Create(ctx, newProbe("hooked", map[string]any{}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A JSON patch: stored without it.
	if _, err := probes.Patch(ctx, "fresh-warn", types.JSONPatchType, []byte(`[{"op":"add","path":"/spec/experimental","value":"x"}]`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("JSON patch: %v", err)
	}
	warned.take()
	stop()
	stopped = true

	stored := storedProbes(t, dir)
	for _, name := range []string{"old", "fresh-default", "fresh-warn", "fresh-ignore", "applied", "hooked"} {
		s, ok := stored[name]
		if !ok {
			t.Errorf("%s: not stored", name)
			continue
		}
		var obj struct {
			Spec, Status map[string]any
		}
		if err := json.Unmarshal([]byte(s), &obj); err != nil {
			t.Fatalf("%s: stored %s: %v", name, s, err)
		}
		if _, found := obj.Spec["experimental"]; found {
			t.Errorf("%s: stored %s, want no spec.experimental", name, s)
		}
		if _, found := obj.Status["debug"]; found {
			t.Errorf("%s: stored %s, want no status.debug", name, s)
		}
	}
	if _, ok := stored["strict"]; ok {
		t.Errorf("the object refused with Strict was stored")
	}
}
