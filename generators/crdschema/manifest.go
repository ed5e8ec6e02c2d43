package crdschema

import (
	"encoding/json"
	"fmt"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
)

// A kind's CRD manifest is its schema (manifestfile.go): the schema of
// each served version is the manifest's, checked against the Go type, whose
// schema (from its markers) is computed as for any kind. A field the
// manifest declares must be one the Go type can hold, or what a client
// sends would be lost in storage: that is an error. Every other difference
// is the manifest's to decide, and is named in one warning per kind.

// manifestSchema is the schema of a version of a kind as its manifest
// declares it: metadata as controller-gen writes it (the server validates
// metadata itself) but for the restrictions of metadata.name and
// metadata.generateName a CRD may declare, descriptions dropped unless
// documented.
func manifestSchema(m *Manifest, version string, documented bool) *apiextensionsv1.JSONSchemaProps {
	s := m.Version(version).Schema.OpenAPIV3Schema.DeepCopy()
	if !documented {
		truncateDescriptions(s)
	}
	if meta, ok := s.Properties["metadata"]; ok {
		// The only restrictions of metadata a CRD may declare, which
		// kube-apiserver enforces: those of name and generateName.
		kept := apiextensionsv1.JSONSchemaProps{Type: "object"}
		for _, name := range []string{"name", "generateName"} {
			if p, ok := meta.Properties[name]; ok {
				if kept.Properties == nil {
					kept.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
				}
				kept.Properties[name] = p
			}
		}
		s.Properties["metadata"] = kept
	}
	return s
}

// truncateDescriptions drops every description of a schema.
func truncateDescriptions(s *apiextensionsv1.JSONSchemaProps) {
	visitSchema(s, func(p *apiextensionsv1.JSONSchemaProps) { p.Description = "" })
}

func visitSchema(s *apiextensionsv1.JSONSchemaProps, fn func(*apiextensionsv1.JSONSchemaProps)) {
	if s == nil {
		return
	}
	fn(s)
	for name, p := range s.Properties {
		visitSchema(&p, fn)
		s.Properties[name] = p
	}
	if s.Items != nil {
		visitSchema(s.Items.Schema, fn)
		for i := range s.Items.JSONSchemas {
			visitSchema(&s.Items.JSONSchemas[i], fn)
		}
	}
	if s.AdditionalProperties != nil {
		visitSchema(s.AdditionalProperties.Schema, fn)
	}
	for _, list := range [][]apiextensionsv1.JSONSchemaProps{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			visitSchema(&list[i], fn)
		}
	}
	visitSchema(s.Not, fn)
}

// structuralErrors refuses a manifest schema kube-apiserver would refuse
// in a CRD: one that is not structural, naming the manifest's line.
func structuralErrors(m *Manifest, version string, s *apiextensionsv1.JSONSchemaProps) []string {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(s, internal, nil); err != nil {
		return []string{fmt.Sprintf("%s: %v", m.Pos(m.SchemaPath(version)...), err)}
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return []string{fmt.Sprintf("%s: the schema of version %s is not structural: %v", m.Pos(m.SchemaPath(version)...), version, err)}
	}
	var out []string
	for _, e := range structuralschema.ValidateStructural(nil, structural) {
		out = append(out, fmt.Sprintf("%s: the schema of version %s is not structural, as kube-apiserver requires of a CRD: %s", m.Pos(m.SchemaPath(version, FieldPathKeys(e.Field)...)...), version, e.Error()))
	}
	return out
}

// goCheck walks a manifest's schema of a kind beside the schema its Go
// type's markers give, and the Go type itself (for the positions errors name).
type goCheck struct {
	m          *Manifest
	version    string
	kind, root string
	fset       *token.FileSet
	errs       []string
	diffs      []string
}

// checkAgainstGo compares the manifest's schema ms of a kind's version
// with the Go type t's schema gs: errors for what the Go type cannot hold,
// and the other differences.
func checkAgainstGo(m *Manifest, version, kind, root string, fset *token.FileSet, t types.Type, ms, gs *apiextensionsv1.JSONSchemaProps) (errs, diffs []string) {
	c := &goCheck{m: m, version: version, kind: kind, root: root, fset: fset}
	c.walk(ms, gs, t, goAt{name: kind}, nil, "", 0)
	return c.errs, c.diffs
}

