package crdschema

import (
	"encoding/json"
	"fmt"
	"go/token"
	"go/types"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-tools/pkg/loader"
)

// Zero values the Go types cannot carry (docs/markers.md). A field that is
// not a pointer and is tagged omitempty or omitzero holds its zero value for
// "left out" as well as for "sent as 0, "", {} or []": the server stores the
// Go object, so what a client sent is lost, and a read returns the field
// left out (a struct tagged omitempty only: written as {} either way).
// zeroValueWarnings names each such field on which a constraint of the
// schema could see the difference, as a warning of generate.

// zeroShape is what a field's zero value is, by its Go type.
type zeroShape int

const (
	zeroNone zeroShape = iota // a pointer, an interface: nil is "left out"
	zeroNumber
	zeroString
	zeroBool
	zeroStruct
	zeroMap
	zeroSlice
)

// shapeOf classifies a field's Go type, with the schema controller-gen
// wrote for it: a type with its own JSON form (metav1.Time, a string
// []byte, resource.Quantity) is left alone.
func shapeOf(t types.Type, prop *apiextensionsv1.JSONSchemaProps) zeroShape {
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsNumeric != 0 && (prop.Type == "integer" || prop.Type == "number"):
			return zeroNumber
		case u.Info()&types.IsString != 0 && prop.Type == "string":
			return zeroString
		case u.Info()&types.IsBoolean != 0 && prop.Type == "boolean":
			return zeroBool
		}
	case *types.Struct:
		if prop.Type == "object" {
			return zeroStruct
		}
	case *types.Map:
		if prop.Type == "object" {
			return zeroMap
		}
	case *types.Slice:
		if prop.Type == "array" {
			return zeroSlice
		}
	}
	return zeroNone
}

// zeroJSON is the zero value of a shape, as JSON decodes it.
func zeroJSON(s zeroShape) any {
	switch s {
	case zeroNumber:
		return float64(0)
	case zeroString:
		return ""
	case zeroBool:
		return false
	case zeroSlice:
		return []any{}
	default:
		return map[string]any{}
	}
}

// zeroText is the zero value of a shape as a client writes it.
func zeroText(s zeroShape) string {
	switch s {
	case zeroNumber:
		return "0"
	case zeroString:
		return `""`
	case zeroBool:
		return "false"
	case zeroSlice:
		return "[]"
	}
	return "{}"
}

// zeroConstraints lists what in prop (the field's schema) or in parent (the
// schema of the object holding it, the resource's root if parentRoot) can
// tell the field's zero value from the field left out: a bound, enum,
// length, pattern or count the zero value fails, a CEL rule on the field
// that the zero value (zero, as a client sends it) fails, and a CEL rule of
// the parent that mentions the field (".<name>", as in has(self.<name>))
// and gives another outcome on parentZero (the parent's zero value as the
// Go encoder writes it) with the field's zero value than without the field
// (celZeroRules).
func zeroConstraints(shape zeroShape, name string, prop, parent *apiextensionsv1.JSONSchemaProps, parentRoot bool, zero any, parentZero map[string]any) []string {
	var out []string
	switch shape {
	case zeroNumber:
		if m := prop.Minimum; m != nil && (*m > 0 || *m == 0 && prop.ExclusiveMinimum) {
			if prop.ExclusiveMinimum {
				out = append(out, fmt.Sprintf("ExclusiveMinimum=%v", *m))
			} else {
				out = append(out, fmt.Sprintf("Minimum=%v", *m))
			}
		}
		if m := prop.Maximum; m != nil && (*m < 0 || *m == 0 && prop.ExclusiveMaximum) {
			if prop.ExclusiveMaximum {
				out = append(out, fmt.Sprintf("ExclusiveMaximum=%v", *m))
			} else {
				out = append(out, fmt.Sprintf("Maximum=%v", *m))
			}
		}
	case zeroString:
		if prop.MinLength != nil && *prop.MinLength > 0 {
			out = append(out, fmt.Sprintf("MinLength=%d", *prop.MinLength))
		}
		if prop.Pattern != "" {
			if re, err := regexp.Compile(prop.Pattern); err == nil && !re.MatchString("") {
				out = append(out, fmt.Sprintf("Pattern=%s", prop.Pattern))
			}
		}
	case zeroStruct, zeroMap:
		if prop.MinProperties != nil && *prop.MinProperties > 0 {
			out = append(out, fmt.Sprintf("MinProperties=%d", *prop.MinProperties))
		}
	case zeroSlice:
		if prop.MinItems != nil && *prop.MinItems > 0 {
			out = append(out, fmt.Sprintf("MinItems=%d", *prop.MinItems))
		}
	}
	if len(prop.Enum) > 0 && shape != zeroStruct && shape != zeroMap && shape != zeroSlice {
		found := false
		var values []string
		for _, e := range prop.Enum {
			var v any
			if json.Unmarshal(e.Raw, &v) == nil && reflect.DeepEqual(v, zeroJSON(shape)) {
				found = true
			}
			values = append(values, string(e.Raw))
		}
		if !found {
			out = append(out, "Enum="+strings.Join(values, ";")+" (without "+zeroText(shape)+")")
		}
	}
	return append(out, celZeroRules(name, prop, parent, parentRoot, zero, parentZero)...)
}

