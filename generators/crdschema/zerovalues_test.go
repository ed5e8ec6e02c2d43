package crdschema

import (
	"encoding/json"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestZeroConstraints: each constraint the zero value fails, or a CEL rule
// that gives another outcome on the zero value than on the field left out,
// is named; what the zero value passes is not.
func TestZeroConstraints(t *testing.T) {
	var parent apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{
		"n":{"type":"integer"},"size":{"type":"integer"},"sizes":{"type":"integer"},"x":{"type":"integer"},
		"y":{"type":"integer"},"req":{"type":"string"},"l":{"type":"array","items":{"type":"string"}}},
		"x-kubernetes-validations":[{"rule":"!has(self.size) || self.size > 1"},{"rule":"has(self.x)"},
		{"rule":"!has(self.y) || self.y >= 0"},{"rule":"self.req.size() > 0 || !has(self.l)"},
		{"rule":"!has(self.n) || self.n == oldSelf.n"}]}`), &parent); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		shape  zeroShape
		name   string
		schema string
		want   string
	}{
		{zeroNumber, "n", `{"type":"integer","minimum":1}`, "Minimum=1, the transition rule \"!has(self.n) || self.n == oldSelf.n\" on the object holding it (not evaluated)"},
		{zeroNumber, "m", `{"type":"integer","minimum":0,"exclusiveMinimum":true}`, "ExclusiveMinimum=0"},
		{zeroNumber, "m", `{"type":"integer","maximum":-1}`, "Maximum=-1"},
		{zeroNumber, "m", `{"type":"integer","enum":[1,2]}`, "Enum=1;2 (without 0)"},
		{zeroString, "s", `{"type":"string","enum":["A"]}`, `Enum="A" (without "")`},
		{zeroString, "s", `{"type":"string","minLength":1}`, "MinLength=1"},
		{zeroString, "s", `{"type":"string","pattern":"^a+$"}`, "Pattern=^a+$"},
		{zeroStruct, "o", `{"type":"object","minProperties":1}`, "MinProperties=1"},
		{zeroMap, "mp", `{"type":"object","minProperties":2}`, "MinProperties=2"},
		{zeroSlice, "ls", `{"type":"array","minItems":1}`, "MinItems=1"},
		// CEL rules on the field, run on the zero value.
		{zeroNumber, "m", `{"type":"integer","x-kubernetes-validations":[{"rule":"self > 0"}]}`, `the CEL rule "self > 0" on the field`},
		{zeroSlice, "ls", `{"type":"array","items":{"type":"string"},"x-kubernetes-validations":[{"rule":"size(self) > 0"}]}`, `the CEL rule "size(self) > 0" on the field`},
		{zeroMap, "mp", `{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-validations":[{"rule":"self.size() != 0"}]}`, `the CEL rule "self.size() != 0" on the field`},
		{zeroString, "s", `{"type":"string","x-kubernetes-validations":[{"rule":"self == oldSelf"}]}`, `the transition rule "self == oldSelf" on the field (not evaluated)`},
		// CEL rules of the object holding it, with and without the field.
		{zeroNumber, "size", `{"type":"integer"}`, `the CEL rule "!has(self.size) || self.size > 1" on the object holding it`},
		{zeroNumber, "x", `{"type":"integer"}`, `the CEL rule "has(self.x)" on the object holding it`},
		{zeroSlice, "l", `{"type":"array","items":{"type":"string"}}`, `the CEL rule "self.req.size() > 0 || !has(self.l)" on the object holding it`},
		// What the zero value passes, rules that give the same outcome with
		// and without the field, and rules that do not mention the field.
		{zeroNumber, "m", `{"type":"integer","minimum":0,"maximum":10}`, ""},
		{zeroNumber, "m", `{"type":"integer","enum":[0,1]}`, ""},
		{zeroString, "s", `{"type":"string","enum":["","A"],"maxLength":3,"pattern":"^a*$"}`, ""},
		{zeroSlice, "ls", `{"type":"array","minItems":0,"maxItems":3}`, ""},
		{zeroNumber, "m", `{"type":"integer","x-kubernetes-validations":[{"rule":"self != 5"}]}`, ""},
		{zeroSlice, "ls", `{"type":"array","items":{"type":"string"},"x-kubernetes-validations":[{"rule":"self.all(x, x.size() > 0)"}]}`, ""},
		{zeroMap, "mp", `{"type":"object","additionalProperties":{"type":"string"},"x-kubernetes-validations":[{"rule":"self.all(k, self[k] != '')"}]}`, ""},
		{zeroNumber, "y", `{"type":"integer"}`, ""},
		{zeroNumber, "sizes", `{"type":"integer"}`, ""},
	} {
		var p apiextensionsv1.JSONSchemaProps
		if err := json.Unmarshal([]byte(c.schema), &p); err != nil {
			t.Fatal(err)
		}
		var zero any = zeroJSON(c.shape)
		if c.shape == zeroNumber {
			zero = int64(0)
		}
		got := strings.Join(zeroConstraints(c.shape, c.name, &p, &parent, false, zero, map[string]any{}), ", ")
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
