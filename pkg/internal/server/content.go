package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"sigs.k8s.io/structured-merge-diff/v6/value"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// What validation, CEL rules, schema defaults, printer columns, selectable
// fields and /scale read of an object is its content as JSON: what a client
// reads, what a CRD stores and kube-apiserver validates. apimachinery's
// unstructured converter reads Go values by reflection and trusts a type's
// ToUnstructured method; a type with its own JSON encoding (a duration
// keeping the bytes it was read from, say) may answer there with a Go value
// ([]byte) that is not its JSON, and the internal copy of such a type has
// none of its methods at all (an embedded *time.Duration then makes the
// converter panic). So objects whose types encode themselves go through
// encoding/json, in a version whose types carry their methods; the others
// keep the converter, which gives the same content faster.

var (
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	converterType   = reflect.TypeFor[value.UnstructuredConverter]()
	encodesItselfBy sync.Map // reflect.Type -> bool
)

// encodesItself reports whether values of t reach a type with its own JSON
// encoding (MarshalJSON, or ToUnstructured) other than Kubernetes' and the
// standard library's, or an embedded field that is not a struct (which JSON
// writes as a field of its type's name, and the converter cannot inline).
func encodesItself(t reflect.Type) bool {
	if v, ok := encodesItselfBy.Load(t); ok {
		return v.(bool)
	}
	r := reachesOwnEncoding(t, map[reflect.Type]bool{})
	encodesItselfBy.Store(t, r)
	return r
}

func reachesOwnEncoding(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	pt := reflect.PointerTo(t)
	if t.Implements(marshalerType) || pt.Implements(marshalerType) || t.Implements(converterType) || pt.Implements(converterType) {
		if t.Kind() == reflect.Pointer {
			return reachesOwnEncoding(t.Elem(), seen)
		}
		return !trustedEncoding(t.PkgPath())
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return reachesOwnEncoding(t.Elem(), seen)
	case reflect.Map:
		return reachesOwnEncoding(t.Key(), seen) || reachesOwnEncoding(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() != reflect.Struct {
					return true
				}
			}
			if reachesOwnEncoding(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// trustedEncoding: Kubernetes' types (metav1.Time, resource.Quantity,
// intstr.IntOrString...) and the standard library's (time.Time) convert to
// their JSON.
func trustedEncoding(pkg string) bool {
	first, _, _ := strings.Cut(pkg, "/")
	return strings.HasPrefix(pkg, "k8s.io/") || !strings.Contains(first, ".")
}

// toContent returns the content of obj, a versioned object, as its JSON
// encoding has it (integers as int64, as in a custom resource).
func toContent(obj runtime.Object) (map[string]any, error) {
	if !encodesItself(reflect.TypeOf(obj)) {
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := utiljson.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// fromContent sets obj, a versioned object, to content m, as decoding m's
// JSON does.
func fromContent(m map[string]any, obj runtime.Object) error {
	if !encodesItself(reflect.TypeOf(obj)) {
		return runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	// Decoded into a fresh object first: one the type's UnmarshalJSON
	// refuses leaves obj as it was.
	v := reflect.ValueOf(obj).Elem()
	fresh := reflect.New(v.Type())
	if err := json.Unmarshal(b, fresh.Interface()); err != nil {
		return err
	}
	v.Set(fresh.Elem())
	return nil
}

// kindContent reads and writes the content of a kind's internal objects
// (what the store holds) as their storage version's JSON has it, when the
// storage version's types encode themselves; otherwise directly, as the
// internal types have the same JSON.
type kindContent struct {
	scheme *runtime.Scheme
	gvk    schema.GroupVersionKind // the storage version, when its types encode themselves
}

func newKindContent(scheme *runtime.Scheme, group string, r *builders.Resource) kindContent {
	gvk := schema.GroupVersionKind{Group: group, Version: r.StorageVersion, Kind: r.Kind}
	if obj, err := scheme.New(gvk); err == nil && encodesItself(reflect.TypeOf(obj)) {
		return kindContent{scheme: scheme, gvk: gvk}
	}
	return kindContent{}
}

func (k kindContent) toMap(obj runtime.Object) (_ map[string]any, err error) {
	defer conversionPanic(&err, "reading", obj)
	if k.scheme == nil {
		return runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	}
	out, err := k.scheme.ConvertToVersion(obj, k.gvk.GroupVersion())
	if err != nil {
		return nil, err
	}
	return toContent(out)
}

// fromMap sets into, an internal object, to content m.
func (k kindContent) fromMap(m map[string]any, into runtime.Object) (err error) {
	defer conversionPanic(&err, "writing", into)
	if k.scheme == nil {
		return runtime.DefaultUnstructuredConverter.FromUnstructured(m, into)
	}
	versioned, err := k.scheme.New(k.gvk)
	if err != nil {
		return err
	}
	if err := fromContent(m, versioned); err != nil {
		return err
	}
	return k.scheme.Convert(versioned, into, nil)
}

// conversionPanic turns a panic of a conversion into the conversion's error:
// a type the converter cannot handle fails its request (or, in the watch
// cache's attribute function, that object), never the process.
func conversionPanic(err *error, what string, obj runtime.Object) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%s the content of %T: %v (a type with its own JSON encoding the converter cannot handle?)", what, obj, r)
	}
}