// short cuts a long rule or default for a warning.
func short(s string) string {
	if r := []rune(s); len(r) > 80 {
		return string(r[:77]) + "..."
	}
	return s
}

// zeroDefault is the field's default when it is not the zero value: the
// zero value sent is left out of the Go object's JSON, so the default fills
// it, when the request is decoded (a CRD stores the zero value).
func zeroDefault(shape zeroShape, prop *apiextensionsv1.JSONSchemaProps) string {
	if prop.Default == nil {
		return ""
	}
	var v any
	if json.Unmarshal(prop.Default.Raw, &v) != nil || reflect.DeepEqual(v, zeroJSON(shape)) {
		return ""
	}
	return short(string(prop.Default.Raw))
}

// zeroValueWarnings walks a kind's Go type beside its schema and warns about
// each field of the module's packages that cannot carry its zero value
// while a constraint could see it; seen holds the fields already named.
func zeroValueWarnings(fset *token.FileSet, root, module, kind string, t types.Type, s *apiextensionsv1.JSONSchemaProps, seen map[token.Pos]bool) []string {
	w := &zeroWalker{fset: fset, root: root, module: module, kind: kind, seen: seen}
	w.walkType(t, s, "", 0)
	return w.out
}

// zeroWalker walks a kind's Go type beside its schema (zeroValueWarnings).
type zeroWalker struct {
	fset               *token.FileSet
	root, module, kind string
	seen               map[token.Pos]bool
	out                []string
}

func (w *zeroWalker) walkType(t types.Type, s *apiextensionsv1.JSONSchemaProps, path string, depth int) {
	if s == nil || depth > 32 {
		return
	}
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		owner := ""
		if n, ok := t.(*types.Named); ok {
			owner = n.Obj().Name()
		}
		zero, _ := encodedZero(t, s, 0)
		z, _ := zero.(map[string]any)
		w.walkStruct(u, owner, s, path, depth, depth == 0 || s.XEmbeddedResource, z)
	case *types.Slice:
		if s.Items != nil {
			w.walkType(u.Elem(), s.Items.Schema, path+"[*]", depth+1)
		}
	case *types.Map:
		if s.AdditionalProperties != nil {
			w.walkType(u.Elem(), s.AdditionalProperties.Schema, path+"[*]", depth+1)
		}
	}
}

func (w *zeroWalker) walkStruct(st *types.Struct, owner string, s *apiextensionsv1.JSONSchemaProps, path string, depth int, parentRoot bool, parentZero map[string]any) {
	for i := 0; i < st.NumFields(); i++ {
		f := st.Field(i)
		jf, ok := jsonFieldOf(st, i)
		if !ok {
			continue
		}
		name := jf.name
		if jf.inline {
			// Inlined: its fields are s's, in the object holding it.
			et := f.Type()
			if p, ok := et.(*types.Pointer); ok {
				et = p.Elem()
			}
			if u, ok := et.Underlying().(*types.Struct); ok {
				w.walkStruct(u, owner, s, path, depth+1, parentRoot, parentZero)
			}
			continue
		}
		prop, ok := s.Properties[name]
		if !ok {
			continue
		}
		fpath := strings.TrimPrefix(path+"."+name, ".")
		// omitzero, when given, decides what is left out (with or
		// without omitempty beside it).
		omit := ""
		switch {
		case jf.omitZero:
			omit = "omitzero"
		case jf.omitEmpty:
			omit = "omitempty"
		}
		w.checkField(f, name, fpath, owner, omit, &prop, s, parentRoot, parentZero)
		w.walkType(f.Type(), &prop, fpath, depth+1)
	}
}

