package jsoncontent

import (
	"reflect"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// A custom resource has a spec or a status only when one was sent (or
// defaulted as a whole): kube-apiserver creates one without spec when the
// client sends none, and without status when /status is served. The Go
// object always has both, and encoding/json writes them even when they are
// the zero value. So the server takes a top-level spec or status that is the
// Go zero value, and that the kind's schema does not require, for absent
// (Absent): it is not defaulted inside when read, not answered, and its
// printer columns show nothing, as a CRD's. One the schema requires is
// there on a CRD (a create without it is refused), so its zero value is an
// empty one.

// AbsentFields are the fields of an object taken for absent when they hold
// the Go zero value.
var AbsentFields = []string{"spec", "status"}

// topFields caches TopField by type and name.
var topFields sync.Map // topKey -> []int

type topKey struct {
	t    reflect.Type
	name string
}

// TopField is the index of the top-level struct field of struct type t
// written as name in JSON (inlined structs are looked into), or nil.
func TopField(t reflect.Type, name string) []int {
	key := topKey{t, name}
	if index, ok := topFields.Load(key); ok {
		return index.([]int)
	}
	index := topField(t, name)
	if index != nil && t.FieldByIndex(index).Type.Kind() != reflect.Struct {
		index = nil // a pointer or a map is absent when nil, as JSON has it
	}
	topFields.Store(key, index)
	return index
}

func topField(t reflect.Type, name string) []int {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() && !f.Anonymous || tag == "-":
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			if index := topField(f.Type, name); index != nil {
				return append([]int{i}, index...)
			}
		case tag == name || tag == "" && f.Name == name:
			return []int{i}
		}
	}
	return nil
}

// required holds the top-level fields a kind's schema requires, by Go type.
var required sync.Map // topKey -> true

// Require records whether the objects of Go type t (a pointer to a struct,
// or the struct) have a schema that requires their top-level field name: a
// zero one is then not absent but empty (`spec: {}`), as a CRD requiring a
// spec has one. Like the schemas, the record is the process's, and the last
// one given wins.
func Require(t reflect.Type, name string, req bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if req {
		required.Store(topKey{t, name}, true)
	} else {
		required.Delete(topKey{t, name})
	}
}

// Zero tells whether obj (a pointer to a struct) has a top-level struct
// field written as name that holds its zero value, required or not.
func Zero(obj runtime.Object, name string) bool {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	index := TopField(v.Elem().Type(), name)
	return index != nil && v.Elem().FieldByIndex(index).IsZero()
}

// Absent tells whether obj (a pointer to a struct, of any version) has a
// top-level struct field written as name (spec, status) that holds its
// zero value and that its schema does not require.
func Absent(obj runtime.Object, name string) bool {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return false
	}
	return AbsentIn(v.Elem(), name)
}

// AbsentIn is Absent of a struct value.
func AbsentIn(v reflect.Value, name string) bool {
	if v.Kind() != reflect.Struct {
		return false
	}
	t := v.Type()
	if _, ok := required.Load(topKey{t, name}); ok {
		return false
	}
	index := TopField(t, name)
	return index != nil && v.FieldByIndex(index).IsZero()
}
