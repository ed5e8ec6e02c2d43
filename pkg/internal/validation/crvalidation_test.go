package validation

import (
	"context"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
)

type widgetSpec struct {
	Size int      `json:"size"`
	Tags []string `json:"tags"` // nil is written as null
}
type widgetStatus struct {
	Ready bool `json:"ready"`
}
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              widgetSpec   `json:"spec"`
	Status            widgetStatus `json:"status"`
}

func (w *widget) DeepCopyObject() runtime.Object { c := *w; return &c }

// widgetSchema is what controller-gen writes for widget with
// +kubebuilder:validation:Maximum=10 on size and two CEL rules on spec, one
// of them a transition rule.
const widgetSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{"size":{"type":"integer","maximum":10},"tags":{"type":"array","items":{"type":"string"}}},
    "x-kubernetes-validations":[
      {"rule":"self.size % 2 == 0","message":"size must be even"},
      {"rule":"self.size >= oldSelf.size","message":"size may not shrink","reason":"FieldValueForbidden"}]},
  "status":{"type":"object","required":["ready","since"],"properties":{"ready":{"type":"boolean"},"since":{"type":"string"}}}}}`

func widgetValidation(t *testing.T) (*Validator, context.Context) {
	t.Helper()
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	scheme.AddKnownTypeWithName(gv.WithKind("Widget"), &widget{})
	scheme.AddKnownTypeWithName(schema.GroupVersion{Group: "example.com", Version: runtime.APIVersionInternal}.WithKind("Widget"), &widget{})
	v, err := New(scheme, "example.com", &builders.Resource{Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true, StatusSubresource: true,
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: widgetSchema}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := request.WithRequestInfo(context.Background(), &request.RequestInfo{APIGroup: "example.com", APIVersion: "v1", Resource: "widgets"})
	return v, request.WithNamespace(ctx, "default")
}

func newWidget(name string, size int) *widget {
	return &widget{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: "1"}, Spec: widgetSpec{Size: size}}
}

func errorText(errs []error) string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return strings.Join(out, "\n")
}

// TestSchemaValidationAsCRDs: the schema, CEL rules and metadata.name are
// checked with kube-apiserver's own custom resource validation.
func TestSchemaValidationAsCRDs(t *testing.T) {
	v, ctx := widgetValidation(t)
	// Its nil tags are null in JSON, which the schema (tags optional, not
	// nullable) would refuse: dropped, as kube-apiserver drops them. And a
	// custom resource is created without the status a Go object always has
	// (whose required fields are missing).
	if errs := v.Validate(ctx, newWidget("ok", 4)); len(errs) != 0 {
		t.Errorf("a valid widget: %v", errs.ToAggregate())
	}
	got := errorText(v.Validate(ctx, newWidget("Bad_Name", 15)).ToAggregate().Errors())
	for _, want := range []string{
		`metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain`,
		"spec.size: Invalid value: 15: spec.size in body should be less than or equal to 10",
		"spec: Invalid value: size must be even",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("want %q in:\n%s", want, got)
		}
	}
}

// TestSchemaValidationRatchets: on update, a value left as it was is not
// re-rejected; transition rules see the old object.
func TestSchemaValidationRatchets(t *testing.T) {
	v, ctx := widgetValidation(t)
	stored := newWidget("w", 15) // stored before the maximum was added
	relabelled := newWidget("w", 15)
	relabelled.Labels = map[string]string{"a": "b"}
	if errs := v.ValidateUpdate(ctx, relabelled, stored); len(errs) != 0 {
		t.Errorf("an unchanged invalid size must not be re-rejected: %v", errs.ToAggregate())
	}
	if errs := v.ValidateUpdate(ctx, newWidget("w", 13), stored); !strings.Contains(errorText(errs.ToAggregate().Errors()), "should be less than or equal to 10") {
		t.Errorf("a changed invalid size: want the maximum error, got %v", errs.ToAggregate())
	}
	if errs := v.ValidateUpdate(ctx, newWidget("w", 2), newWidget("w", 4)); !strings.Contains(errorText(errs.ToAggregate().Errors()), "spec: Forbidden: size may not shrink") {
		t.Errorf("transition rule: want %q, got %v", "size may not shrink", errs.ToAggregate())
	}
}

type gadgetSpec struct {
	Mode  *string   `json:"mode,omitempty"`
	Ports []int     `json:"ports,omitempty"`
	Size  int       `json:"size"`
	TLS   gadgetTLS `json:"tls,omitempty"`
}
type gadgetTLS struct {
	Mode string `json:"mode,omitempty"`
}
type gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              gadgetSpec `json:"spec,omitempty"`
}

func (g *gadget) DeepCopyObject() runtime.Object { c := *g; return &c }

// TestSchemaDefaults: a schema's defaults fill what the object's encoding
// leaves out, as a CRD's do; what is set stays.
func TestSchemaDefaults(t *testing.T) {
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: "Gadget"}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &gadget{})
	scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), &gadget{})
	const s = `{"type":"object","properties":{"metadata":{"type":"object"},"spec":{"type":"object","properties":{
		"mode":{"type":"string","default":"auto"},"ports":{"type":"array","items":{"type":"integer"},"default":[80]},"size":{"type":"integer","default":3},
		"tls":{"type":"object","properties":{"mode":{"type":"string","default":"Terminate"}}}}}}}`
	if _, err := New(scheme, "example.com", &builders.Resource{Kind: "Gadget", Plural: "gadgets", Singular: "gadget", Namespaced: true,
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: s}}}, nil); err != nil {
		t.Fatal(err)
	}
	g := &gadget{Spec: gadgetSpec{TLS: gadgetTLS{Mode: "Passthrough"}}}
	builders.ApplySchemaDefaults(g)
	if g.Spec.Mode == nil || *g.Spec.Mode != "auto" || len(g.Spec.Ports) != 1 || g.Spec.Ports[0] != 80 || g.Spec.Size != 0 {
		t.Errorf("defaults: %+v (size is always encoded, so never defaulted)", g.Spec)
	}
	g = &gadget{Spec: gadgetSpec{Ports: []int{443}}}
	builders.ApplySchemaDefaults(g)
	if g.Spec.TLS.Mode != "" {
		t.Errorf("defaults: %+v (tls, empty and omitempty, is left out, so its mode is not defaulted)", g.Spec)
	}
	// A zero spec is an absent one, which a CRD does not default inside.
	g = &gadget{}
	builders.ApplySchemaDefaults(g)
	if g.Spec.Mode != nil || g.Spec.Ports != nil {
		t.Errorf("a zero spec was defaulted: %+v", g.Spec)
	}
	manual := "manual"
	g = &gadget{Spec: gadgetSpec{Mode: &manual, Ports: []int{443}}}
	builders.ApplySchemaDefaults(g)
	if *g.Spec.Mode != "manual" || g.Spec.Ports[0] != 443 {
		t.Errorf("set values must stay: %+v", g.Spec)
	}
}

// TestSchemasCheckedAsCRDs: a kind whose schema kube-apiserver would refuse
// in a CRD (a CEL rule that does not compile) is not served.
func TestSchemasCheckedAsCRDs(t *testing.T) {
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: "Widget"}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &widget{})
	bad := strings.Replace(widgetSchema, "self.size % 2 == 0", "self.size %% 2 ==", 1)
	_, err := New(scheme, "example.com", &builders.Resource{Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true,
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: bad}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "Widget.example.com") || !strings.Contains(err.Error(), "x-kubernetes-validations[0].rule") || !strings.Contains(err.Error(), "compil") {
		t.Fatalf("want an error naming the kind and the rule, got %v", err)
	}
	t.Log(err)

	// A Kubernetes-owned group (*.k8s.io) is served as any other.
	k8s := runtime.NewScheme()
	k8s.AddKnownTypeWithName(schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Widget"}, &widget{})
	if _, err := New(k8s, "gateway.networking.k8s.io", &builders.Resource{Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true,
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: widgetSchema}}}, nil); err != nil {
		t.Errorf("a *.k8s.io group: %v", err)
	}
}

// TestNameRuleHook: a kind's ValidateName hook replaces the DNS subdomain
// rule of metadata.name, nothing else.
func TestNameRuleHook(t *testing.T) {
	v, ctx := widgetValidation(t)
	v.nameRule = func(name string, prefix bool) []string {
		if strings.Contains(name, " ") {
			return []string{"may not contain spaces"}
		}
		return nil
	}
	if errs := v.Validate(ctx, newWidget("Under_Score", 4)); len(errs) != 0 {
		t.Errorf("the hook's rule allows Under_Score: %v", errs.ToAggregate())
	}
	got := errorText(v.Validate(ctx, newWidget("a b", 15)).ToAggregate().Errors())
	if !strings.Contains(got, `metadata.name: Invalid value: "a b": may not contain spaces`) || strings.Contains(got, "RFC 1123") || !strings.Contains(got, "less than or equal to 10") {
		t.Errorf("want the hook's error and the schema's, not the DNS rule:\n%s", got)
	}
}

// TestOmittedStructIsAbsent: an optional struct left out (omitempty, zero)
// is not validated as an empty object: its required fields and enums are a
// custom resource's, which would not have it.
func TestOmittedStructIsAbsent(t *testing.T) {
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: "Gadget"}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), &gadget{})
	scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), &gadget{})
	const s = `{"type":"object","properties":{"metadata":{"type":"object"},"spec":{"type":"object","properties":{
		"size":{"type":"integer"},"tls":{"type":"object","required":["mode"],"properties":{"mode":{"type":"string","enum":["Terminate","Passthrough"]}}}}}}}`
	v, err := New(scheme, "example.com", &builders.Resource{Kind: "Gadget", Plural: "gadgets", Singular: "gadget", Namespaced: true,
		Versions: []string{"v1"}, StorageVersion: "v1", Schemas: map[string]builders.Schema{"v1": {OpenAPIV3: s}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := request.WithNamespace(request.WithRequestInfo(context.Background(), &request.RequestInfo{APIGroup: "example.com", APIVersion: "v1"}), "default")
	g := &gadget{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "default"}}
	if errs := v.Validate(ctx, g); len(errs) != 0 {
		t.Errorf("tls left out: %v", errs.ToAggregate())
	}
	g.Spec.TLS.Mode = "Bogus"
	if errs := v.Validate(ctx, g); !strings.Contains(errorText(errs.ToAggregate().Errors()), "spec.tls.mode: Unsupported value") {
		t.Errorf("tls given: want its enum checked, got %v", errs.ToAggregate())
	}
}

type toteSpec struct {
	Mode string `json:"mode,omitempty"`
}
type tote struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              toteSpec `json:"spec"`
}

func (t *tote) DeepCopyObject() runtime.Object { c := *t; return &c }

// TestRequiredSpecIsNeverAbsent: a spec the kind's schema requires (a Go
// field without omitempty, as controller-gen writes it) is on every object
// of a CRD, so its zero value is an empty spec, not an absent one: it is
// defaulted inside, and an update that does not name it is not refused as
// lacking it.
func TestRequiredSpecIsNeverAbsent(t *testing.T) {
	const s = `{"type":"object","required":["spec"],"properties":{"metadata":{"type":"object"},"spec":{"type":"object","properties":{
		"mode":{"type":"string","default":"auto"}}}}}`
	v := oneVersionKind(t, &builders.Resource{Kind: "Tote", Plural: "totes", Singular: "tote"}, &tote{}, s)
	if jsoncontent.Absent(&tote{}, "spec") {
		t.Fatal("a required spec taken for absent")
	}
	obj := &tote{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "default", ResourceVersion: "1"}}
	builders.ApplySchemaDefaults(obj)
	if obj.Spec.Mode != "auto" {
		t.Errorf("a zero required spec read: %+v, want its defaults", obj.Spec)
	}
	// A label by merge patch of an object stored with an empty spec.
	old := &tote{ObjectMeta: metav1.ObjectMeta{Name: "t", Namespace: "default", ResourceVersion: "1"}}
	updated := old.DeepCopyObject().(*tote)
	updated.Labels = map[string]string{"a": "b"}
	ctx := request.WithNamespace(request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: "patch",
		APIGroup: "example.com", APIVersion: "v1", Resource: "totes", Name: "t"}), "default")
	ctx = withRecord(ctx, "application/merge-patch+json", []byte(`{"metadata":{"labels":{"a":"b"}}}`))
	v.DefaultAbsent(ctx, updated, old)
	if errs := v.ValidateUpdate(ctx, updated, old); len(errs) > 0 {
		t.Errorf("a label on an object with an empty required spec: %v", errs.ToAggregate())
	}
}

type craneSpec struct {
	Replicas int32 `json:"replicas"`
}
type craneStatus struct {
	Ready int32 `json:"ready"`
}
type crane struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              craneSpec   `json:"spec,omitempty"`
	Status            craneStatus `json:"status,omitempty"`
}

func (c *crane) DeepCopyObject() runtime.Object { d := *c; return &d }

// TestProtobufCarriesItsEmptySpec: a protobuf body carries the spec and
// status as their zero values (replicas: 0), which validation sees as sent,
// as a CRD sees them in JSON; through the main resource, the status /status
// serves is not the request's, and no one wrote it.
func TestProtobufCarriesItsEmptySpec(t *testing.T) {
	const s = `{"type":"object","properties":{"metadata":{"type":"object"},
		"spec":{"type":"object","required":["replicas"],"properties":{"replicas":{"type":"integer","format":"int32","minimum":1}}},
		"status":{"type":"object","required":["ready"],"properties":{"ready":{"type":"integer","format":"int32"}}}}}`
	v := oneVersionKind(t, &builders.Resource{Kind: "Crane", Plural: "cranes", Singular: "crane", StatusSubresource: true}, &crane{}, s)
	req := func(verb string) context.Context {
		ctx := request.WithNamespace(request.WithRequestInfo(context.Background(), &request.RequestInfo{IsResourceRequest: true, Verb: verb,
			APIGroup: "example.com", APIVersion: "v1", Resource: "cranes", Name: "c"}), "default")
		return withRecord(ctx, runtime.ContentTypeProtobuf, []byte("k8s\x00..."))
	}
	obj := &crane{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default"}}
	ctx := req("create")
	v.DefaultAbsent(ctx, obj, nil)
	// Validated as sent: replicas 0, below its minimum (not missing).
	if errs := v.Validate(ctx, obj); len(errs) != 1 || !strings.Contains(errs[0].Error(), "spec.replicas: Invalid value: 0") {
		t.Errorf("a protobuf create of an empty crane: %v, want only spec.replicas below its minimum", errs.ToAggregate())
	}
	old := &crane{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "default", ResourceVersion: "1"}, Spec: craneSpec{Replicas: 2}}
	updated := old.DeepCopyObject().(*crane)
	updated.Labels = map[string]string{"a": "b"}
	ctx = req("update")
	v.DefaultAbsent(ctx, updated, old)
	if errs := v.ValidateUpdate(ctx, updated, old); len(errs) > 0 {
		t.Errorf("a protobuf label update of a crane whose status no one wrote: %v", errs.ToAggregate())
	}
}

// oneVersionKind is the Validator of a namespaced kind r of example.com
// served in one version, v1, with schema openAPIV3, whose versioned and
// internal Go type is obj's.
func oneVersionKind(t testing.TB, r *builders.Resource, obj runtime.Object, openAPIV3 string) *Validator {
	t.Helper()
	scheme := runtime.NewScheme()
	gk := schema.GroupKind{Group: "example.com", Kind: r.Kind}
	scheme.AddKnownTypeWithName(gk.WithVersion("v1"), obj)
	scheme.AddKnownTypeWithName(gk.WithVersion(runtime.APIVersionInternal), obj.DeepCopyObject())
	r.Namespaced, r.Versions, r.StorageVersion = true, []string{"v1"}, "v1"
	r.Schemas = map[string]builders.Schema{"v1": {OpenAPIV3: openAPIV3}}
	v, err := New(scheme, "example.com", r, nil)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
