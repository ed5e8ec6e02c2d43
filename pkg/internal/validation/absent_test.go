package validation

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
)

func tankStructural(t *testing.T) *structuralschema.Structural {
	t.Helper()
	var props apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(tankSchema), &props); err != nil {
		t.Fatal(err)
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(&props, &internal, nil); err != nil {
		t.Fatal(err)
	}
	s, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tank is a kind with the MarshalJSON generate writes in zz_generated.json.go:
// spec and status left out while zero, as a custom resource has none.
type tankSpec struct {
	Name  string `json:"name,omitempty"` // +required
	Count int32  `json:"count"`          // +kubebuilder:default=3
}
type tankStatus struct {
	Ready int32 `json:"ready"`
}
type tank struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              tankSpec   `json:"spec,omitempty"`
	Status            tankStatus `json:"status,omitempty"`
}

func (in *tank) DeepCopyObject() runtime.Object {
	c := *in
	c.ObjectMeta = *in.ObjectMeta.DeepCopy()
	return &c
}

func (in *tank) MarshalJSON() ([]byte, error) {
	type plainTank tank
	out := struct {
		*plainTank
		Spec   *tankSpec   `json:"spec,omitempty"`
		Status *tankStatus `json:"status,omitempty"`
	}{plainTank: (*plainTank)(in)}
	if !reflect.ValueOf(&in.Spec).Elem().IsZero() {
		out.Spec = &in.Spec
	}
	if !reflect.ValueOf(&in.Status).Elem().IsZero() {
		out.Status = &in.Status
	}
	return json.Marshal(out)
}

const tankSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"count":{"type":"integer","format":"int32","default":3}}},
  "status":{"type":"object","properties":{"ready":{"type":"integer","format":"int32"}}}}}`

// TestAbsentSpecOfAKindWithMarshalJSON: a kind whose generated MarshalJSON
// leaves a zero spec out keeps the checks of its fields written at their
// zero value (DefaultAbsent still puts count's default in), and a spec sent
// of only nulls and zero values, which the encoding leaves out whole, is
// validated as sent: spec.name is required, as on the CRD; a create without
// spec is accepted and stays without.
func TestAbsentSpecOfAKindWithMarshalJSON(t *testing.T) {
	if required, defaults := absentFields(reflect.TypeOf(&tank{}), tankStructural(t)); required || !defaults {
		t.Errorf("absentFields through the kind's MarshalJSON: required %v, defaults %v; want false, true (count)", required, defaults)
	}
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: "Tank"}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &tank{})
	scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), &tank{})
	v, err := New(scheme, "example.com", &builders.Resource{Kind: "Tank", Plural: "tanks", Singular: "tank", Namespaced: true,
		StatusSubresource: true, Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: tankSchema}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	create := func(body string) (*tank, []string) {
		t.Helper()
		obj := &tank{}
		if err := json.Unmarshal([]byte(body), obj); err != nil {
			t.Fatal(err)
		}
		ctx := request.WithNamespace(request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: "create",
			APIGroup: "example.com", APIVersion: "v1", Resource: "tanks"}), "default")
		ctx = withRecord(ctx, "application/json", []byte(body))
		v.DefaultAbsent(ctx, obj, nil)
		var msgs []string
		for _, e := range v.Validate(ctx, obj) {
			msgs = append(msgs, e.Error())
		}
		return obj, msgs
	}
	const head = `{"apiVersion":"example.com/v1","kind":"Tank","metadata":{"name":"a","namespace":"default"}`
	if obj, errs := create(head + `}`); len(errs) != 0 || !reflect.ValueOf(obj.Spec).IsZero() {
		t.Errorf("without spec: %v, spec %+v", errs, obj.Spec)
	}
	for _, spec := range []string{`{}`, `{"name":null}`, `{"name":null,"count":0}`} {
		if _, errs := create(head + `,"spec":` + spec + `}`); len(errs) != 1 || !strings.Contains(errs[0], "spec.name: Required value") {
			t.Errorf("spec %s: %v, want spec.name: Required value", spec, errs)
		}
	}
	if obj, errs := create(head + `,"spec":{"name":"n"}}`); len(errs) != 0 || obj.Spec.Count != 3 {
		t.Errorf("spec with a name: %v, count %d, want the default 3", errs, obj.Spec.Count)
	}
}

// tankAsBefore is tank without the generated MarshalJSON: what a kind was
// before zz_generated.json.go.
type tankAsBefore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              tankSpec   `json:"spec,omitempty"`
	Status            tankStatus `json:"status,omitempty"`
}

func (in *tankAsBefore) DeepCopyObject() runtime.Object {
	c := *in
	c.ObjectMeta = *in.ObjectMeta.DeepCopy()
	return &c
}

// BenchmarkAbsentSpecCreate is the schema validation and DefaultAbsent of
// one create of a kind with the generated MarshalJSON ("marshaljson"),
// beside the same kind without it ("as before"): what leaving a zero spec
// and status out costs per write (its content is read through
// encoding/json instead of apimachinery's converter).
func BenchmarkAbsentSpecCreate(b *testing.B) {
	body := []byte(`{"apiVersion":"example.com/v1","kind":"Tank","metadata":{"name":"a","namespace":"default","labels":{"app":"tank"}},"spec":{"name":"n","count":2}}`)
	for name, obj := range map[string]runtime.Object{"marshaljson": &tank{}, "as before": &tankAsBefore{}} {
		scheme := runtime.NewScheme()
		gk := schema.GroupKind{Group: "example.com", Kind: "Tank"}
		scheme.AddKnownTypeWithName(gk.WithVersion("v1"), obj.DeepCopyObject())
		scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), obj.DeepCopyObject())
		v, err := New(scheme, "example.com", &builders.Resource{Kind: "Tank", Plural: "tanks", Singular: "tank", Namespaced: true,
			StatusSubresource: true, Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: tankSchema}}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if err := json.Unmarshal(body, obj); err != nil {
			b.Fatal(err)
		}
		plain := request.WithNamespace(request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: "create",
			APIGroup: "example.com", APIVersion: "v1", Resource: "tanks"}), "default")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ctx := withRecord(plain, "application/json", body)
				v.DefaultAbsent(ctx, obj, nil)
				if errs := v.Validate(ctx, obj); len(errs) != 0 {
					b.Fatal(errs)
				}
			}
		})
	}
}
