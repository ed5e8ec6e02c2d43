package strategy

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// SchemaValidation validates the objects of a kind against its schemas; the
// apiserver provides it (kube-apiserver's custom resource validation), so
// that this package, which API types import through pkg/builders, stays
// light.
type SchemaValidation interface {
	Validate(ctx context.Context, obj runtime.Object) field.ErrorList
	ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
	ValidateStatusUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList
}

// SetSchemaValidation makes s validate objects with v before the hooks.
func (s *Strategy) SetSchemaValidation(v SchemaValidation) { s.schema = v }

var schemaDefaulter atomic.Pointer[func(runtime.Object)]

// SetSchemaDefaulter installs what ApplySchemaDefaults calls: the apiserver
// applies each kind's schema defaults with it.
func SetSchemaDefaulter(f func(runtime.Object)) { schemaDefaulter.Store(&f) }

// ApplySchemaDefaults calls the function SetSchemaDefaulter installed, if
// any (builders.ApplySchemaDefaults, which generated defaulters call).
func ApplySchemaDefaults(obj runtime.Object) {
	if f := schemaDefaulter.Load(); f != nil {
		(*f)(obj)
	}
}
