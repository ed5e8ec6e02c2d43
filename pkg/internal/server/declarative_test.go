package server

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/operation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

type dvGadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Count             int `json:"count"`
}

func (g *dvGadget) DeepCopyObject() runtime.Object { c := *g; return &c }

// TestDeclarativeValidation: a create runs the validation function
// registered for the request's version (as validation-gen registers it),
// with the hook's options; a hand-written error on the same field, of the
// same type, gives way to the declarative one; a kind without declarative
// validation gets none.
func TestDeclarativeValidation(t *testing.T) {
	gv := schema.GroupVersion{Group: "example.com", Version: "v1"}
	r := &builders.Resource{Kind: "dvGadget", Versions: []string{"v1"}}
	newScheme := func(register bool, seen *map[string]bool) *runtime.Scheme {
		scheme := runtime.NewScheme()
		scheme.AddKnownTypes(gv, &dvGadget{})
		scheme.AddKnownTypes(schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}, &dvGadget{})
		if register {
			scheme.AddValidationFunc(&dvGadget{}, func(ctx context.Context, op operation.Operation, obj, old interface{}) field.ErrorList {
				*seen = op.Options
				if g := obj.(*dvGadget); g.Count < 0 || g.Count > 10 {
					return field.ErrorList{field.Invalid(field.NewPath("count"), g.Count, "must be between 0 and 10").WithOrigin("maximum")}
				}
				return nil
			})
		}
		return scheme
	}
	// handWritten is what the schema and the Validate hooks found.
	handWritten := func(g *dvGadget) field.ErrorList {
		if g.Count < 0 {
			return field.ErrorList{field.Invalid(field.NewPath("count"), g.Count, "by hand: must be non-negative")}
		}
		return nil
	}
	ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{APIGroup: gv.Group, APIVersion: gv.Version, Resource: "gadgets"})

	var options map[string]bool
	d := newDeclarative(newScheme(true, &options), gv.Group, r, func(context.Context) map[string]bool { return map[string]bool{"Strict": true} })
	if d == nil {
		t.Fatal("a kind with a validation function has no declarative validation")
	}
	create := func(size int) field.ErrorList {
		g := &dvGadget{Count: size}
		return d.ValidateDeclaratively(ctx, g, nil, handWritten(g), operation.Create, d.DeclarativeValidationConfig(ctx, g, nil))
	}
	if errs := create(5); len(errs) != 0 {
		t.Errorf("valid: %v", errs)
	}
	if !options["Strict"] {
		t.Errorf("the validation function got options %v, want the hook's", options)
	}
	if errs := create(11); len(errs) != 1 || errs[0].Detail != "must be between 0 and 10" {
		t.Errorf("over the maximum: want the declarative error, got %v", errs)
	}
	if errs := create(-1); len(errs) != 1 || errs[0].Detail != "must be between 0 and 10" {
		t.Errorf("negative: want one error, the declarative one, got %v", errs)
	}
	if d := newDeclarative(newScheme(false, nil), gv.Group, r, nil); d != nil {
		t.Errorf("a kind without validation functions has declarative validation")
	}
}
