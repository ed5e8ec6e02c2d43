package builders

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiserver-boot/apiserver-boot/pkg/internal/strategy"
)

// Schema is the OpenAPI v3 schema of a kind in one version, as
// controller-gen would write it in a CustomResourceDefinition (generated
// from the types and their markers), or as the project's own manifest of
// that CustomResourceDefinition declares it.
type Schema struct {
	// Model is the OpenAPI definition openapi-gen names the kind's type.
	Model string
	// OpenAPIV3 is the schema, JSON of an apiextensions/v1 JSONSchemaProps.
	OpenAPIV3 string
	// Manifest is the project-relative path of the CustomResourceDefinition
	// manifest the schema was read from (config/crd/bases/<group>_<plural>.yaml),
	// empty when it was derived from the types and their markers. A kind's
	// manifest is its contract: fields it does not declare are pruned, as
	// kube-apiserver prunes them for that CRD, also where the Go type has them.
	Manifest string
}

// ApplySchemaDefaults applies the defaults of the object's schema
// (+kubebuilder:default and +default markers), as kube-apiserver applies a
// CRD's, when running in the apiserver; elsewhere (clients) it does nothing.
// The generated SetDefaults_<Kind> calls it on every decode, from a request
// or from etcd, before the DefaultingFunction hook.
func ApplySchemaDefaults(obj runtime.Object) { strategy.ApplySchemaDefaults(obj) }