// walk compares manifest node ms with Go schema node gs of Go type t (nil
// when not resolved); holder is where the Go type holding the node is
// declared, keys the YAML path below openAPIV3Schema, path the JSON path.
func (c *goCheck) walk(ms, gs *apiextensionsv1.JSONSchemaProps, t types.Type, holder goAt, keys []string, path string, depth int) {
	if depth > 64 {
		return
	}
	if t != nil {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		if n, ok := t.(*types.Named); ok {
			holder = goAt{n.Obj().Pos(), n.Obj().Name()}
		}
	}
	if gs.Type == "" {
		// Schemaless, a type with its own JSON form, int-or-string,
		// preserve-unknown: the Go type holds any value here.
		if attrs := shallowDiff(ms, gs); len(attrs) > 0 {
			c.diff(path, strings.Join(attrs, ", "))
		}
		return
	}
	if !compatible(ms.Type, gs.Type) {
		mt := ms.Type
		if mt == "" {
			mt = "any value (no type)"
		}
		c.errs = append(c.errs, fmt.Sprintf("%s: %s of %s %s is %s in the manifest, and %s in the Go type (%s), which cannot hold it: make the manifest's type %s, or change the Go type",
			c.m.Pos(c.m.SchemaPath(c.version, append(slices.Clip(keys), "type")...)...), where(path), c.kind, c.version, mt, gs.Type, c.pos(holder), gs.Type))
		return
	}
	if attrs := shallowDiff(ms, gs); len(attrs) > 0 {
		c.diff(path, strings.Join(attrs, ", "))
	}
	c.walkObject(ms, gs, t, holder, keys, path, depth)
	if ms.Items != nil && ms.Items.Schema != nil && gs.Items != nil && gs.Items.Schema != nil {
		c.walk(ms.Items.Schema, gs.Items.Schema, sliceElem(t), holder, append(slices.Clip(keys), "items"), path+"[*]", depth+1)
	}
}

