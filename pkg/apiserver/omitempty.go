package apiserver

import (
	"reflect"
	"strings"
)

// dropEmptyStructs removes from u (the unstructured form of the Go object
// v) the struct fields tagged omitempty that hold their zero value, below
// the top level. JSON encoding writes a struct even with omitempty, so an
// optional struct a client left out would otherwise be validated (its
// required fields, enums, rules) and defaulted as an empty object, where
// kube-apiserver sees a custom resource without it. The object's own
// fields (spec, status) stay: an empty spec gets its defaults, as `spec: {}`
// does in a custom resource.
func dropEmptyStructs(u any, v reflect.Value) { dropEmpty(u, v, 0) }

func dropEmpty(u any, v reflect.Value, depth int) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		m, ok := u.(map[string]any)
		if !ok {
			return
		}
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			fv := v.Field(i)
			if f.Anonymous && name == "" {
				dropEmpty(m, fv, depth) // inlined: its fields are m's
				continue
			}
			if name == "" {
				name = f.Name
			}
			if depth > 0 && fv.Kind() == reflect.Struct && strings.Contains(","+opts+",", ",omitempty,") && fv.IsZero() {
				delete(m, name)
				continue
			}
			if sub, ok := m[name]; ok {
				dropEmpty(sub, fv, depth+1)
			}
		}
	case reflect.Slice, reflect.Array:
		l, ok := u.([]any)
		if !ok {
			return
		}
		for i := 0; i < v.Len() && i < len(l); i++ {
			dropEmpty(l[i], v.Index(i), depth+1)
		}
	case reflect.Map:
		m, ok := u.(map[string]any)
		if !ok || v.Type().Key().Kind() != reflect.String {
			return
		}
		iter := v.MapRange()
		for iter.Next() {
			if sub, ok := m[iter.Key().String()]; ok {
				dropEmpty(sub, iter.Value(), depth+1)
			}
		}
	}
}
