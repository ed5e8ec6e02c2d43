package validation

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/endpoints/request"
	"sigs.k8s.io/yaml"
)

// neverDuration is a duration as some real APIs write it: "Never" is read
// as nil, and nil is written as "Never"; it keeps nothing of what it read.
type neverDuration struct{ d *time.Duration }

func (n *neverDuration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	n.d = nil
	if s == "Never" {
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	n.d = &d
	return nil
}

func (n neverDuration) MarshalJSON() ([]byte, error) {
	if n.d == nil {
		return json.Marshal("Never")
	}
	return json.Marshal(n.d.String())
}

func (n neverDuration) String() string {
	b, _ := n.MarshalJSON()
	return string(b)
}

type hourglassStep struct {
	Name string          `json:"name"`
	Wait metav1.Duration `json:"wait,omitempty"`
}
type hourglassSpec struct {
	Interval neverDuration   `json:"interval"`
	Expiry   neverDuration   `json:"expiry,omitempty"`
	Timeout  metav1.Duration `json:"timeout,omitempty"`
	Steps    []hourglassStep `json:"steps,omitempty"`
}
type hourglass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              hourglassSpec `json:"spec"`
}

func (h *hourglass) DeepCopyObject() runtime.Object {
	out := &hourglass{}
	b, _ := json.Marshal(h)
	_ = json.Unmarshal(b, out)
	return out
}

