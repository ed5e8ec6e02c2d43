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
// Go zero value for absent (Absent): it is not defaulted inside when read,
// not answered, and its printer columns show nothing, as a CRD's.

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

// Absent tells whether obj (a pointer to a struct, of any version) has a
// top-level struct field written as name (spec, status) that holds its
// zero value.
func Absent(obj runtime.Object, name string) bool {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	index := TopField(v.Elem().Type(), name)
	return index != nil && v.Elem().FieldByIndex(index).IsZero()
}
