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

// schemaDefaults holds, by versioned Go type, the schemas applySchemaDefaults
// applies; New fills it, at start-up.
var schemaDefaults sync.Map // reflect.Type -> typeSchema

// typeSchema is what applySchemaDefaults does to the objects of a Go type.
type typeSchema struct {
	s *structuralschema.Structural
	// prune: the schema is a CRD manifest's, whose undeclared fields are
	// pruned (prune.go); defaults: it declares defaults.
	prune, defaults bool
}

// registerSchemaDefaults makes applySchemaDefaults apply s to objects of
// obj's type: its defaults, when s declares any, and with manifest (the
// schema is a CRD manifest's) its pruning. A type with neither is no longer
// registered (a server started again with other schemas).
func registerSchemaDefaults(obj runtime.Object, s *structuralschema.Structural, manifest bool) error {
	t := reflect.TypeOf(obj)
	defaults := hasDefaults(s)
	if !defaults && !manifest {
		schemaDefaults.Delete(t)
		return nil
	}
	s = s.DeepCopy()
	// As kube-apiserver does: fields a default sets that the schema does not
	// know are dropped from the default.
	if err := structuraldefaulting.PruneDefaults(s); err != nil {
		return err
	}
	schemaDefaults.Store(t, typeSchema{s: s, prune: manifest, defaults: defaults})
	return nil
}

func init() { strategy.SetSchemaDefaulter(applySchemaDefaults) }

// applySchemaDefaults applies the defaults of a kind's schema
// (+kubebuilder:default and +default markers, or its manifest's) to a
// versioned object, as kube-apiserver applies a CRD's: to every field the
// object's encoding leaves out, each time it is decoded, from a request or
// from etcd (builders.ApplySchemaDefaults). When the schema is a CRD
// manifest's, the fields it does not declare are pruned first, as
// kube-apiserver prunes a custom resource when it decodes one (prune.go):
// the object is decoded again into a zeroed object, so that a field the Go
// type has and the manifest leaves out is gone from it.
//
// A spec or status that is the Go zero value is absent (jsoncontent.Absent):
// only a default of its own is given to it, as kube-apiserver defaults a
// custom resource without one. One a client sent is defaulted inside by
// DefaultAbsent (defaultSent).
func applySchemaDefaults(obj runtime.Object) { defaultObject(obj, nil) }

// defaultObject is applySchemaDefaults, with the top-level fields of sent
// (spec, status) defaulted inside even when they hold the zero value.
func defaultObject(obj runtime.Object, sent map[string]bool) {
	e, ok := schemaDefaults.Load(reflect.TypeOf(obj))
	if !ok {
		return
	}
	ts := e.(typeSchema)
	u, err := jsoncontent.ToMap(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	if ts.prune {
		// Read from storage too: an embedded resource's metadata field of
		// the wrong type is dropped, as kube-apiserver drops it there.
		if _, err := pruneUnknown(u, ts.s, true); err != nil {
			utilruntime.HandleError(err)
		}
	}
	for _, k := range jsoncontent.AbsentFields {
		if !sent[k] && jsoncontent.Absent(obj, k) {
			delete(u, k)
		}
	}
	dropEmptyStructs(u, reflect.ValueOf(obj))
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u, ts.s)
	if ts.defaults {
		structuraldefaulting.Default(u, ts.s)
	}
	fromMap := jsoncontent.FromMap
	if ts.prune {
		fromMap = fromMapZeroed
	}
	if err := fromMap(u, obj); err != nil {
		utilruntime.HandleError(err)
	}
}

// fromMapZeroed sets obj to the content of u, starting from its zero value:
// a field u lacks is not kept from obj.
func fromMapZeroed(u map[string]any, obj runtime.Object) error {
	fresh := reflect.New(reflect.TypeOf(obj).Elem())
	if err := jsoncontent.FromMap(u, fresh.Interface().(runtime.Object)); err != nil {
		return err
	}
	reflect.ValueOf(obj).Elem().Set(fresh.Elem())
	return nil
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
