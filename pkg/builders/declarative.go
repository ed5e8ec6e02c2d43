package builders

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"
)

// declarative is a kind's declarative validation: the functions
// validation-gen generates from the +k8s: tags of its versions
// (zz_generated.validations.go), registered with the scheme.
type declarative struct {
	scheme   *runtime.Scheme
	versions []string
	// options are the DeclarativeValidationOptions hook: the options the
	// tags' +k8s:ifEnabled / +k8s:ifDisabled name; nil without.
	options func(context.Context) map[string]bool

	once sync.Once
	any  bool // some version of the kind has declarative validation
}

// enabled reports whether some version of the kind has declarative
// validation: without, a request is not converted for it.
func (d *declarative) enabled(obj runtime.Object) bool {
	d.once.Do(func() {
		kinds, _, err := d.scheme.ObjectKinds(obj)
		if err != nil || len(kinds) == 0 {
			return
		}
		for _, v := range d.versions {
			gvk := kinds[0].GroupKind().WithVersion(v)
			if versioned, err := d.scheme.New(gvk); err == nil && d.scheme.HasValidationFunc(versioned) {
				d.any = true
			}
		}
	})
	return d.any
}

// ValidateDeclaratively runs the kind's declarative validation on the
// object in the request's version, as kube-apiserver runs it for built-in
// kinds (rest.DeclarativeValidation): tags without a lifecycle prefix are
// enforced, +k8s:beta ones with the DeclarativeValidationBeta feature gate,
// +k8s:alpha ones are only compared; on update, values left unchanged are
// not validated again (the generated code's ratcheting). An error of the
// schema or of the Validate hooks on the same field, of the same type, as
// an enforced declarative error is dropped: the schema carries the +k8s:
// markers controller-tools knows too (k8s:minimum, k8s:maxItems, ...), and
// one violation is one error.
func (s *Strategy) ValidateDeclaratively(ctx context.Context, obj, oldObj runtime.Object, errs field.ErrorList, op operation.Type, config rest.DeclarativeValidationConfig) field.ErrorList {
	if !s.declarative.enabled(obj) {
		return errs
	}
	all := rest.ValidateDeclarativelyWithMigrationChecks(ctx, s.declarative.scheme, obj, oldObj, errs, op, config)
	type key struct {
		t     field.ErrorType
		field string
	}
	declared := map[key]bool{}
	for _, e := range all {
		if !e.FromImperative {
			declared[key{e.Type, e.Field}] = true
		}
	}
	out := make(field.ErrorList, 0, len(all))
	for _, e := range all {
		if e.FromImperative && declared[key{e.Type, e.Field}] {
			continue
		}
		e.FromImperative = false
		out = append(out, e)
	}
	return out
}

// DeclarativeValidationConfig gives the declarative validation the options
// of the DeclarativeValidationOptions hook.
func (s *Strategy) DeclarativeValidationConfig(ctx context.Context, obj, oldObj runtime.Object) rest.DeclarativeValidationConfig {
	if s.declarative.options == nil {
		return rest.DeclarativeValidationConfig{}
	}
	return rest.DeclarativeValidationConfig{Options: s.declarative.options(ctx)}
}

var _ rest.DeclarativeValidationStrategy = &Strategy{}
