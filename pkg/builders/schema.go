package builders

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Schema is the OpenAPI v3 schema of a kind in one version, as
// controller-gen would write it in a CustomResourceDefinition (generated
// from the types and their markers).
type Schema struct {
	// Model is the OpenAPI definition openapi-gen names the kind's type.
	Model string
	// OpenAPIV3 is the schema, JSON of an apiextensions/v1 JSONSchemaProps.
	OpenAPIV3 string
}

// SchemaValidation validates the objects of a kind against its schemas; the
// apiserver provides it (kube-apiserver's custom resource validation), so
// that this package, which API types import, stays light.
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

// ApplySchemaDefaults applies the defaults of the object's schema
// (+kubebuilder:default and +default markers), as kube-apiserver applies a
// CRD's, when running in the apiserver; elsewhere (clients) it does nothing.
// The generated SetDefaults_<Kind> calls it on every decode, from a request
// or from etcd, before the DefaultingFunction hook.
func ApplySchemaDefaults(obj runtime.Object) {
	if f := schemaDefaulter.Load(); f != nil {
		(*f)(obj)
	}
}