// hourglassSchema is what controller-gen writes for hourglass with
// +kubebuilder:default on every duration (Type=string and Schemaless on
// neverDuration).
const hourglassSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{
    "interval":{"type":"string","default":"0s"},
    "expiry":{"type":"string","default":"720h"},
    "timeout":{"type":"string","default":"30s"},
    "steps":{"type":"array","items":{"type":"object","required":["name"],"properties":{
      "name":{"type":"string"},"wait":{"type":"string","default":"1s"}}}}}}}}`

func hourglassValidation(t testing.TB) *Validator {
	t.Helper()
	return oneVersionKind(t, &builders.Resource{Kind: "Hourglass", Plural: "hourglasses", Singular: "hourglass"}, &hourglass{}, hourglassSchema)
}

// decodeHourglass decodes as the server decodes a body or a stored object:
// the Go types, then the schema's defaults.
func decodeHourglass(t *testing.T, data []byte) *hourglass {
	t.Helper()
	h := &hourglass{}
	if err := json.Unmarshal(data, h); err != nil {
		t.Fatal(err)
	}
	builders.ApplySchemaDefaults(h)
	return h
}

// hourglassSpecJSON is the spec as the server writes it.
func hourglassSpecJSON(t *testing.T, h *hourglass) string {
	t.Helper()
	b, err := json.Marshal(h.Spec)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOwnZeroFormIsAValue: a field without omitempty whose Go type writes
// its zero value in its own JSON form ("Never") holds what the client sent,
// as a CRD keeps it: "Never" sent is not turned into the default, on the
// write nor on any later read, and the field left out gets the CRD's
// default, not the Go type's zero form. For every kind of write.
func TestOwnZeroFormIsAValue(t *testing.T) {
	v := hourglassValidation(t)
	const stored = `{"apiVersion":"example.com/v1","kind":"Hourglass","metadata":{"name":"h","namespace":"default","resourceVersion":"1"},
  "spec":{"interval":"5s","expiry":"1h0m0s","timeout":"10s","steps":[{"name":"a","wait":"2s"}]}}`
	old := decodeHourglass(t, []byte(stored))
	object := func(spec string) string {
		return `{"apiVersion":"example.com/v1","kind":"Hourglass","metadata":{"name":"h","namespace":"default","resourceVersion":"1"},"spec":` + spec + `}`
	}
	req := func(verb, contentType string, body []byte) context.Context {
		ctx := request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: verb,
			APIGroup: "example.com", APIVersion: "v1", Resource: "hourglasses", Name: "h"})
		return withRecord(request.WithNamespace(ctx, "default"), contentType, body)
	}
	type write struct {
		name string
		ctx  context.Context
		obj  *hourglass
		old  runtime.Object
	}
	writes := func(spec, merge string) []write {
		body := object(spec)
		patched, err := jsonpatch.MergePatch([]byte(stored), []byte(merge))
		if err != nil {
			t.Fatal(err)
		}
		config, _ := yaml.JSONToYAML([]byte(body))
		return []write{
			{"create", req("create", "application/json", []byte(body)), decodeHourglass(t, []byte(body)), nil},
			{"update", req("update", "application/json", []byte(body)), decodeHourglass(t, []byte(body)), old},
			{"merge patch", req("patch", "application/merge-patch+json", []byte(merge)), decodeHourglass(t, patched), old},
			{"apply, creating", req("patch", "application/apply-patch+yaml", config), decodeHourglass(t, []byte(body)), nil},
		}
	}
	check := func(w write, want string) {
		t.Helper()
		v.DefaultAbsent(w.ctx, w.obj, w.old)
		var errs []string
		if w.old == nil {
			errs = strings.Split(fieldErrors(v.Validate(w.ctx, w.obj)), "\n")
		} else {
			errs = strings.Split(fieldErrors(v.ValidateUpdate(w.ctx, w.obj, w.old)), "\n")
		}
		if strings.Join(errs, "") != "" {
			t.Errorf("%s: refused: %s", w.name, strings.Join(errs, "; "))
		}
		if got := hourglassSpecJSON(t, w.obj); got != want {
			t.Errorf("%s: stored spec\n  %s\nwant (as a CRD stores it)\n  %s", w.name, got, want)
		}
		// Read back from storage: the same.
		b, err := json.Marshal(w.obj)
		if err != nil {
			t.Fatal(err)
		}
		if got := hourglassSpecJSON(t, decodeHourglass(t, b)); got != want {
			t.Errorf("%s: read back as\n  %s\nwant\n  %s", w.name, got, want)
		}
	}

	t.Run("left out", func(t *testing.T) {
		for _, w := range writes(`{"steps":[{"name":"a"}]}`,
			`{"spec":{"interval":null,"expiry":null,"timeout":null,"steps":[{"name":"a"}]}}`) {
			check(w, `{"interval":"0s","expiry":"720h0m0s","timeout":"30s","steps":[{"name":"a","wait":"1s"}]}`)
		}
	})
	t.Run("the zero form sent", func(t *testing.T) {
		// Kept where the Go field has no omitempty; with omitempty,
		// decoding takes it for absent, as it must a field added after the
		// object was stored (below): the default is stored
		// (docs/markers.md says so).
		for _, w := range writes(`{"interval":"Never","expiry":"Never","timeout":"0s","steps":[{"name":"a","wait":"0s"}]}`,
			`{"spec":{"interval":"Never","expiry":"Never","timeout":"0s","steps":[{"name":"a","wait":"0s"}]}}`) {
			check(w, `{"interval":"Never","expiry":"720h0m0s","timeout":"30s","steps":[{"name":"a","wait":"1s"}]}`)
		}
	})
	t.Run("fields added after the object was stored", func(t *testing.T) {
		// What an earlier build of the type stored: no expiry, timeout,
		// nor wait. They read as their defaults, as on a CRD.
		h := decodeHourglass(t, []byte(`{"apiVersion":"example.com/v1","kind":"Hourglass","metadata":{"name":"h"},"spec":{"interval":"5s","steps":[{"name":"a"}]}}`))
		if got, want := hourglassSpecJSON(t, h), `{"interval":"5s","expiry":"720h0m0s","timeout":"30s","steps":[{"name":"a","wait":"1s"}]}`; got != want {
			t.Errorf("read as\n  %s\nwant\n  %s", got, want)
		}
	})
	t.Run("values sent", func(t *testing.T) {
		for _, w := range writes(`{"interval":"1m","expiry":"2h","timeout":"5s","steps":[{"name":"a","wait":"3s"}]}`,
			`{"spec":{"interval":"1m","expiry":"2h","timeout":"5s","steps":[{"name":"a","wait":"3s"}]}}`) {
			check(w, `{"interval":"1m0s","expiry":"2h0m0s","timeout":"5s","steps":[{"name":"a","wait":"3s"}]}`)
		}
	})
}

// TestOwnZeroForms: which fields are written in their type's own zero form.
func TestOwnZeroForms(t *testing.T) {
	for _, c := range []struct {
		v    any
		want any
	}{
		{metav1.Duration{}, "0s"},
		{neverDuration{}, "Never"},
		{metav1.Time{}, nil}, // null
		{"", nil},            // no MarshalJSON of its own
	} {
		got, ok := ownZero(reflectTypeOf(c.v))
		if ok != (c.want != nil) || ok && got != c.want {
			t.Errorf("%T: own zero form %v (%v), want %v", c.v, got, ok, c.want)
		}
	}
	z := zeroFormsOf(reflectTypeOf(hourglass{}))
	spec := z.at("spec").within()
	for _, k := range []string{"interval", "expiry", "timeout"} {
		if f := spec.at(k); f == nil || !f.has {
			t.Errorf("spec.%s: no zero form", k)
		}
	}
	if f := spec.at("steps").within().at("wait"); !f.isZero("0s") {
		t.Errorf("spec.steps[].wait: want the zero form 0s")
	}
	if spec.at("steps").within().at("name") != nil {
		t.Errorf("spec.steps[].name: a string has no zero form of its own")
	}
}

func reflectTypeOf(v any) reflect.Type { return reflect.TypeOf(v) }