// walkObject compares the fields of an object node (walk): properties,
// additionalProperties and unknown fields kept.
func (c *goCheck) walkObject(ms, gs *apiextensionsv1.JSONSchemaProps, t types.Type, holder goAt, keys []string, path string, depth int) {
	// A Go type marked to keep unknown fields is the manifest's match
	// there; one without properties holds anything (RawExtension).
	goPreserve := gs.XPreserveUnknownFields != nil && *gs.XPreserveUnknownFields
	goAny := goPreserve && len(gs.Properties) == 0
	var goValues *apiextensionsv1.JSONSchemaProps
	if gs.AdditionalProperties != nil && gs.AdditionalProperties.Schema != nil {
		goValues = gs.AdditionalProperties.Schema
	}
	if ms.XPreserveUnknownFields != nil && *ms.XPreserveUnknownFields && !goPreserve && goValues == nil {
		c.errs = append(c.errs, fmt.Sprintf("%s: %s of %s %s keeps unknown fields in the manifest, and the Go type %s only its fields: the others would be lost in storage; mark the Go type +kubebuilder:pruning:PreserveUnknownFields and give it a field that holds them (runtime.RawExtension), or remove x-kubernetes-preserve-unknown-fields",
			c.m.Pos(c.m.SchemaPath(c.version, append(slices.Clip(keys), "x-kubernetes-preserve-unknown-fields")...)...), where(path), c.kind, c.version, c.pos(holder)))
	}
	for _, name := range slices.Sorted(maps.Keys(ms.Properties)) {
		if path == "" && name == "metadata" {
			continue // ObjectMeta: the restrictions of name and generateName only
		}
		mp := ms.Properties[name]
		pkeys := append(slices.Clip(keys), "properties", name)
		ppath := path + "." + name
		gp, ok := gs.Properties[name]
		var ft types.Type
		fpos := holder
		if f := goField(t, name); f != nil {
			ft, fpos = f.Type(), goAt{f.Pos(), "field " + f.Name()}
		}
		switch {
		case ok:
			c.walk(&mp, &gp, ft, fpos, pkeys, ppath, depth+1)
		case goValues != nil:
			c.walk(&mp, goValues, mapElem(t), holder, pkeys, ppath, depth+1)
		case goAny:
		default:
			c.errs = append(c.errs, fmt.Sprintf("%s: the manifest declares %s of %s %s, and the Go type %s has no field of that JSON name: what a client sends there would be lost in storage; add the field to the Go type, or remove it from the manifest",
				c.m.Pos(c.m.SchemaPath(c.version, pkeys...)...), ppath, c.kind, c.version, c.pos(holder)))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(gs.Properties)) {
		if _, ok := ms.Properties[name]; !ok && !(path == "" && (name == "apiVersion" || name == "kind")) {
			c.diff(path+"."+name, "not in the manifest: pruned")
		}
	}
	if ms.AdditionalProperties != nil && ms.AdditionalProperties.Schema != nil {
		switch {
		case goValues != nil:
			c.walk(ms.AdditionalProperties.Schema, goValues, mapElem(t), holder, append(slices.Clip(keys), "additionalProperties"), path+"[*]", depth+1)
		case !goAny:
			c.errs = append(c.errs, fmt.Sprintf("%s: %s of %s %s holds any key in the manifest (additionalProperties), and the Go type %s only its fields: the other keys would be lost in storage; make the Go type a map, or declare properties in the manifest",
				c.m.Pos(c.m.SchemaPath(c.version, append(slices.Clip(keys), "additionalProperties")...)...), where(path), c.kind, c.version, c.pos(holder)))
		}
	}
}

func (c *goCheck) diff(path, what string) {
	p := path
	if p == "" {
		p = "the object"
	}
	c.diffs = append(c.diffs, fmt.Sprintf("%s %s (%s)", c.version, p, what))
}

// goAt is a Go declaration: a named type, or a field.
type goAt struct {
	pos  token.Pos
	name string
}

// pos names a Go declaration and where it is, relative to the project.
func (c *goCheck) pos(at goAt) string {
	if !at.pos.IsValid() || c.fset == nil {
		return at.name
	}
	pos := c.fset.Position(at.pos)
	if rel, err := filepath.Rel(c.root, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
		pos.Filename = rel
	}
	return fmt.Sprintf("%s at %s:%d", at.name, pos.Filename, pos.Line)
}

// compatible tells whether a Go type with schema type goType holds every
// value of manifest type mType: the same type, or an integer in a number.
func compatible(mType, goType string) bool {
	return mType == goType || (mType == "integer" && goType == "number")
}

// shallowDiff names the keywords of two schema nodes that differ, leaving
// out their children (properties, items, additionalProperties) and
// descriptions.
func shallowDiff(a, b *apiextensionsv1.JSONSchemaProps) []string {
	ja, jb := shallowJSON(a), shallowJSON(b)
	var out []string
	for _, k := range slices.Sorted(maps.Keys(union(ja, jb))) {
		if !reflect.DeepEqual(ja[k], jb[k]) {
			out = append(out, k)
		}
	}
	return out
}

func shallowJSON(s *apiextensionsv1.JSONSchemaProps) map[string]any {
	c := *s
	c.Properties, c.Items, c.AdditionalProperties, c.Description = nil, nil, nil, ""
	if c.Required != nil {
		c.Required = slices.Sorted(slices.Values(c.Required))
	}
	b, _ := json.Marshal(&c)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return out
}

func union(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k := range a {
		out[k] = nil
	}
	for k := range b {
		out[k] = nil
	}
	return out
}

// goField is the field of struct type t (through pointers and inlined
// embedded structs) that encoding/json names name, or nil.
func goField(t types.Type, name string) *types.Var {
	if t == nil {
		return nil
	}
	if p, ok := t.Underlying().(*types.Pointer); ok {
		t = p.Elem()
	}
	st, ok := t.Underlying().(*types.Struct)
	if !ok {
		return nil
	}
	for i := 0; i < st.NumFields(); i++ {
		jf, ok := jsonFieldOf(st, i)
		if !ok {
			continue
		}
		if jf.inline {
			if f := goField(st.Field(i).Type(), name); f != nil {
				return f
			}
			continue
		}
		if jf.name == name {
			return st.Field(i)
		}
	}
	return nil
}

func sliceElem(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	switch u := t.Underlying().(type) {
	case *types.Slice:
		return u.Elem()
	case *types.Array:
		return u.Elem()
	}
	return nil
}

func mapElem(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	if u, ok := t.Underlying().(*types.Map); ok {
		return u.Elem()
	}
	return nil
}

// manifestWarning is the one warning of a kind whose manifest differs from
// its Go type's markers otherwise than in what the Go type can hold.
func manifestWarning(m *Manifest, kind string, diffs []string) string {
	const shown = 5
	list := diffs
	more := ""
	if len(list) > shown {
		more = fmt.Sprintf("; and %d more", len(list)-shown)
		list = list[:shown]
	}
	places := "places"
	if len(diffs) == 1 {
		places = "place"
	}
	return fmt.Sprintf("%s: %s's schema is this manifest's, which differs from what the markers of its Go types say at %d %s; the manifest wins (the server validates, defaults and prunes with it): %s%s",
		m.Path, kind, len(diffs), places, strings.Join(list, "; "), more)
}
