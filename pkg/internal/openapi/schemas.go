// Package openapi merges what the kinds' schemas declare into the OpenAPI
// definitions openapi-gen wrote, so that the server publishes what it
// enforces.
package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// WithSchemas returns definitions with the constraints of the groups'
// schemas merged in: openapi-gen describes the Go types and their
// documentation; the schemas (controller-gen's meaning of every marker) add
// what the markers declare (bounds, patterns, enums, formats, defaults,
// required fields, list and map types, x-kubernetes-validations), so the
// published OpenAPI says what the server enforces.
func WithSchemas(definitions common.GetOpenAPIDefinitions, groups []*builders.APIGroup) common.GetOpenAPIDefinitions {
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		defs := definitions(ref)
		pruned := &pruning{declared: map[string]map[string]bool{}}
		for _, g := range groups {
			for _, r := range g.Resources {
				for _, s := range r.Schemas {
					var props apiextensionsv1.JSONSchemaProps
					if err := json.Unmarshal([]byte(s.OpenAPIV3), &props); err != nil {
						panic(fmt.Sprintf("schema of %s: %v", s.Model, err)) // generated: cannot happen
					}
					m := merger{defs: defs, done: map[string]bool{}, prune: s.Manifest != "", pruned: pruned}
					m.definition(s.Model, &props, true)
				}
			}
		}
		pruned.apply()
		return defs
	}
}

type merger struct {
	defs map[string]common.OpenAPIDefinition
	done map[string]bool
	// prune: the schema is a CRD manifest's (builders.Schema.Manifest),
	// which the server prunes by: a property of the Go types the manifest
	// does not declare is not published either, so that server-side apply
	// (whose type converter reads the published models) refuses it as
	// kube-apiserver refuses it for that CRD (".spec.x: field not declared
	// in schema").
	prune bool
	// at is where the merge is: a definition's name and the path in it
	// (".spec", "[]" for items, "{}" for map values).
	at string
	// pruned collects, over every kind, what each place declares.
	pruned *pruning
}

// pruning removes from the published definitions the properties that no
// kind declares. It shapes what is published (kubectl explain, server-side
// apply's first check); what is stored is pruned by each kind's own schema
// (pkg/internal/validation), and apply is checked against it too. A
// definition a kind reaches at two places is read at the first only. A definition is shared by every kind whose Go types use
// its type: a property one kind's manifest leaves out stays published
// while another kind (its manifest, or its markers, which declare every
// field of the Go type) declares it.
type pruning struct {
	// declared: by place (merger.at), the properties some kind declares
	// there; a nil set: every property (a kind whose schema is its markers',
	// or a manifest keeping unknown fields there).
	declared map[string]map[string]bool
	// candidates are the places a manifest left properties out of.
	candidates []pruneCandidate
}

type pruneCandidate struct {
	at         string
	properties map[string]spec.Schema
}

// declare records what the schema from declares at place at.
func (p *pruning) declare(at string, prune bool, from *apiextensionsv1.JSONSchemaProps, properties map[string]spec.Schema) {
	set, seen := p.declared[at]
	if seen && set == nil {
		return // every property, already
	}
	if !prune || !declaresAll(from) {
		p.declared[at] = nil
		return
	}
	if set == nil {
		set = map[string]bool{}
		p.declared[at] = set
	}
	for name := range from.Properties {
		set[name] = true
	}
	p.candidates = append(p.candidates, pruneCandidate{at: at, properties: properties})
}

// apply deletes the properties no kind declares at their place.
func (p *pruning) apply() {
	for _, c := range p.candidates {
		set := p.declared[c.at]
		if set == nil {
			continue
		}
		for name := range c.properties {
			if !set[name] && name != "metadata" && name != "apiVersion" && name != "kind" {
				delete(c.properties, name)
			}
		}
	}
}

// definition merges a struct schema into the definition named model: its
// own constraints only for a kind's root (elsewhere they are the referring
// field's), its required fields and its properties always (they are the
// type's, wherever it is used).
func (m merger) definition(model string, from *apiextensionsv1.JSONSchemaProps, own bool) {
	d, ok := m.defs[model]
	if !ok || m.done[model] {
		return
	}
	m.done[model] = true
	m.at = model
	if own {
		constraints(&d.Schema, from)
	}
	// What the server requires: controller-gen's list (+optional,
	// +kubebuilder:validation:Optional and omitempty taken into account).
	d.Schema.Required = slices.Clone(from.Required)
	m.properties(&d.Schema, from)
	m.defs[model] = d
}

func (m merger) properties(s *spec.Schema, from *apiextensionsv1.JSONSchemaProps) {
	if s.Properties != nil {
		m.pruned.declare(m.at, m.prune, from, s.Properties)
	}
	for name, fp := range from.Properties {
		if name == "metadata" || name == "apiVersion" || name == "kind" {
			continue
		}
		p, ok := s.Properties[name]
		if !ok {
			continue
		}
		at := m
		at.at = m.at + "." + name
		at.node(&p, &fp)
		s.Properties[name] = p
	}
}

// declaresAll tells whether an object schema of a CRD declares every
// field it keeps: kube-apiserver prunes the others (neither a map of
// additionalProperties nor x-kubernetes-preserve-unknown-fields).
func declaresAll(from *apiextensionsv1.JSONSchemaProps) bool {
	return from.Type == "object" && from.AdditionalProperties == nil && (from.XPreserveUnknownFields == nil || !*from.XPreserveUnknownFields)
}

