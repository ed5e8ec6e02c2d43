package adopt

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// structural reads an apiextensions/v1 schema as kube-apiserver does for a
// CRD's: its structural form (the one pruning and defaulting walk).
func structural(p *apiextv1.JSONSchemaProps) (*structuralschema.Structural, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(p, internal, nil); err != nil {
		return nil, err
	}
	return structuralschema.NewStructural(internal)
}

// schemaDiff lists each difference between the CRD's schema of a version
// and the project's, one "<path>: <what>" a line, sorted: a field declared
// by one only, a type, a format, a default, a CEL rule (by its text), an
// enum, a pattern, a bound, required, list and map types, nullable,
// x-kubernetes-preserve-unknown-fields, x-kubernetes-embedded-resource,
// x-kubernetes-int-or-string, additionalProperties and allOf, anyOf,
// oneOf, not. Descriptions, titles, examples and the messages of rules are
// not differences. Paths are as jq writes them: "." is the object,
// .spec.image a property, [*] every item of a list, .* every value of a map.
func schemaDiff(crd, project *structuralschema.Structural) []string {
	d := &differ{}
	d.walk(".", crd, project)
	sort.Strings(d.lines)
	return d.lines
}

type differ struct{ lines []string }

func (d *differ) add(path, format string, args ...any) {
	d.lines = append(d.lines, path+": "+fmt.Sprintf(format, args...))
}

// value lists a setting that differs: c and p are as printed, "" for none.
func (d *differ) value(path, what, c, p string) {
	if c == p {
		return
	}
	d.add(path, "%s %s in the CRD, %s in the project", what, orNone(c), orNone(p))
}

// flag lists a boolean setting that differs.
func (d *differ) flag(path, what string, c, p bool) {
	switch {
	case c && !p:
		d.add(path, "%s in the CRD, not in the project", what)
	case p && !c:
		d.add(path, "%s in the project, not in the CRD", what)
	}
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	return strconv.Quote(s)
}

func quotedPtr(s *string) string {
	if s == nil {
		return ""
	}
	return strconv.Quote(*s)
}

func intPtr(i *int64) string {
	if i == nil {
		return ""
	}
	return strconv.FormatInt(*i, 10)
}

