package server

import (
	"encoding/json"
	"strings"
	"testing"

	"k8s.io/kube-openapi/pkg/builder3"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// timerDefinitions is what openapi-gen writes for a kind whose status holds
// conditions of a type from another module, a package without
// +k8s:openapi-gen (a reference to a definition it does not write), and
// whose spec holds a struct with its own JSON encoding (described as the
// struct it is in Go).
func timerDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	obj := func(props map[string]spec.Schema, deps ...string) common.OpenAPIDefinition {
		return common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: props}}, Dependencies: deps}
	}
	refTo := func(name string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(name)}}
	}
	return map[string]common.OpenAPIDefinition{
		"m.Timer": obj(map[string]spec.Schema{"spec": refTo("m.TimerSpec"), "status": refTo("m.TimerStatus")}, "m.TimerSpec", "m.TimerStatus"),
		"m.TimerSpec": obj(map[string]spec.Schema{
			"interval": {SchemaProps: spec.SchemaProps{Description: "Interval between two firings.", Ref: ref("m.Duration")}},
		}, "m.Duration"),
		"m.Duration": obj(map[string]spec.Schema{"Duration": {SchemaProps: spec.SchemaProps{Type: []string{"integer"}}}, "Raw": {SchemaProps: spec.SchemaProps{Type: []string{"string"}, Format: "byte"}}}),
		"m.TimerStatus": obj(map[string]spec.Schema{
			"conditions": {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{
				Default: map[string]any{}, Ref: ref("example.com/conditions/status.Condition")}}}}},
		}, "example.com/conditions/status.Condition"),
	}
}

// timerSchema is what controller-gen writes for it in the CRD.
const timerSchema = `{"type":"object","properties":{
  "spec":{"type":"object","required":["interval"],"properties":{"interval":{"type":"string","pattern":"^(([0-9]+(s|m|h))+|Never)$"}}},
  "status":{"type":"object","properties":{"conditions":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["type"],
    "items":{"type":"object","required":["status","type"],"properties":{
      "reason":{"type":"string"},"status":{"type":"string","enum":["True","False","Unknown"]},"type":{"type":"string","maxLength":64,"minLength":1}}}}}}}}`

// TestWithSchemasForeignTypes: a type of another module without OpenAPI
// definitions is published as controller-gen describes it in the CRD (the
// server started without it: "cannot find model definition"), and a field
// whose Go type is not its JSON is published as its schema says.
func TestWithSchemasForeignTypes(t *testing.T) {
	groups := []*builders.APIGroup{{Resources: []*builders.Resource{{Schemas: map[string]builders.Schema{"v1": {Model: "m.Timer", OpenAPIV3: timerSchema}}}}}}
	config := &common.OpenAPIV3Config{
		GetDefinitions:    WithSchemas(timerDefinitions, groups),
		GetDefinitionName: func(name string) (string, spec.Extensions) { return name, nil },
	}
	defs, err := builder3.BuildOpenAPIDefinitionsForResources(config, "m.Timer")
	if err != nil {
		t.Fatal(err)
	}
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	cond, ok := defs["example.com~1conditions~1status.Condition"] // escaped, as published
	if !ok {
		t.Fatalf("no definition of the condition type: %s", js(defs))
	}
	for _, want := range []string{`"required":["status","type"]`, `"enum":["True","False","Unknown"]`, `"maxLength":64`, `"minLength":1`, `"reason":{"type":"string"}`} {
		if !strings.Contains(js(cond), want) {
			t.Errorf("the condition's definition lacks %s:\n%s", want, js(cond))
		}
	}
	if got := js(defs["m.TimerStatus"].Properties["conditions"]); !strings.Contains(got, `"x-kubernetes-list-map-keys":["type"]`) ||
		!strings.Contains(got, `"$ref":"#/components/schemas/example.com~1conditions~1status.Condition"`) {
		t.Errorf("the conditions field: %s", got)
	}
	if strings.Contains(js(cond), "x-kubernetes-list") {
		t.Errorf("the field's list type leaked into the type's definition:\n%s", js(cond))
	}
	interval := js(defs["m.TimerSpec"].Properties["interval"])
	if interval != `{"description":"Interval between two firings.","type":"string","pattern":"^(([0-9]+(s|m|h))+|Never)$"}` {
		t.Errorf("interval is published as %s, want the string its schema declares", interval)
	}
}
