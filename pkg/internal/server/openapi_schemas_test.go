package server

import (
	"encoding/json"
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
