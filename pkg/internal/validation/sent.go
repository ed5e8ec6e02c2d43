package validation

import (
	"encoding/json"
	"reflect"
	"strings"

	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/runtime"
	cbordirect "k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"sigs.k8s.io/yaml"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// sentShape is how a sent form relates to the validated object.
type sentShape int

const (
	sentNone   sentShape = iota
	sentObject           // the whole object, or values the result takes as they are (lists too)
	sentApply            // an applied configuration: maps, atomic lists, and map lists by key
)

func mediaType(ct string) string {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(mt))
}

// form parses the body of s as what the validated object holds; old is the
// stored object's encoding, for a patch; goType the object's Go struct type,
// for a strategic merge patch. A JSON body without a value the encoding
// drops is not parsed unless all is set (a kind with fields whose absence
// the encoding hides: absentFields).
func (s *Record) form(old func() ([]byte, error), goType reflect.Type, all bool) (map[string]any, sentShape) {
	if s.scale != nil {
		return s.scale, sentObject
	}
	if s.overflow || len(s.buf) == 0 {
		return nil, sentNone
	}
	var m map[string]any
	shape := sentObject
	switch mediaType(s.contentType) {
	case "application/json", "":
		if !all && !mayHoldZero(s.buf) {
			return nil, sentNone // nothing the encoding drops: the common case, kept cheap
		}
		if err := utiljson.Unmarshal(s.buf, &m); err != nil {
			return nil, sentNone
		}
	case "application/merge-patch+json":
		body := s.buf
		if old != nil {
			current, err := old()
			if err != nil {
				return nil, sentNone
			}
			if body, err = jsonpatch.MergePatch(current, s.buf); err != nil {
				return nil, sentNone
			}
		}
		if err := utiljson.Unmarshal(body, &m); err != nil {
			return nil, sentNone
		}
	case "application/yaml", "application/apply-patch+yaml":
		j, err := yaml.YAMLToJSON(s.buf)
		if err != nil || utiljson.Unmarshal(j, &m) != nil {
			return nil, sentNone
		}
		if mediaType(s.contentType) == "application/apply-patch+yaml" {
			shape = sentApply
		}
	case "application/strategic-merge-patch+json":
		// Applied to the stored object as the patch handler applies it,
		// by the patch strategies of the Go types (goType).
		if old == nil || goType == nil {
			return nil, sentNone
		}
		current, err := old()
		if err != nil {
			return nil, sentNone
		}
		patched, err := strategicpatch.StrategicMergePatch(current, s.buf, reflect.New(goType).Interface())
		if err != nil || utiljson.Unmarshal(patched, &m) != nil {
			return nil, sentNone
		}
	case "application/json-patch+json":
		if old == nil {
			return nil, sentNone
		}
		patch, err := jsonpatch.DecodePatch(s.buf)
		if err != nil {
			return nil, sentNone
		}
		current, err := old()
		if err != nil {
			return nil, sentNone
		}
		patched, err := patch.Apply(current)
		if err != nil || utiljson.Unmarshal(patched, &m) != nil {
			return nil, sentNone
		}
	case "application/cbor", "application/apply-patch+cbor":
		return cborForm(s.buf, mediaType(s.contentType))
	default: // protobuf
		return nil, sentNone
	}
	return m, shape
}

// cborForm parses a CBOR body (KEP-4222, with CBORServingAndStorage on),
// which holds what the JSON would: an object, or an applied configuration.
func cborForm(body []byte, mediaType string) (map[string]any, sentShape) {
	var m map[string]any
	if err := cbordirect.Unmarshal(body, &m); err != nil {
		return nil, sentNone
	}
	if mediaType == "application/apply-patch+cbor" {
		return m, sentApply
	}
	return m, sentObject
}

// restorer walks the encoding of the validated object (u) alongside the
// request's form of it (sent).
type restorer struct {
	shape sentShape
	// whole: the form is the whole object the client wrote (a create or an
	// update with a body, a merge or JSON patch applied to the stored
	// object, an apply to a missing object), so a field it lacks is absent,
	// where the encoding holds the zero value of a field without omitempty.
	whole bool
	// fill: only put the schema's default into fields the client left out
	// and the encoding holds as zero values (defaultAbsent, on the Go
	// object); nothing else is restored or removed.
	fill bool
}

// restoreSent puts into u (the object's encoding, in the version of the
// request) the values of sent (the request's form of it) that u lacks and
// that an omitempty encoding drops, each defaulted by its schema, for the
// top-level fields keep allows; with a whole form (or where an apply removed
// a field old, the stored object's encoding, held), a field the form lacks
// and u holds as a zero value, or in its type's own zero form (z), is
// absent: defaulted by its schema, or removed. It reports whether it
// changed u.
func restoreSent(u, sent map[string]any, shape sentShape, whole bool, old map[string]any, s *structuralschema.Structural, z *zeroForms, keep func(field string) bool) bool {
	return restorer{shape: shape, whole: whole}.top(u, sent, old, s, z, keep)
}