// checkField warns about field f (name in JSON, at fpath, of type owner)
// of the module when the encoding omits its zero value while a constraint
// of its schema prop, or of s holding it, could see the zero.
func (w *zeroWalker) checkField(f *types.Var, name, fpath, owner, omit string, prop, s *apiextensionsv1.JSONSchemaProps, parentRoot bool, parentZero map[string]any) {
	inModule := f.Pkg() != nil && (f.Pkg().Path() == w.module || strings.HasPrefix(f.Pkg().Path(), w.module+"/"))
	shape := shapeOf(f.Type(), prop)
	if omit == "" || shape == zeroNone || !inModule || w.seen[f.Pos()] {
		return
	}
	found := zeroConstraints(shape, name, prop, s, parentRoot, fieldZero(f.Type(), shape, prop), parentZero)
	if slices.Contains(s.Required, name) && (shape != zeroStruct || omit == "omitzero" && len(prop.Required) == 0) {
		// The zero value sent passes Required, and the object stored
		// lacks the field: the next update of what holds it, as read
		// back, is refused. (A struct whose own required fields {} lacks
		// is refused either way; one with omitempty alone is always
		// written.)
		found = append(found, "Required")
	}
	def := zeroDefault(shape, prop)
	if def != "" && shape == zeroStruct && defaultedZeroIsDefault(f.Type(), prop) {
		def = ""
	}
	if len(found) == 0 && def == "" {
		return
	}
	w.seen[f.Pos()] = true
	pos := w.fset.Position(f.Pos())
	if rel, err := filepath.Rel(w.root, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
		pos.Filename = rel
	}
	w.out = append(w.out, zeroValueWarning(pos, w.kind, fpath, owner, f, omit, shape, found, def))
}

func zeroValueWarning(pos token.Position, kind, path, owner string, f *types.Var, omit string, shape zeroShape, found []string, def string) string {
	typ := types.TypeString(f.Type(), func(p *types.Package) string {
		if p == f.Pkg() {
			return ""
		}
		return p.Name()
	})
	field := f.Name()
	if owner != "" {
		field = owner + "." + field
	}
	zero := zeroText(shape)
	var stored, fix string
	switch {
	case shape == zeroStruct && omit == "omitempty":
		stored = "{} sent and the field left out are both stored as the zero struct and read back as {}"
		fix = "make it a pointer (*" + typ + ")"
	case shape == zeroStruct:
		stored = "{} sent is stored and read back without the field"
		fix = "make it a pointer (*" + typ + ")"
	case shape == zeroMap || shape == zeroSlice:
		stored = zero + " sent is stored and read back without the field"
		fix = "Go keeps no empty " + map[bool]string{true: "map", false: "list"}[shape == zeroMap] + " apart from a left-out one: write the constraint so that both mean the same"
	default:
		stored = zero + " sent is stored and read back without the field"
		fix = "make it a pointer (*" + typ + ") or drop " + omit
	}
	if def != "" {
		stored = zero + " sent is stored and read back as the default " + def + " (a CRD keeps " + zero + ")"
	}
	if len(found) > 0 {
		stored += ", and " + strings.Join(found, ", ") + " can tell " + zero + " from the field left out"
	}
	return fmt.Sprintf("%s: %s %s (field %s, %s with %s) cannot carry %s: %s; %s", pos, kind, path, field, typ, omit, zero, stored, fix)
}

// kindWarnings computes the warnings of one kind of pkg.
func kindWarnings(pkg *loader.Package, root, module, kind string, s *apiextensionsv1.JSONSchemaProps, seen map[token.Pos]bool) []string {
	obj := pkg.Types.Scope().Lookup(kind)
	if obj == nil {
		return nil
	}
	return zeroValueWarnings(pkg.Fset, root, module, kind, obj.Type(), s, seen)
}

// jsonField is how encoding/json treats field i of a struct.
type jsonField struct {
	name                string // in JSON
	inline              bool   // an embedded field without a name: its fields are the parent's
	omitEmpty, omitZero bool
}

// jsonFieldOf reads field i's json tag; ok is false for a field
// encoding/json leaves out (unexported and not embedded, or tagged "-").
func jsonFieldOf(st *types.Struct, i int) (jsonField, bool) {
	f := st.Field(i)
	name, opts, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("json"), ",")
	if name == "-" || !f.Exported() && !f.Embedded() {
		return jsonField{}, false
	}
	o := "," + opts + ","
	jf := jsonField{name: name, inline: f.Embedded() && name == "", omitEmpty: strings.Contains(o, ",omitempty,"), omitZero: strings.Contains(o, ",omitzero,")}
	if jf.name == "" {
		jf.name = f.Name()
	}
	return jf, true
}