func floatPtr(f *float64) string {
	if f == nil {
		return ""
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

// jsonText is v as JSON ("" for nil).
func jsonText(v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return string(b)
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// child is the path of property k under path.
func child(path, k string) string {
	if plainKey.MatchString(k) {
		return strings.TrimSuffix(path, ".") + "." + k
	}
	return path + "[" + strconv.Quote(k) + "]"
}

func items(path string) string {
	if path == "." {
		path = ""
	}
	return path + "[*]"
}

func mapValues(path string) string {
	if path == "." {
		path = ""
	}
	return path + ".*"
}

func (d *differ) walk(path string, c, p *structuralschema.Structural) {
	switch {
	case c == nil && p == nil:
		return
	case p == nil:
		d.add(path, "declared in the CRD, not in the project")
		return
	case c == nil:
		d.add(path, "declared in the project, not in the CRD")
		return
	}
	d.value(path, "type", quoted(c.Type), quoted(p.Type))
	d.value(path, "default", jsonText(c.Default.Object), jsonText(p.Default.Object))
	d.flag(path, "nullable", c.Nullable, p.Nullable)
	d.flag(path, "x-kubernetes-preserve-unknown-fields", c.XPreserveUnknownFields, p.XPreserveUnknownFields)
	d.flag(path, "x-kubernetes-embedded-resource", c.XEmbeddedResource, p.XEmbeddedResource)
	d.flag(path, "x-kubernetes-int-or-string", c.XIntOrString, p.XIntOrString)
	d.value(path, "x-kubernetes-list-type", quotedPtr(c.XListType), quotedPtr(p.XListType))
	d.value(path, "x-kubernetes-list-map-keys", listText(c.XListMapKeys), listText(p.XListMapKeys))
	d.value(path, "x-kubernetes-map-type", quotedPtr(c.XMapType), quotedPtr(p.XMapType))
	d.rules(path, c.XValidations, p.XValidations)
	d.valueValidation(path, c.ValueValidation, p.ValueValidation)
	d.additionalProperties(path, c.AdditionalProperties, p.AdditionalProperties)
	d.walk(items(path), c.Items, p.Items)

	keys := map[string]bool{}
	for k := range c.Properties {
		keys[k] = true
	}
	for k := range p.Properties {
		keys[k] = true
	}
	for k := range keys {
		cp, cok := c.Properties[k]
		pp, pok := p.Properties[k]
		var cs, ps *structuralschema.Structural
		if cok {
			cs = &cp
		}
		if pok {
			ps = &pp
		}
		d.walk(child(path, k), cs, ps)
	}
}

func listText(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return jsonText(l)
}

// rules lists the CEL rules one side has and the other lacks, by rule text.
func (d *differ) rules(path string, c, p apiextv1.ValidationRules) {
	has := func(rs apiextv1.ValidationRules, rule string) bool {
		return slices.ContainsFunc(rs, func(r apiextv1.ValidationRule) bool { return r.Rule == rule })
	}
	for _, r := range c {
		if !has(p, r.Rule) {
			d.add(path, "rule %q in the CRD, not in the project", r.Rule)
		}
	}
	for _, r := range p {
		if !has(c, r.Rule) {
			d.add(path, "rule %q in the project, not in the CRD", r.Rule)
		}
	}
}

func (d *differ) valueValidation(path string, c, p *structuralschema.ValueValidation) {
	if c == nil {
		c = &structuralschema.ValueValidation{}
	}
	if p == nil {
		p = &structuralschema.ValueValidation{}
	}
	d.value(path, "format", quoted(c.Format), quoted(p.Format))
	d.value(path, "pattern", quoted(c.Pattern), quoted(p.Pattern))
	d.value(path, "enum", enumText(c.Enum), enumText(p.Enum))
	d.value(path, "maximum", floatPtr(c.Maximum), floatPtr(p.Maximum))
	d.flag(path, "exclusiveMaximum", c.ExclusiveMaximum, p.ExclusiveMaximum)
	d.value(path, "minimum", floatPtr(c.Minimum), floatPtr(p.Minimum))
	d.flag(path, "exclusiveMinimum", c.ExclusiveMinimum, p.ExclusiveMinimum)
	d.value(path, "multipleOf", floatPtr(c.MultipleOf), floatPtr(p.MultipleOf))
	d.value(path, "maxLength", intPtr(c.MaxLength), intPtr(p.MaxLength))
	d.value(path, "minLength", intPtr(c.MinLength), intPtr(p.MinLength))
	d.value(path, "maxItems", intPtr(c.MaxItems), intPtr(p.MaxItems))
	d.value(path, "minItems", intPtr(c.MinItems), intPtr(p.MinItems))
	d.flag(path, "uniqueItems", c.UniqueItems, p.UniqueItems)
	d.value(path, "maxProperties", intPtr(c.MaxProperties), intPtr(p.MaxProperties))
	d.value(path, "minProperties", intPtr(c.MinProperties), intPtr(p.MinProperties))
	for _, r := range c.Required {
		if !slices.Contains(p.Required, r) {
			d.add(child(path, r), "required in the CRD, not in the project")
		}
	}
	for _, r := range p.Required {
		if !slices.Contains(c.Required, r) {
			d.add(child(path, r), "required in the project, not in the CRD")
		}
	}
	for _, x := range []struct {
		what string
		c, p func(*structuralschema.ValueValidation)
	}{
		{"allOf", func(v *structuralschema.ValueValidation) { v.AllOf = c.AllOf }, func(v *structuralschema.ValueValidation) { v.AllOf = p.AllOf }},
		{"anyOf", func(v *structuralschema.ValueValidation) { v.AnyOf = c.AnyOf }, func(v *structuralschema.ValueValidation) { v.AnyOf = p.AnyOf }},
		{"oneOf", func(v *structuralschema.ValueValidation) { v.OneOf = c.OneOf }, func(v *structuralschema.ValueValidation) { v.OneOf = p.OneOf }},
		{"not", func(v *structuralschema.ValueValidation) { v.Not = c.Not }, func(v *structuralschema.ValueValidation) { v.Not = p.Not }},
	} {
		d.value(path, x.what, nestedText(x.what, x.c), nestedText(x.what, x.p))
	}
}

// nestedText is allOf, anyOf, oneOf or not (what), as set by set on an
// empty schema, in OpenAPI's JSON ("" when unset).
func nestedText(what string, set func(*structuralschema.ValueValidation)) string {
	s := &structuralschema.Structural{ValueValidation: &structuralschema.ValueValidation{}}
	set(s.ValueValidation)
	b, err := json.Marshal(s.ToKubeOpenAPI())
	if err != nil {
		return err.Error()
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err.Error()
	}
	return string(m[what])
}

// enumText is an enum's values as JSON, sorted: their order means nothing.
func enumText(enum []structuralschema.JSON) string {
	if len(enum) == 0 {
		return ""
	}
	var vs []string
	for _, e := range enum {
		vs = append(vs, jsonText(e.Object))
	}
	sort.Strings(vs)
	return "[" + strings.Join(vs, ",") + "]"
}

func (d *differ) additionalProperties(path string, c, p *structuralschema.StructuralOrBool) {
	if c != nil && p != nil && c.Structural != nil && p.Structural != nil {
		d.walk(mapValues(path), c.Structural, p.Structural)
		return
	}
	text := func(x *structuralschema.StructuralOrBool) string {
		switch {
		case x == nil:
			return ""
		case x.Structural != nil:
			return "a schema"
		default:
			return strconv.FormatBool(x.Bool)
		}
	}
	d.value(path, "additionalProperties", text(c), text(p))
}

// lostField is a field the project's schema would prune from stored
// objects on copy.
type lostField struct {
	path string
	// declared: the CRD's schema declares it (else the CRD keeps it
	// as an unknown field, x-kubernetes-preserve-unknown-fields).
	declared bool
	objects  []string // namespace/name of the objects that hold it
}

// lostFields prunes a copy of each object as the project's apiserver
// prunes it for the schema project (kube-apiserver's pruning), and returns
// each field it would remove, by its path in crd's schema (as schemaDiff
// writes it), with the objects that hold it, sorted by path.
func lostFields(objs []*unstructured.Unstructured, crd, project *structuralschema.Structural) []*lostField {
	byPath := map[string]*lostField{}
	for _, o := range objs {
		pruned := pruning.PruneWithOptions(runtime.DeepCopyJSON(o.Object), project, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
		if len(pruned) == 0 {
			continue
		}
		want := map[string]bool{}
		for _, p := range pruned {
			want[p] = true
		}
		found := map[string]lostField{}
		locate(o.Object, crd, "", ".", true, want, found)
		seen := map[string]bool{}
		for _, p := range pruned {
			f, ok := found[p]
			if !ok { // not reached through the CRD's schema: name it as the object does
				f = lostField{path: "." + p}
			}
			if seen[f.path] {
				continue
			}
			seen[f.path] = true
			if byPath[f.path] == nil {
				byPath[f.path] = &lostField{path: f.path, declared: f.declared}
			}
			byPath[f.path].objects = append(byPath[f.path].objects, objKey(o))
		}
	}
	var out []*lostField
	for _, f := range byPath {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// locate walks an object beside the CRD's schema s and records, for each
// path of want (as pruning writes it: keys joined by dots, [i] for an item),
// the field's path in the schema and whether s declares it.
func locate(x any, s *structuralschema.Structural, objPath, schemaPath string, declared bool, want map[string]bool, found map[string]lostField) {
	if objPath != "" && want[objPath] {
		found[objPath] = lostField{path: schemaPath, declared: declared}
		return // pruning removes the field whole
	}
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			op := k
			if objPath != "" {
				op = objPath + "." + k
			}
			var cs *structuralschema.Structural
			sp, decl := child(schemaPath, k), false
			if s != nil {
				if prop, ok := s.Properties[k]; ok {
					cs, decl = &prop, true
				} else if s.AdditionalProperties != nil {
					cs, sp, decl = s.AdditionalProperties.Structural, mapValues(schemaPath), true
				}
			}
			locate(v, cs, op, sp, decl, want, found)
		}
	case []any:
		var is *structuralschema.Structural
		if s != nil {
			is = s.Items
		}
		for i, v := range x {
			locate(v, is, objPath+"["+strconv.Itoa(i)+"]", items(schemaPath), declared, want, found)
		}
	}
}

// line is the refusal of a field the copy would prune; manifest, when not
// empty, is where the project would read the CRD's manifest (its schema
// comes from its types' markers).
func (f *lostField) line(prefix, manifest string) string {
	why := "declared in the CRD, not in the project"
	if !f.declared {
		why = "kept by the CRD (x-kubernetes-preserve-unknown-fields), not declared in the project"
	}
	names := f.objects[:min(len(f.objects), 5)]
	list := strings.Join(names, ", ")
	if len(f.objects) > 5 {
		list += fmt.Sprintf(" and %d more", len(f.objects)-5)
	}
	fix := "declare it in the project's schema"
	if manifest != "" {
		fix = "declare it in the project's types, or put the CRD's manifest at " + manifest + " to serve its schema"
	}
	return fmt.Sprintf("%s%s: %s: the copy would prune it from %d stored objects (%s): %s, or remove it from the objects",
		prefix, f.path, why, len(f.objects), list, fix)
}