// node merges into a property, item or map value schema: its constraints,
// and the struct it holds, in place or in the definition it refers to.
func (m merger) node(s *spec.Schema, from *apiextensionsv1.JSONSchemaProps) {
	if s.Ref.String() != "" {
		// Keywords beside a $ref are ignored: refer through allOf, as
		// openapi-gen does for a field with a default.
		s.AllOf = []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: s.Ref}}}
		s.Ref = spec.Ref{}
	}
	constraints(s, from)
	if len(s.AllOf) == 1 && s.AllOf[0].Ref.String() != "" {
		name := definitionName(s.AllOf[0].Ref.String())
		d, ok := m.defs[name]
		switch {
		case !ok:
			// A type of another module without OpenAPI definitions (no
			// +k8s:openapi-gen in a package the user does not own): its
			// definition is what controller-gen writes for it in the CRD.
			m.defs[name] = common.OpenAPIDefinition{Schema: definitionOf(from)}
			m.done[name] = true
		case from.Type != "" && len(d.Schema.Type) == 1 && d.Schema.Type[0] != from.Type:
			// The Go type's shape is not its JSON (a struct with its own
			// MarshalJSON, declared a string by its markers): the field
			// is what the schema says, as in the CRD.
			inline := schemaOf(from)
			inline.Description = s.Description
			*s = inline
		default:
			m.definition(name, from, false)
		}
		return
	}
	s.Required = slices.Clone(from.Required)
	m.properties(s, from)
	if from.Items != nil && from.Items.Schema != nil && s.Items != nil && s.Items.Schema != nil {
		at := m
		at.at = m.at + "[]"
		at.node(s.Items.Schema, from.Items.Schema)
	}
	if from.AdditionalProperties != nil && from.AdditionalProperties.Schema != nil && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		at := m
		at.at = m.at + "{}"
		at.node(s.AdditionalProperties.Schema, from.AdditionalProperties.Schema)
	}
}

// definitionName is the name a $ref points at (RFC 6901 escapes undone:
// "example.com~1status.Condition" is example.com/status.Condition).
func definitionName(ref string) string {
	for _, prefix := range []string{"#/definitions/", "#/components/schemas/"} {
		if strings.HasPrefix(ref, prefix) {
			return strings.NewReplacer("~1", "/", "~0", "~").Replace(strings.TrimPrefix(ref, prefix))
		}
	}
	return ref
}

// schemaOf is the published form of a schema of the CRD.
func schemaOf(from *apiextensionsv1.JSONSchemaProps) spec.Schema {
	var s spec.Schema
	b, err := json.Marshal(from)
	if err == nil {
		err = json.Unmarshal(b, &s)
	}
	if err != nil {
		panic(fmt.Sprintf("schema: %v", err)) // generated from a JSONSchemaProps: cannot happen
	}
	return s
}

// definitionOf is the definition of a type from the schema of a field of
// that type: the field's own constraints stay on the field (constraints).
func definitionOf(from *apiextensionsv1.JSONSchemaProps) spec.Schema {
	t := apiextensionsv1.JSONSchemaProps{
		Type: from.Type, Format: from.Format, Properties: from.Properties, Required: from.Required,
		Items: from.Items, AdditionalProperties: from.AdditionalProperties,
	}
	return schemaOf(&t)
}

// constraints copies the validation keywords of from onto s.
func constraints(s *spec.Schema, from *apiextensionsv1.JSONSchemaProps) {
	if from.Maximum != nil {
		s.Maximum, s.ExclusiveMaximum = from.Maximum, from.ExclusiveMaximum
	}
	if from.Minimum != nil {
		s.Minimum, s.ExclusiveMinimum = from.Minimum, from.ExclusiveMinimum
	}
	if from.MultipleOf != nil {
		s.MultipleOf = from.MultipleOf
	}
	for dst, src := range map[**int64]*int64{&s.MaxLength: from.MaxLength, &s.MinLength: from.MinLength, &s.MaxItems: from.MaxItems,
		&s.MinItems: from.MinItems, &s.MaxProperties: from.MaxProperties, &s.MinProperties: from.MinProperties} {
		if src != nil {
			*dst = src
		}
	}
	if from.Pattern != "" {
		s.Pattern = from.Pattern
	}
	if from.UniqueItems {
		s.UniqueItems = true
	}
	if from.Format != "" && s.Format == "" {
		s.Format = from.Format
	}
	if from.Nullable {
		s.Nullable = true
	}
	if len(from.Enum) > 0 {
		s.Enum = nil
		for _, e := range from.Enum {
			var v any
			if json.Unmarshal(e.Raw, &v) == nil {
				s.Enum = append(s.Enum, v)
			}
		}
	}
	if from.Default != nil {
		var v any
		if json.Unmarshal(from.Default.Raw, &v) == nil {
			s.Default = v
		}
	}
	ext := map[string]any{}
	if from.XListType != nil {
		ext["x-kubernetes-list-type"] = *from.XListType
	}
	if len(from.XListMapKeys) > 0 {
		ext["x-kubernetes-list-map-keys"] = from.XListMapKeys
	}
	if from.XMapType != nil {
		ext["x-kubernetes-map-type"] = *from.XMapType
	}
	if from.XIntOrString {
		ext["x-kubernetes-int-or-string"] = true
	}
	if from.XEmbeddedResource {
		ext["x-kubernetes-embedded-resource"] = true
	}
	if from.XPreserveUnknownFields != nil {
		ext["x-kubernetes-preserve-unknown-fields"] = *from.XPreserveUnknownFields
	}
	if len(from.XValidations) > 0 {
		ext["x-kubernetes-validations"] = from.XValidations
	}
	for k, v := range ext {
		s.AddExtension(k, v)
	}
}
