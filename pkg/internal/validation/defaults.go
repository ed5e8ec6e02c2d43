package validation

import (
	"reflect"
	"sync"

	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/strategy"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

// schemaDefaults holds, by versioned Go type, the schemas whose defaults
// applySchemaDefaults applies; New fills it, at start-up.
var schemaDefaults sync.Map // reflect.Type -> *structuralschema.Structural

// registerSchemaDefaults makes applySchemaDefaults apply s to objects of
// obj's type, when s declares any default.
func registerSchemaDefaults(obj runtime.Object, s *structuralschema.Structural) error {
	if !hasDefaults(s) {
		return nil
	}
	s = s.DeepCopy()
	// As kube-apiserver does: fields a default sets that the schema does not
	// know are dropped from the default.
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return err
	}
	schemaDefaults.Store(reflect.TypeOf(obj), s)
	return nil
}

func init() { strategy.SetSchemaDefaulter(applySchemaDefaults) }

// applySchemaDefaults applies the defaults of a kind's schema
// (+kubebuilder:default and +default markers) to a versioned object, as
// kube-apiserver applies a CRD's: to every field the object's encoding leaves
// out, each time it is decoded, from a request or from etcd
// (builders.ApplySchemaDefaults).
func applySchemaDefaults(obj runtime.Object) {
	s, ok := schemaDefaults.Load(reflect.TypeOf(obj))
	if !ok {
		return
	}
	u, err := jsoncontent.ToMap(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	dropEmptyStructs(u, reflect.ValueOf(obj))
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, s.(*structuralschema.Structural))
	structuraldefaulting.Default(u, s.(*structuralschema.Structural))
	if err := jsoncontent.FromMap(u, obj); err != nil {
		utilruntime.HandleError(err)
	}
}

// hasDefaults tells whether a schema declares a default anywhere.
func hasDefaults(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.Default.Object != nil {
		return true
	}
	for _, p := range s.Properties {
		if hasDefaults(&p) {
			return true
		}
	}
	if s.Items != nil && hasDefaults(s.Items) {
		return true
	}
	return s.AdditionalProperties != nil && hasDefaults(s.AdditionalProperties.Structural)
}
