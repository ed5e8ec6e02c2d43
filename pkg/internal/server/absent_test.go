package server

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
)

// TestZeroStatusIsAbsent: a probe created without status is answered
// without one, as kube-apiserver answers a custom resource of a CRD with
// /status (which drops the status of a create): the create's answer, a GET
// in JSON, pretty JSON and YAML, a LIST and a watch event; its printer
// column shows nothing. Once /status is written, the status is answered.
func TestZeroStatusIsAbsent(t *testing.T) {
	dir := t.TempDir()
	cfg, stop := startProbes(t, dir, false)
	defer stop()
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(cfg)
	probes := dyn.Resource(probesGVR)
	w, err := probes.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := probes.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "prune.example.com/v1", "kind": "Probe", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"mode": "fast"}, "status": map[string]any{"ready": true}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := created.Object["status"]; ok {
		t.Errorf("the create answered status %v; a created custom resource has none", created.Object["status"])
	}
	select {
	case e := <-w.ResultChan():
		if u, ok := e.Object.(*unstructured.Unstructured); !ok || u.Object["status"] != nil {
			t.Errorf("the watch event %s: %v, want an object without status", e.Type, e.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event in 30 s")
	}

	raw := rest.CopyConfig(cfg)
	gv := probesGVR.GroupVersion()
	raw.GroupVersion = &gv
	raw.APIPath = "/apis"
	raw.NegotiatedSerializer = serializer.WithoutConversionCodecFactory{CodecFactory: serializer.NewCodecFactory(runtime.NewScheme())}
	client, err := rest.RESTClientFor(raw)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, accept string, params ...string) []byte {
		t.Helper()
		r := client.Get().AbsPath("/apis/prune.example.com/v1/"+path).SetHeader("Accept", accept)
		for i := 0; i+1 < len(params); i += 2 {
			r = r.Param(params[i], params[i+1])
		}
		b, err := r.DoRaw(ctx)
		if err != nil {
			t.Fatalf("GET %s (%s): %v\n%s", path, accept, err, b)
		}
		return b
	}
	object := func(b []byte, yamlBody bool) map[string]any {
		t.Helper()
		if yamlBody {
			j, err := yaml.YAMLToJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			b = j
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%v\n%s", err, b)
		}
		return m
	}
	for _, c := range []struct {
		name, accept string
		params       []string
		yaml         bool
	}{
		{"JSON", "application/json", nil, false},
		{"pretty JSON", "application/json", []string{"pretty", "true"}, false},
		{"YAML", "application/yaml", nil, true},
	} {
		b := get("probes/p", c.accept, c.params...)
		m := object(b, c.yaml)
		if _, ok := m["status"]; ok || m["spec"] == nil {
			t.Errorf("GET in %s: want a spec and no status, got\n%s", c.name, b)
		}
		if c.name == "pretty JSON" && !bytes.Contains(b, []byte("\n  \"spec\": {")) {
			t.Errorf("GET in pretty JSON is not indented:\n%s", b)
		}
		list := object(get("probes", c.accept, c.params...), c.yaml)
		items, _ := list["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["status"] != nil || list["metadata"] == nil {
			t.Errorf("LIST in %s: want one item without status, got %v", c.name, list)
		}
	}

	// The status written: answered.
	created.Object["status"] = map[string]any{"ready": true}
	if _, err := probes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := probes.Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ready, _, _ := unstructured.NestedBool(got.Object, "status", "ready"); !ready {
		t.Errorf("after /status: %v, want status.ready true", got.Object["status"])
	}
	// A second probe without status: the list holds one of each.
	if _, err := probes.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "prune.example.com/v1", "kind": "Probe", "metadata": map[string]any{"name": "q"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list := object(get("probes", "application/json"), false)
	statuses := map[string]any{}
	for _, item := range list["items"].([]any) {
		m := item.(map[string]any)
		statuses[m["metadata"].(map[string]any)["name"].(string)] = m["status"]
	}
	if statuses["p"] == nil || statuses["q"] != nil {
		t.Errorf("LIST: status of p %v (want ready), of q %v (want none)", statuses["p"], statuses["q"])
	}
}

// counter is a kind whose status has a field without omitempty: its zero
// status is written as zero counters.
type counterStatus struct {
	Ready int32 `json:"ready"`
}
type counter struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              probeSpec     `json:"spec,omitempty"`
	Status            counterStatus `json:"status,omitempty"`
}

