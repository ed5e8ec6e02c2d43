package builders

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/request"
)

// widgetSchema is what controller-gen writes for widget with
// +kubebuilder:validation:Maximum=10 on size and two CEL rules on spec, one
// of them a transition rule.
const widgetSchema = `{"type":"object","properties":{
  "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
  "spec":{"type":"object","properties":{"size":{"type":"integer","maximum":10}},
    "x-kubernetes-validations":[
      {"rule":"self.size % 2 == 0","message":"size must be even"},
      {"rule":"self.size >= oldSelf.size","message":"size may not shrink","reason":"FieldValueForbidden"}]},
  "status":{"type":"object","properties":{"ready":{"type":"boolean"}}}}}`

func widgetValidation(t *testing.T) (*crValidation, context.Context) {
	t.Helper()
	scheme := runtime.NewScheme()
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	scheme.AddKnownTypeWithName(gv.WithKind("Widget"), &widget{})
	scheme.AddKnownTypeWithName(schema.GroupVersion{Group: "example.com", Version: runtime.APIVersionInternal}.WithKind("Widget"), &widget{})
	v, err := newCRValidation(scheme, schema.GroupKind{Group: "example.com", Kind: "Widget"}, true, true, nil, "v1", map[string]Schema{"v1": {OpenAPIV3: widgetSchema}})
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
	if errs := v.validate(ctx, newWidget("ok", 4)); len(errs) != 0 {
		t.Errorf("a valid widget: %v", errs.ToAggregate())
	}
	got := errorText(v.validate(ctx, newWidget("Bad_Name", 15)).ToAggregate().Errors())
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
	if errs := v.validateUpdate(ctx, relabelled, stored, false); len(errs) != 0 {
		t.Errorf("an unchanged invalid size must not be re-rejected: %v", errs.ToAggregate())
	}
	if errs := v.validateUpdate(ctx, newWidget("w", 13), stored, false); !strings.Contains(errorText(errs.ToAggregate().Errors()), "should be less than or equal to 10") {
		t.Errorf("a changed invalid size: want the maximum error, got %v", errs.ToAggregate())
	}
	if errs := v.validateUpdate(ctx, newWidget("w", 2), newWidget("w", 4), false); !strings.Contains(errorText(errs.ToAggregate().Errors()), "spec: Forbidden: size may not shrink") {
		t.Errorf("transition rule: want %q, got %v", "size may not shrink", errs.ToAggregate())
	}
}