// fillDefaults puts the schema's defaults into the fields of u that the
// form lacks and u holds as zero values: the fields without omitempty that
// the client left out, and those written in their type's own zero form (z). It reports whether it changed u.
func fillDefaults(u, sent map[string]any, shape sentShape, whole bool, old map[string]any, s *structuralschema.Structural, z *zeroForms, keep func(field string) bool) bool {
	return restorer{shape: shape, whole: whole, fill: true}.top(u, sent, old, s, z, keep)
}

// top walks the object's top-level fields keep allows, but for apiVersion,
// kind and metadata; unknown fields of the form are not the object's, as
// kube-apiserver prunes them.
func (w restorer) top(u, sent, old map[string]any, s *structuralschema.Structural, z *zeroForms, keep func(field string) bool) bool {
	pruning.Prune(sent, s, true)
	return w.object(u, sent, old, s, z, func(k string) bool {
		return k != "apiVersion" && k != "kind" && k != "metadata" && keep(k)
	})
}

// object walks the fields of an object; old is the stored object's value
// there, on an update by apply; z the zero forms of its Go type's fields.
func (w restorer) object(u, sent, old map[string]any, s *structuralschema.Structural, z *zeroForms, keep func(string) bool) bool {
	changed := false
	for k, sv := range sent {
		if keep != nil && !keep(k) {
			continue
		}
		var ov any
		if old != nil {
			ov = old[k]
		}
		changed = w.value(u, k, sv, ov, property(s, k), z.at(k), keep != nil) || changed
	}
	if !w.whole && (w.shape != sentApply || old == nil) {
		return changed
	}
	for k, uv := range u {
		if _, ok := sent[k]; ok || keep != nil && !keep(k) || !dropped(uv) && !z.at(k).isZero(uv) {
			continue
		}
		if !w.whole {
			// An apply removes a field its manager applied before and
			// no longer applies: the stored object held a value.
			if ov, ok := old[k]; !ok || ov == nil || dropped(ov) {
				continue
			}
		}
		changed = w.absent(u, k, property(s, k)) || changed
	}
	return changed
}

// absent makes field k of u, which the client left out and the encoding
// holds as a zero value (or its type's own zero form), what a CRD has
// there: the schema's default, or nothing.
func (w restorer) absent(u map[string]any, k string, s *structuralschema.Structural) bool {
	if s != nil && s.Default.Object != nil {
		if reflect.DeepEqual(u[k], s.Default.Object) {
			return false
		}
		d := runtime.DeepCopyJSONValue(s.Default.Object)
		structuraldefaulting.Default(d, s)
		u[k] = d
		return true
	}
	if w.fill {
		return false
	}
	delete(u, k)
	return true
}

// value walks field k of u; top: a field of the object itself (spec); z
// the zero forms of its Go type.
func (w restorer) value(u map[string]any, k string, sv, ov any, s *structuralschema.Structural, z *zeroField, top bool) bool {
	uv, ok := u[k]
	if top && emptied(sv, ov, w.shape) && (!ok || dropped(uv)) {
		// Applied empty where the manager owned all it held: server-side
		// apply removes those fields and leaves null, as a CRD validates it
		// (measured for a spec; within it, a CRD was seen to keep an empty
		// map applied, which the restore below keeps too).
		if w.fill {
			return false
		}
		u[k] = nil
		return true
	}
	if !ok {
		return w.missing(u, k, sv, s)
	}
	if !w.fill && s != nil && s.Default.Object != nil && (dropped(sv) || z.isZero(sv)) && reflect.DeepEqual(uv, s.Default.Object) {
		// The Go field dropped the zero sent (or its type's own zero form,
		// "0s"), and decoding defaulted it: a CRD validates what was sent
		// (a default fills only what is absent).
		structuraldefaulting.Default(sv, s)
		u[k] = sv
		return true
	}
	switch sv := sv.(type) {
	case map[string]any:
		um, ok := uv.(map[string]any)
		if !ok {
			return false
		}
		om, _ := ov.(map[string]any)
		if w.shape != sentApply {
			om = nil
		}
		return w.object(um, sv, om, s, z.within(), nil)
	case []any:
		ul, ok := uv.([]any)
		if !ok {
			return false
		}
		return w.list(ul, sv, s, z.within())
	}
	return false
}

// missing restores field k the encoding left out of u: a null a CRD keeps,
// or a zero value sent, defaulted by its schema.
func (w restorer) missing(u map[string]any, k string, sv any, s *structuralschema.Structural) bool {
	if w.fill {
		return false
	}
	if sv == nil {
		// A null a CRD keeps, where the schema allows it (a merge
		// patch's null deletes: the form has none).
		if s != nil && s.Nullable {
			u[k] = nil
			return true
		}
		return false
	}
	if !dropped(sv) {
		return false
	}
	if s != nil {
		structuraldefaulting.Default(sv, s)
	}
	u[k] = sv
	return true
}

