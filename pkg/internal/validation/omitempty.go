package validation

import (
	"encoding/json"
	"reflect"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
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
			jf, ok := jsonFieldOf(t.Field(i))
			if !ok {
				continue
			}
			name, fv := jf.name, v.Field(i)
			if jf.inline {
				dropEmpty(m, fv, depth) // inlined: its fields are m's
				continue
			}
			if depth > 0 && fv.Kind() == reflect.Struct && jf.omitEmpty && fv.IsZero() {
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

var jsonMarshaler = reflect.TypeOf((*json.Marshaler)(nil)).Elem()

// absentFields tells whether objects of Go type t, with schema s, have
// fields whose absence their JSON encoding hides: a field without omitempty
// or omitzero that is not a pointer, map, slice or interface is written as
// its zero value when the client left it out. required: the schema requires
// such a field; defaults: it defaults one. The object's metadata is not
// looked at.
func absentFields(t reflect.Type, s *structuralschema.Structural) (required, defaults bool) {
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, s *structuralschema.Structural, top bool)
	walk = func(t reflect.Type, s *structuralschema.Structural, top bool) {
		t = deref(t)
		if t == nil || s == nil {
			return
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			walk(t.Elem(), s.Items, false)
			return
		case reflect.Map:
			if s.AdditionalProperties != nil {
				walk(t.Elem(), s.AdditionalProperties.Structural, false)
			}
			return
		case reflect.Struct:
		default:
			return
		}
		if seen[t] || reflect.PointerTo(t).Implements(jsonMarshaler) || t.Implements(jsonMarshaler) {
			return
		}
		seen[t] = true
		defer delete(seen, t)
		var req []string
		if s.ValueValidation != nil {
			req = s.ValueValidation.Required
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			jf, ok := jsonFieldOf(f)
			if !ok {
				continue
			}
			name := jf.name
			if jf.inline {
				walk(f.Type, s, top)
				continue
			}
			if top && (name == "metadata" || name == "apiVersion" || name == "kind") {
				continue
			}
			p, ok := s.Properties[name]
			if !ok {
				continue
			}
			written := !jf.omitEmpty && !jf.omitZero
			switch f.Type.Kind() {
			case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
				written = false
			}
			if written && (f.Type.Kind() != reflect.Struct || !reflect.PointerTo(f.Type).Implements(jsonMarshaler)) {
				defaults = defaults || p.Default.Object != nil
				for _, r := range req {
					required = required || r == name
				}
			}
			walk(f.Type, &p, false)
		}
	}
	walk(t, s, true)
	return required, defaults
}

// nullable tells whether a schema allows null anywhere.
func nullable(s *structuralschema.Structural) bool {
	if s == nil {
		return false
	}
	if s.Nullable {
		return true
	}
	for _, p := range s.Properties {
		if nullable(&p) {
			return true
		}
	}
	return s.Items != nil && nullable(s.Items) || s.AdditionalProperties != nil && nullable(s.AdditionalProperties.Structural)
}

// jsonField is how encoding/json treats a struct field.
type jsonField struct {
	name                string // the field's name in JSON
	inline              bool   // an embedded struct without a name: its fields are the parent's
	omitEmpty, omitZero bool
}

// jsonFieldOf reads an exported field's json tag; ok is false for a field
// encoding/json leaves out (unexported, or tagged "-").
func jsonFieldOf(f reflect.StructField) (jsonField, bool) {
	name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !f.IsExported() || name == "-" {
		return jsonField{}, false
	}
	o := "," + opts + ","
	jf := jsonField{name: name, inline: f.Anonymous && name == "", omitEmpty: strings.Contains(o, ",omitempty,"), omitZero: strings.Contains(o, ",omitzero,")}
	if jf.name == "" {
		jf.name = f.Name
	}
	return jf, true
}
