package crdschema

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestZeroConstraints: each constraint the zero value fails, or a CEL rule
// that can tell it from the field left out, is named; what the zero value
// passes is not.
func TestZeroConstraints(t *testing.T) {
	parent := &apiextensionsv1.JSONSchemaProps{XValidations: apiextensionsv1.ValidationRules{{Rule: "!has(self.size) || self.size > 1"}}}
	for _, c := range []struct {
		shape  zeroShape
		name   string
		schema string
		want   string
	}{
		{zeroNumber, "n", `{"type":"integer","minimum":1}`, "Minimum=1"},
		{zeroNumber, "n", `{"type":"integer","minimum":0,"exclusiveMinimum":true}`, "ExclusiveMinimum=0"},
		{zeroNumber, "n", `{"type":"integer","maximum":-1}`, "Maximum=-1"},
		{zeroNumber, "n", `{"type":"integer","enum":[1,2]}`, "Enum=1;2 (without 0)"},
		{zeroString, "s", `{"type":"string","enum":["A"]}`, `Enum="A" (without "")`},
		{zeroString, "s", `{"type":"string","minLength":1}`, "MinLength=1"},
		{zeroString, "s", `{"type":"string","pattern":"^a+$"}`, "Pattern=^a+$"},
		{zeroStruct, "o", `{"type":"object","minProperties":1}`, "MinProperties=1"},
		{zeroMap, "m", `{"type":"object","minProperties":2}`, "MinProperties=2"},
		{zeroSlice, "l", `{"type":"array","minItems":1}`, "MinItems=1"},
		{zeroNumber, "n", `{"type":"integer","x-kubernetes-validations":[{"rule":"self != 5"}]}`, `the CEL rule "self != 5" on the field`},
		{zeroNumber, "size", `{"type":"integer"}`, `the CEL rule "!has(self.size) || self.size > 1" on the object holding it`},
		// What the zero value passes, and rules that do not mention the field.
		{zeroNumber, "n", `{"type":"integer","minimum":0,"maximum":10}`, ""},
		{zeroNumber, "n", `{"type":"integer","enum":[0,1]}`, ""},
		{zeroString, "s", `{"type":"string","enum":["","A"],"maxLength":3,"pattern":"^a*$"}`, ""},
		{zeroSlice, "l", `{"type":"array","minItems":0,"maxItems":3}`, ""},
		{zeroNumber, "sizes", `{"type":"integer"}`, ""},
	} {
		var p apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal([]byte(c.schema), &p); err != nil {
			t.Fatal(err)
		}
		got := strings.Join(zeroConstraints(c.shape, c.name, &p, parent), ", ")
		if got != c.want {
			t.Errorf("%s %s: got %q, want %q", c.name, c.schema, got, c.want)
		}
	}
	var p apiextensionsv1.JSONSchemaProps
	json.Unmarshal([]byte(`{"type":"integer","default":3}`), &p)
	if d := zeroDefault(zeroNumber, &p); d != "3" {
		t.Errorf("default: %q", d)
	}
	json.Unmarshal([]byte(`{"type":"integer","default":0}`), &p)
	if d := zeroDefault(zeroNumber, &p); d != "" {
		t.Errorf("a zero default needs no warning: %q", d)
	}
}
