package validation

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// dropEmptyStructs removes from u (the unstructured form of the Go object
// v) the struct fields tagged omitempty that hold their zero value, below
// the top level. Also those of a type whose own JSON form writes its zero
// value as a value (ownZero: metav1.Duration's "0s"): the stored object
// cannot tell that value sent from the field left out, or from a field added
// to the type after the object was stored, which must read as its default. JSON encoding writes a struct even with omitempty, so an
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
// its zero value when the client left it out, also one of a type whose own
// JSON form writes its zero value as a value (ownZero). required: the schema requires
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
			case reflect.Struct:
				if reflect.PointerTo(f.Type).Implements(jsonMarshaler) {
					// Written in its own form: absent when that form is
					// a value (a duration's "Never"); with omitempty,
					// decoding takes its zero value for absent.
					_, own := ownZero(f.Type)
					written = written && own
				}
			}
			if written {
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

// ownZeros caches ownZero by type.
var ownZeros sync.Map // reflect.Type -> ownZeroForm

type ownZeroForm struct {
	v  any
	ok bool
}

// ownZero is, for a type that is not a pointer and has its own JSON
// encoding (MarshalJSON), the JSON value its zero value is written as, when
// that is a value a client could send: not null, nor one omitempty leaves
// out. metav1.Duration writes "0s", resource.Quantity "0", a duration that
// may be Never often "Never"; metav1.Time writes null. Decoding cannot tell
// that value sent from the field left out: on a write, the request's form
// decides (restorer).
func ownZero(t reflect.Type) (any, bool) {
	if t.Kind() == reflect.Pointer || t.Kind() == reflect.Interface || !reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil, false
	}
	if f, ok := ownZeros.Load(t); ok {
		return f.(ownZeroForm).v, f.(ownZeroForm).ok
	}
	var f ownZeroForm
	if b, err := json.Marshal(reflect.New(t).Interface()); err == nil && utiljson.Unmarshal(b, &f.v) == nil {
		f.ok = f.v != nil && !dropped(f.v)
	}
	if !f.ok {
		f.v = nil
	}
	ownZeros.Store(t, f)
	return f.v, f.ok
}

// zeroForms says where, within the objects of a Go type, a field is written
// as its type's own zero form (ownZero) when it holds its zero value: by
// JSON field name, or for every value of a map.
type zeroForms struct {
	fields map[string]*zeroField
	values *zeroField
}

// zeroField is one field of zeroForms: its own zero form, or the zero forms
// within it (a struct's fields, a list's items, a map's values).
type zeroField struct {
	zero any
	has  bool
	in   *zeroForms
}

// zeroFormsOf is the zeroForms of objects of type t, nil when none of its
// fields is written in its type's own zero form.
func zeroFormsOf(t reflect.Type) *zeroForms { return zeroFormsWalk(t, map[reflect.Type]bool{}) }

func zeroFormsWalk(t reflect.Type, seen map[reflect.Type]bool) *zeroForms {
	t = deref(t)
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return zeroFormsWalk(t.Elem(), seen) // the items are walked as objects
	case reflect.Map:
		if f := zeroFieldOf(t.Elem(), jsonField{}, seen); f != nil {
			return &zeroForms{values: f}
		}
		return nil
	case reflect.Struct:
	default:
		return nil
	}
	if seen[t] || reflect.PointerTo(t).Implements(jsonMarshaler) {
		return nil
	}
	seen[t] = true
	defer delete(seen, t)
	z := &zeroForms{fields: map[string]*zeroField{}}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := 0; i < t.NumField(); i++ {
			jf, ok := jsonFieldOf(t.Field(i))
			if !ok {
				continue
			}
			if jf.inline {
				if it := deref(t.Field(i).Type); it.Kind() == reflect.Struct && !seen[it] {
					add(it) // its fields are this object's
				}
				continue
			}
			if f := zeroFieldOf(t.Field(i).Type, jf, seen); f != nil {
				z.fields[jf.name] = f
			}
		}
	}
	add(t)
	if len(z.fields) == 0 {
		return nil
	}
	return z
}

// zeroFieldOf is the zeroField of a field of type t tagged jf, nil when
// nothing in it is written in its own zero form.
func zeroFieldOf(t reflect.Type, jf jsonField, seen map[reflect.Type]bool) *zeroField {
	if v, ok := ownZero(t); ok && !jf.omitZero && (t.Kind() == reflect.Struct || !jf.omitEmpty) {
		return &zeroField{zero: v, has: true}
	}
	if in := zeroFormsWalk(t, seen); in != nil {
		return &zeroField{in: in}
	}
	return nil
}

// at is the zeroField of field (or map key) k.
func (z *zeroForms) at(k string) *zeroField {
	if z == nil {
		return nil
	}
	if f, ok := z.fields[k]; ok {
		return f
	}
	return z.values
}

// within is the zero forms inside the field.
func (f *zeroField) within() *zeroForms {
	if f == nil {
		return nil
	}
	return f.in
}

// isZero tells whether v is the field's own zero form.
func (f *zeroField) isZero(v any) bool {
	return f != nil && f.has && reflect.DeepEqual(v, f.zero)
}
