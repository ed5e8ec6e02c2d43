package server

import (
	"context"

	"k8s.io/apimachinery/pkg/api/operation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/strategy"
)

// declarative is a kind's declarative validation: the functions
// validation-gen generates from the +k8s: tags of its versions
// (zz_generated.validations.go), registered with the scheme. It is nil for
// a kind without: its requests are not converted for it.
type declarative struct {
	scheme  *runtime.Scheme
	options func(context.Context) map[string]bool
}

// newDeclarative returns the declarative validation of r, or nil when no
// version of r has any.
func newDeclarative(scheme *runtime.Scheme, group string, r *builders.Resource, options func(context.Context) map[string]bool) *declarative {
	for _, v := range r.Versions {
		if obj, err := scheme.New(schema.GroupVersionKind{Group: group, Version: v, Kind: r.Kind}); err == nil && scheme.HasValidationFunc(obj) {
			return &declarative{scheme: scheme, options: options}
		}
	}
	return nil
}

// ValidateDeclaratively runs the kind's declarative validation on the
// object in the request's version, as kube-apiserver runs it for built-in
// kinds (rest.DeclarativeValidation): tags without a lifecycle prefix are
// enforced, +k8s:beta ones too (the DeclarativeValidationBeta gate, on by default),
// +k8s:alpha ones are only compared; on update, values left unchanged are
// not validated again (the generated code's ratcheting). An error of the
// schema or of the Validate hooks on the same field, of the same type, as
// an enforced declarative error is dropped: the schema carries the +k8s:
// markers controller-tools knows too (k8s:minimum, k8s:maxItems, ...), and
// one violation is one error.
func (d *declarative) ValidateDeclaratively(ctx context.Context, obj, oldObj runtime.Object, errs field.ErrorList, op operation.Type, config rest.DeclarativeValidationConfig) field.ErrorList {
	all := rest.ValidateDeclarativelyWithMigrationChecks(ctx, d.scheme, obj, oldObj, errs, op, config)
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
		out = append(out, e)
	}
	return out
}

// DeclarativeValidationConfig gives the declarative validation the options
// of the DeclarativeValidationOptions hook.
func (d *declarative) DeclarativeValidationConfig(ctx context.Context, obj, oldObj runtime.Object) rest.DeclarativeValidationConfig {
	if d.options == nil {
		return rest.DeclarativeValidationConfig{}
	}
	return rest.DeclarativeValidationConfig{Options: d.options(ctx)}
}

// VersionsForGroupKind are the kind's versions in priority order: with it
// the strategy tells the registry's test tooling (generic/testing.Tester,
// the conformance tests) which version a request without RequestInfo
// stands for, as declarative validation needs one.
func (d *declarative) VersionsForGroupKind(gk schema.GroupKind) []schema.GroupVersion {
	return d.scheme.VersionsForGroupKind(gk)
}

// declarativeStrategy is a kind's strategy with its declarative validation.
type declarativeStrategy struct {
	*strategy.Strategy
	*declarative
}

// declarativeStatusStrategy is the /status strategy with the kind's
// declarative validation (of /status, which the generated code validates
// as the main resource).
type declarativeStatusStrategy struct {
	*strategy.StatusStrategy
	*declarative
}

var (
	_ rest.DeclarativeValidationStrategy = declarativeStrategy{}
	_ rest.RESTUpdateStrategy            = declarativeStatusStrategy{}
)
