package generators

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// sampleTestSchema has required fields of every shape a sample must fill.
const sampleTestSchema = `{"type":"object","properties":{
 "apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
 "spec":{"type":"object","required":["schedule","replicas","mode","image","ports","labels","start","ratio","enabled","nested"],
  "properties":{
   "schedule":{"type":"string","minLength":9,"pattern":"^[0-9*/ ,-]+$"},
   "replicas":{"type":"integer","format":"int32","minimum":3,"maximum":10},
   "mode":{"type":"string","enum":["Fast","Slow"]},
   "image":{"type":"string","default":"nginx:1"},
   "ports":{"type":"array","minItems":2,"items":{"type":"integer","minimum":1,"maximum":65535}},
   "labels":{"type":"object","minProperties":1,"additionalProperties":{"type":"string","maxLength":3}},
   "start":{"type":"string","format":"date-time"},
   "ratio":{"type":"number","exclusiveMinimum":true,"minimum":0.5},
   "enabled":{"type":"boolean"},
   "nested":{"type":"object","required":["name"],"properties":{"name":{"type":"string","pattern":"^[a-z]+(\\.[a-z]+)+$"},"optional":{"type":"string"}}},
   "optional":{"type":"string"}}},
 "status":{"type":"object","required":["phase"],"properties":{"phase":{"type":"string"}}}}}`

// TestSampleIsValid: a sample fills every required field with a value its
// schema accepts (the validator the server uses), and leaves status out.
func TestSampleIsValid(t *testing.T) {
	var v1 apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(sampleTestSchema), &v1); err != nil {
		t.Fatal(err)
	}
	b, err := Sample("stable.example.com", "v1", "CronTab", &v1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b)
	var obj map[string]any
	if err := yaml.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	if obj["apiVersion"] != "stable.example.com/v1" || obj["kind"] != "CronTab" || obj["metadata"].(map[string]any)["name"] != "crontab-sample" {
		t.Errorf("header of the object: %v", obj)
	}
	if _, ok := obj["status"]; ok {
		t.Error("the sample has a status")
	}
	if msg := invalidSample(b, &v1); msg != "" {
		t.Errorf("the sample is not valid: %s", msg)
	}
	spec := obj["spec"].(map[string]any)
	for _, name := range v1.Properties["spec"].Required {
		if _, ok := spec[name]; !ok {
			t.Errorf("required spec.%s is missing", name)
		}
	}
	if _, ok := spec["optional"]; ok {
		t.Error("an optional field is filled")
	}
}

// TestSampleOwnership: generate rewrites a sample only while it is what it
// wrote; an edited one, or one without the header, is the user's.
func TestSampleOwnership(t *testing.T) {
	var v1 apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(sampleTestSchema), &v1); err != nil {
		t.Fatal(err)
	}
	b, err := Sample("stable.example.com", "v1", "CronTab", &v1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "sample.yaml")
	for _, c := range []struct {
		name    string
		content string
		owned   bool
	}{
		{"absent", "", false},
		{"as generated", string(b), false},
		{"edited", strings.Replace(string(b), "crontab-sample", "mine", 1), true},
		{"comment added", string(b) + "# note\n", true},
		{"no header", string(b[strings.Index(string(b), "apiVersion"):]), true},
	} {
		os.Remove(path)
		if c.content != "" {
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		owned, err := userOwnedSample(path)
		if err != nil {
			t.Fatal(err)
		}
		if owned != c.owned {
			t.Errorf("%s: user's = %v, want %v", c.name, owned, c.owned)
		}
	}
}

// TestSampleSatisfiesCELRules: optional fields are added where a CEL rule
// (evaluated after defaulting, as the server does) wants one, as in Gateway
// API's BackendTLSPolicy and route backendRefs.
func TestSampleSatisfiesCELRules(t *testing.T) {
	const schema = `{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
"spec":{"type":"object","required":["validation","refs"],"properties":{
 "validation":{"type":"object","required":["hostname"],
  "x-kubernetes-validations":[{"rule":"(has(self.caRefs) && size(self.caRefs) > 0) || has(self.wellKnown)","message":"must specify either caRefs or wellKnown"}],
  "properties":{"hostname":{"type":"string","minLength":1},"caRefs":{"type":"array","maxItems":8,"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string","minLength":1}}}},"wellKnown":{"type":"string","enum":["System"]}}},
 "refs":{"type":"array","minItems":1,"items":{"type":"object","required":["name"],
  "x-kubernetes-validations":[{"rule":"self.kind == 'Service' ? has(self.port) : true","message":"Must have port for Service reference"}],
  "properties":{"name":{"type":"string"},"kind":{"type":"string","default":"Service"},"port":{"type":"integer","minimum":1,"maximum":65535}}}}}}}}`
	var v1 apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(schema), &v1); err != nil {
		t.Fatal(err)
	}
	b, err := Sample("gateway.networking.k8s.io", "v1", "Policy", &v1)
	if err != nil {
		t.Fatal(err)
	}
	if msg := invalidSample(b, &v1); msg != "" {
		t.Errorf("the sample is refused: %s\n%s", msg, b)
	}
	if !strings.Contains(string(b), "port: 1") {
		t.Errorf("no port in the reference:\n%s", b)
	}
}