func (c *counter) DeepCopyObject() runtime.Object { d := *c; return &d }

// gauge is a kind whose status is a pointer.
type gauge struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              probeSpec      `json:"spec,omitempty"`
	Status            *counterStatus `json:"status,omitempty"`
}

func (g *gauge) DeepCopyObject() runtime.Object { d := *g; return &d }

// TestZeroStatusColumns: a printer column on the status shows nothing while
// the status is zero (written as zero counters by the Go type), as a CRD's
// before a controller writes it, and its value once written.
func TestZeroStatusColumns(t *testing.T) {
	tc, err := newTableConvertor(&builders.Resource{Plural: "counters", PrintColumns: []builders.Column{
		{Name: "Ready", Type: "integer", JSONPath: ".status.ready"}, {Name: "Mode", Type: "string", JSONPath: ".spec.mode"}}}, jsoncontent.Kind{})
	if err != nil {
		t.Fatal(err)
	}
	cells := func(c *counter) []any {
		table, err := tc.ConvertToTable(context.Background(), c, nil)
		if err != nil {
			t.Fatal(err)
		}
		return table.Rows[0].Cells
	}
	c := &counter{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Spec: probeSpec{Mode: "fast"}}
	if got := cells(c); got[1] != nil || got[2] != "fast" {
		t.Errorf("zero status: cells %v, want Ready empty (<none>) and Mode fast", got)
	}
	c.Status.Ready = 2
	if got := cells(c); got[1] != int64(2) {
		t.Errorf("status written: cells %v, want Ready 2", got)
	}
}

// TestAbsentEncoding: the encoder leaves out a zero spec and a zero status
// (written as zero counters), in an object and in a list's items, and
// nothing else.
func TestAbsentEncoding(t *testing.T) {
	forms := &absentForms{}
	forms.add(&counter{}, &counterListObject{})
	if _, ok := forms.lists[reflect.TypeOf(&counterListObject{})]; !ok {
		t.Fatal("counter's list not registered")
	}
	e := absentEncoder{Serializer: kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, nil, nil, kjson.SerializerOptions{}), forms: forms}
	encode := func(obj runtime.Object) string {
		var b bytes.Buffer
		if err := e.encode(obj, &b); err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(b.String())
	}
	for _, c := range []struct {
		obj  *counter
		want string
	}{
		{&counter{ObjectMeta: metav1.ObjectMeta{Name: "z"}}, `{"metadata":{"name":"z"}}`},
		{&counter{ObjectMeta: metav1.ObjectMeta{Name: "s"}, Spec: probeSpec{Mode: "fast"}}, `{"metadata":{"name":"s"},"spec":{"mode":"fast"}}`},
		{&counter{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Status: counterStatus{Ready: 1}}, `{"metadata":{"name":"r"},"status":{"ready":1}}`},
		{&counter{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: probeSpec{Mode: "fast"}, Status: counterStatus{Ready: 1}}, `{"metadata":{"name":"b"},"spec":{"mode":"fast"},"status":{"ready":1}}`},
	} {
		if got := encode(c.obj); got != c.want {
			t.Errorf("%s: %s, want %s", c.obj.Name, got, c.want)
		}
	}
	// A status that is a pointer is left out when nil, and looked past.
	pe := absentEncoder{Serializer: e.Serializer, forms: &absentForms{}}
	pe.forms.add(&gauge{}, nil)
	for _, c := range []struct {
		obj  *gauge
		want string
	}{
		{&gauge{ObjectMeta: metav1.ObjectMeta{Name: "z"}}, `{"metadata":{"name":"z"}}`},
		{&gauge{ObjectMeta: metav1.ObjectMeta{Name: "r"}, Status: &counterStatus{}}, `{"metadata":{"name":"r"},"status":{"ready":0}}`},
	} {
		var b bytes.Buffer
		if err := pe.encode(c.obj, &b); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSpace(b.String()); got != c.want {
			t.Errorf("gauge %s: %s, want %s", c.obj.Name, got, c.want)
		}
	}
	list := &counterListObject{Items: []counter{{ObjectMeta: metav1.ObjectMeta{Name: "z"}}, {ObjectMeta: metav1.ObjectMeta{Name: "r"}, Status: counterStatus{Ready: 1}}}}
	if got := encode(list); got != `{"metadata":{},"items":[{"metadata":{"name":"z"}},{"metadata":{"name":"r"},"status":{"ready":1}}]}` {
		t.Errorf("list: %s", got)
	}
}