// list walks the items of a list sent (sv) beside those of the encoding (ul).
func (w restorer) list(ul, sv []any, s *structuralschema.Structural, z *zeroForms) bool {
	var items *structuralschema.Structural
	if s != nil {
		items = s.Items
	}
	item := w
	if w.shape == sentApply {
		// Server-side apply sets an atomic list as applied, and merges
		// the items of a map list into the items of the same keys.
		switch {
		case s == nil:
			return false
		case s.XListType == nil || *s.XListType == "atomic":
			item.shape, item.whole = sentObject, true
		case *s.XListType == "map":
			return item.byKeys(ul, sv, s.XListMapKeys, items, z)
		default:
			return false
		}
	}
	if len(ul) != len(sv) {
		return false
	}
	changed := false
	for i := range sv {
		sm, ok1 := sv[i].(map[string]any)
		um, ok2 := ul[i].(map[string]any)
		if !ok1 || !ok2 {
			continue
		}
		changed = item.object(um, sm, nil, items, z, nil) || changed
	}
	return changed
}

// byKeys walks the items of sent merged into the items of l with the same
// keys.
func (w restorer) byKeys(l, sent []any, keys []string, items *structuralschema.Structural, z *zeroForms) bool {
	changed := false
	w.whole = false
	for _, v := range sent {
		sm, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if um := itemWithKeys(l, sm, keys); um != nil {
			changed = w.object(um, sm, nil, items, z, nil) || changed
		}
	}
	return changed
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// emptied tells whether an apply sent an empty map (sv) where the stored
// object held a non-empty one (ov): server-side apply removes what the
// manager applied before and leaves null where nothing is left.
func emptied(sv, ov any, shape sentShape) bool {
	if shape != sentApply {
		return false
	}
	sm, ok := sv.(map[string]any)
	om, _ := ov.(map[string]any)
	return ok && len(sm) == 0 && len(om) > 0
}

// itemWithKeys is the only item of l with the keys of sent (a key the
// encoding lacks matches a zero sent), or nil.
func itemWithKeys(l []any, sent map[string]any, keys []string) map[string]any {
	var found map[string]any
	for _, v := range l {
		um, ok := v.(map[string]any)
		if !ok {
			continue
		}
		match := true
		for _, k := range keys {
			sv, sok := sent[k]
			uv, uok := um[k]
			if sok && uok {
				match = reflect.DeepEqual(sv, uv)
			} else if sok {
				match = dropped(sv)
			} else {
				match = !uok
			}
			if !match {
				break
			}
		}
		if match {
			if found != nil {
				return nil
			}
			found = um
		}
	}
	return found
}

// property is the schema of field k of an object of schema s.
func property(s *structuralschema.Structural, k string) *structuralschema.Structural {
	if s == nil {
		return nil
	}
	if p, ok := s.Properties[k]; ok {
		return &p
	}
	if s.AdditionalProperties != nil {
		return s.AdditionalProperties.Structural
	}
	return nil
}

// dropped tells whether a JSON value is one an omitempty encoding of the Go
// types leaves out: false, 0, "", an empty list, or an object of such values
// (an empty struct). A null is not restored: kube-apiserver drops it where
// the schema does not allow it, and a merge patch's null deletes.
func dropped(v any) bool {
	switch v := v.(type) {
	case bool:
		return !v
	case int64:
		return v == 0
	case float64:
		return v == 0
	case json.Number:
		return v == "0"
	case string:
		return v == ""
	case []any:
		return len(v) == 0
	case map[string]any:
		for _, e := range v {
			if !dropped(e) {
				return false
			}
		}
		return true
	}
	return false
}

// mayHoldZero tells whether a JSON document may hold a value an omitempty
// encoding drops: false, a zero number, "", {} or [] (an object of such
// values holds one). It may say so wrongly (an empty key), never the other
// way.
func mayHoldZero(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			if i+1 < len(b) && b[i+1] == '"' {
				return true
			}
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case c == '{' || c == '[':
			j := i + 1
			for j < len(b) && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r') {
				j++
			}
			if j < len(b) && (b[j] == '}' || b[j] == ']') {
				return true
			}
		case c == 'f':
			return true // false: the only bare word with an f
		case c == '-' || c >= '0' && c <= '9':
			zero := true
			for ; i < len(b); i++ {
				d := b[i]
				if d == 'e' || d == 'E' {
					break
				}
				if d >= '1' && d <= '9' {
					zero = false
				} else if d != '0' && d != '.' && d != '-' {
					break
				}
			}
			if zero {
				return true
			}
			for i < len(b) && (b[i] == 'e' || b[i] == 'E' || b[i] == '+' || b[i] == '-' || b[i] >= '0' && b[i] <= '9') {
				i++
			}
			i--
		}
	}
	return false
}
