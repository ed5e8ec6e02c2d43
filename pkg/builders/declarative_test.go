package builders

import (
	"context"
	"testing"

	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
)

// optionHooks validates sizes below zero by hand, and gives the
// declarative validation the option "Strict".
type optionHooks struct{ DefaultStrategy }

func (optionHooks) Validate(ctx context.Context, w *widget) field.ErrorList {
	if w.Spec.Size < 0 {
		return field.ErrorList{field.Invalid(field.NewPath("spec", "size"), w.Spec.Size, "by hand: must be non-negative")}
	}
	return nil
}

func (optionHooks) DeclarativeValidationOptions(context.Context) map[string]bool {
	return map[string]bool{"Strict": true}
}

// TestDeclarativeValidation: a create runs the validation function
// registered for the request's version (as validation-gen registers it),
// with the hook's options; a hand-written error on the same field, of the
// same type, gives way to the declarative one; a kind without declarative
// validation is left as it is.
func TestDeclarativeValidation(t *testing.T) {
	gv := schema.GroupVersion{Group: schemaGR.Group, Version: "v1"}
	newScheme := func(register bool, seen *map[string]bool) *runtime.Scheme {
		scheme := runtime.NewScheme()
		scheme.AddKnownTypes(gv, &widget{})
		scheme.AddKnownTypes(schema.GroupVersion{Group: gv.Group, Version: runtime.APIVersionInternal}, &widget{})
		if register {
			scheme.AddValidationFunc(&widget{}, func(ctx context.Context, op operation.Operation, obj, old interface{}) field.ErrorList {
				*seen = op.Options
				if w := obj.(*widget); w.Spec.Size < 0 || w.Spec.Size > 10 {
					return field.ErrorList{field.Invalid(field.NewPath("spec", "size"), w.Spec.Size, "must be between 0 and 10").WithOrigin("maximum")}
				}
				return nil
			})
		}
		return scheme
	}
	ctx := genericapirequest.WithRequestInfo(context.Background(), &genericapirequest.RequestInfo{APIGroup: gv.Group, APIVersion: gv.Version, Resource: schemaGR.Resource})
	create := func(s *Strategy, size int) field.ErrorList {
		w := &widget{Spec: widgetSpec{Size: size}}
		return s.ValidateDeclaratively(ctx, w, nil, s.Validate(ctx, w), operation.Create, s.DeclarativeValidationConfig(ctx, w, nil))
	}

	var options map[string]bool
	s, err := newStrategy[*widget](newScheme(true, &options), schemaGR, true, true, []string{"v1"}, optionHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if errs := create(s, 5); len(errs) != 0 {
		t.Errorf("valid: %v", errs)
	}
	if !options["Strict"] {
		t.Errorf("the validation function got options %v, want the hook's", options)
	}
	if errs := create(s, 11); len(errs) != 1 || errs[0].Detail != "must be between 0 and 10" {
		t.Errorf("over the maximum: want the declarative error only, got %v", errs)
	}
	if errs := create(s, -1); len(errs) != 1 || errs[0].Detail != "must be between 0 and 10" || errs[0].FromImperative {
		t.Errorf("negative: want one error, the declarative one, got %v", errs)
	}

	// Without a validation function: the hand-written errors as they are.
	s, err = newStrategy[*widget](newScheme(false, nil), schemaGR, true, true, []string{"v1"}, optionHooks{})
	if err != nil {
		t.Fatal(err)
	}
	if errs := create(s, -1); len(errs) != 1 || errs[0].Detail != "by hand: must be non-negative" {
		t.Errorf("no declarative validation: got %v", errs)
	}
	if errs := create(s, 11); len(errs) != 0 {
		t.Errorf("no declarative validation: got %v", errs)
	}
}