type counterListObject struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []counter `json:"items"`
}

func (l *counterListObject) DeepCopyObject() runtime.Object { d := *l; return &d }

// TestAbsentSpec: a probe created without spec is stored and answered
// without one, as kube-apiserver stores a custom resource: the defaults
// inside its spec (mode: auto) are not given to it, also after a write that
// leaves it out; one created with `spec: {}` gets them. An object an earlier
// build stored reads as it was written.
func TestAbsentSpec(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	cfg, stop := startProbes(t, dir, false)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	probes := dynamic.NewForConfigOrDie(cfg).Resource(probesGVR)
	create := func(obj map[string]any) *unstructured.Unstructured {
		t.Helper()
		obj["apiVersion"], obj["kind"] = "prune.example.com/v1", "Probe"
		got, err := probes.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	spec := func(u *unstructured.Unstructured) string {
		s, ok := u.Object["spec"]
		if !ok {
			return "none"
		}
		b, _ := json.Marshal(s)
		return string(b)
	}
	get := func(name string) *unstructured.Unstructured {
		t.Helper()
		got, err := probes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := spec(create(map[string]any{"metadata": map[string]any{"name": "none"}})); got != "none" {
		t.Errorf("created without spec: answered spec %s, want none (a CRD stores none)", got)
	}
	if got := spec(create(map[string]any{"metadata": map[string]any{"name": "empty"}, "spec": map[string]any{}})); got != `{"mode":"auto"}` {
		t.Errorf("created with spec {}: answered spec %s, want its defaults", got)
	}
	if _, err := probes.Patch(ctx, "none", types.MergePatchType, []byte(`{"metadata":{"labels":{"a":"b"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	none := get("none")
	if got := spec(none); got != "none" {
		t.Errorf("labelled: spec %s, want none", got)
	}
	if _, err := probes.Update(ctx, none, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := spec(get("none")); got != "none" {
		t.Errorf("updated as read: spec %s, want none", got)
	}
	if got := spec(get("empty")); got != `{"mode":"auto"}` {
		t.Errorf("spec {} read back: %s, want its defaults", got)
	}
	stop()
	stopped = true

	// What earlier builds stored for a create without spec: its defaults,
	// and an empty status.
	cli, stopEtcd := stoppedServersEtcd(t, dir)
	resp, err := cli.Get(ctx, "/registry/", clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	var key string
	for _, kv := range resp.Kvs {
		if strings.HasSuffix(string(kv.Key), "/probes/none") {
			key = strings.TrimSuffix(string(kv.Key), "none") + "earlier"
			if strings.Contains(string(kv.Value), "auto") {
				t.Errorf("stored without spec: %s, want no defaults", kv.Value)
			}
		}
	}
	earlier := `{"kind":"Probe","apiVersion":"prune.example.com/v1","metadata":{"name":"earlier","uid":"6f1c8a52-7e0e-4c41-9d7b-0c2d7b3f9a11","generation":1,"creationTimestamp":"2026-11-20T10:00:00Z"},"spec":{"mode":"auto"},"status":{}}` + "\n"
	if _, err := cli.Put(ctx, key, earlier); err != nil {
		t.Fatal(err)
	}
	stopEtcd()
	cfg, stop = startProbes(t, dir, false)
	stopped = false
	probes = dynamic.NewForConfigOrDie(cfg).Resource(probesGVR)
	got := get("earlier")
	if spec(got) != `{"mode":"auto"}` || got.Object["status"] != nil {
		t.Errorf("stored by an earlier build: spec %s, status %v; want spec {mode: auto} and no status", spec(got), got.Object["status"])
	}
}
