package openapi

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// TestWithSchemas: what a kind's schema declares is published in the
// definitions openapi-gen wrote, field constraints on the field, the
// struct's fields in the struct's definition.
func TestWithSchemas(t *testing.T) {
	defs := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, Description: "kept"}}
		return map[string]common.OpenAPIDefinition{
			"m.Widget": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
				"spec": {SchemaProps: spec.SchemaProps{Default: map[string]any{}, AllOf: []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/components/schemas/m.Spec")}}}}},
			}}}},
			"m.Spec": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
				"mode":  str,
				"ports": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"integer"}}}}}},
			}}}},
		}
	}
	const schema = `{"type":"object","properties":{"spec":{"type":"object",
		"x-kubernetes-validations":[{"rule":"has(self.mode)","message":"mode is required"}],
		"required":["mode"],
		"properties":{
			"mode":{"type":"string","enum":["a","b"],"default":"a","maxLength":1},
			"ports":{"type":"array","maxItems":3,"x-kubernetes-list-type":"set","items":{"type":"integer","minimum":1,"maximum":65535}}}}}}`
	groups := []*builders.APIGroup{{Resources: []*builders.Resource{{Schemas: map[string]builders.Schema{"v1": {Model: "m.Widget", OpenAPIV3: schema}}}}}}
	out := WithSchemas(defs, groups)(func(string) spec.Ref { return spec.Ref{} })
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	specProperty := js(out["m.Widget"].Schema.Properties["spec"])
	spec := js(out["m.Spec"].Schema)
	// The field's own constraints on the property; the struct's fields in
	// the struct's definition, shared by every field of that type.
	for where, wants := range map[string][]string{
		specProperty: {`"x-kubernetes-validations":[{"rule":"has(self.mode)","message":"mode is required"}]`, `"allOf":[{"$ref":"#/components/schemas/m.Spec"}]`},
		spec:         {`"enum":["a","b"]`, `"default":"a"`, `"maxLength":1`, `"description":"kept"`, `"maxItems":3`, `"x-kubernetes-list-type":"set"`, `"maximum":65535`, `"minimum":1`, `"required":["mode"]`},
	} {
		for _, want := range wants {
			if !strings.Contains(where, want) {
				t.Errorf("lacks %s:\n%s", want, where)
			}
		}
	}
	if strings.Contains(spec, "x-kubernetes-validations") {
		t.Errorf("the field's rule leaked into the shared definition:\n%s", spec)
	}
}

// TestWithManifestSchema: a kind whose schema is its CRD manifest's
// publishes only the fields the manifest declares (server-side apply reads
// them), in its own definition and the definitions it refers to; a map or a
// field preserving unknown fields keeps what the Go types have; a kind whose
// schema is its markers' publishes every field of its Go types.
func TestWithManifestSchema(t *testing.T) {
	defs := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
		obj := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"a": str, "b": str}}}
		return map[string]common.OpenAPIDefinition{
			"m.Gate": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
				"apiVersion": str, "kind": str, "metadata": obj,
				"spec":   {SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/components/schemas/m.GateSpec")}}}}},
				"status": obj,
			}}}},
			"m.GateSpec": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
				"mode": str, "experimental": str, "free": obj, "labels": obj,
			}}}},
		}
	}
	const manifest = `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
		"spec":{"type":"object","properties":{"mode":{"type":"string"},
			"free":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"a":{"type":"string"}}},
			"labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}`
	for _, tc := range []struct {
		manifest                     string
		specFields, free, rootFields string
	}{
		{"config/crd/bases/example.com_gates.yaml", "free,labels,mode", "a,b", "apiVersion,kind,metadata,spec"},
		{"", "experimental,free,labels,mode", "a,b", "apiVersion,kind,metadata,spec,status"},
	} {
		groups := []*builders.APIGroup{{Resources: []*builders.Resource{{Schemas: map[string]builders.Schema{"v1": {Model: "m.Gate", OpenAPIV3: manifest, Manifest: tc.manifest}}}}}}
		out := WithSchemas(defs, groups)(func(string) spec.Ref { return spec.Ref{} })
		names := func(s spec.Schema) string {
			var n []string
			for k := range s.Properties {
				n = append(n, k)
			}
			slices.Sort(n)
			return strings.Join(n, ",")
		}
		gateSpec := out["m.GateSpec"].Schema
		if got := names(gateSpec); got != tc.specFields {
			t.Errorf("manifest %q: spec fields %s, want %s", tc.manifest, got, tc.specFields)
		}
		if got := names(gateSpec.Properties["free"]); got != tc.free {
			t.Errorf("manifest %q: spec.free fields %s, want %s (it preserves unknown fields)", tc.manifest, got, tc.free)
		}
		if got := names(out["m.Gate"].Schema); got != tc.rootFields {
			t.Errorf("manifest %q: fields %s, want %s", tc.manifest, got, tc.rootFields)
		}
	}
}

// TestManifestPruningSharedDefinition: a definition two kinds share keeps
// a property while one of them declares it (its markers declare every field
// of the Go type; a manifest what it lists), and loses it only when neither
// does.
func TestManifestPruningSharedDefinition(t *testing.T) {
	defs := func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
		spec_ := spec.Schema{SchemaProps: spec.SchemaProps{AllOf: []spec.Schema{{SchemaProps: spec.SchemaProps{Ref: spec.MustCreateRef("#/components/schemas/m.SharedSpec")}}}}}
		root := func() common.OpenAPIDefinition {
			return common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{"spec": spec_}}}}
		}
		return map[string]common.OpenAPIDefinition{
			"m.Gate": root(), "m.Door": root(),
			"m.SharedSpec": {Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
				"mode": str, "experimental": str,
			}}}},
		}
	}
	const standard = `{"type":"object","properties":{"spec":{"type":"object","properties":{"mode":{"type":"string"}}}}}`
	const full = `{"type":"object","properties":{"spec":{"type":"object","properties":{"mode":{"type":"string"},"experimental":{"type":"string"}}}}}`
	for _, tc := range []struct {
		name             string
		door, doorSchema string
		want             string
	}{
		{"the other kind's markers declare it", "", full, "experimental,mode"},
		{"the other kind's manifest declares it", "config/crd/bases/example.com_doors.yaml", full, "experimental,mode"},
		{"neither manifest declares it", "config/crd/bases/example.com_doors.yaml", standard, "mode"},
	} {
		groups := []*builders.APIGroup{{Resources: []*builders.Resource{
			{Schemas: map[string]builders.Schema{"v1": {Model: "m.Gate", OpenAPIV3: standard, Manifest: "config/crd/bases/example.com_gates.yaml"}}},
			{Schemas: map[string]builders.Schema{"v1": {Model: "m.Door", OpenAPIV3: tc.doorSchema, Manifest: tc.door}}},
		}}}
		out := WithSchemas(defs, groups)(func(string) spec.Ref { return spec.Ref{} })
		var names []string
		for k := range out["m.SharedSpec"].Schema.Properties {
			names = append(names, k)
		}
		slices.Sort(names)
		if got := strings.Join(names, ","); got != tc.want {
			t.Errorf("%s: the shared spec publishes %s, want %s", tc.name, got, tc.want)
		}
	}
}
