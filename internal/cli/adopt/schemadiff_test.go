package adopt

import (
	"errors"
	"strings"
	"testing"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func mustStructural(t *testing.T, p *apiextv1.JSONSchemaProps) *structuralschema.Structural {
	t.Helper()
	s, err := structural(p)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func jsonOf(s string) *apiextv1.JSON { return &apiextv1.JSON{Raw: []byte(s)} }

func ptr[T any](v T) *T { return &v }

// diffCRDSchema has one of each kind of setting that the project's schema
// (diffProjectSchema) changes, drops or adds.
func diffCRDSchema() *apiextv1.JSONSchemaProps {
	return &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"metadata": {Type: "object"},
		"spec": {Type: "object", Required: []string{"image"},
			XValidations: apiextv1.ValidationRules{{Rule: "self.a < self.b", Message: "a before b"}, {Rule: "has(self.image)", Message: "kept"}},
			Properties: map[string]apiextv1.JSONSchemaProps{
				"image": {Type: "string", Format: "ipv4", Pattern: "^[0-9.]+$", MaxLength: ptr[int64](15), Description: "the address"},
				"mode":  {Type: "string", Enum: []apiextv1.JSON{*jsonOf(`"b"`), *jsonOf(`"a"`)}, Default: jsonOf(`"a"`)},
				"ports": {Type: "array", XListType: ptr("map"), XListMapKeys: []string{"port"}, MaxItems: ptr[int64](4),
					Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object", Required: []string{"port"}, Properties: map[string]apiextv1.JSONSchemaProps{
						"port": {Type: "integer", Minimum: ptr(1.0), Maximum: ptr(65535.0)},
					}}}},
				"labels": {Type: "object", XMapType: ptr("granular"),
					AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "string", MaxLength: ptr[int64](63)}}},
				"extra": {Type: "string"},
				"count": {Type: "integer", Nullable: true, MultipleOf: ptr(2.0)},
			}},
		"status": {Type: "object", XPreserveUnknownFields: ptr(true)},
	}}
}

func diffProjectSchema() *apiextv1.JSONSchemaProps {
	return &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"metadata": {Type: "object"},
		"spec": {Type: "object", Required: []string{"mode"},
			XValidations: apiextv1.ValidationRules{{Rule: "self.a <= self.b"}, {Rule: "has(self.image)", Message: "another message"}},
			Properties: map[string]apiextv1.JSONSchemaProps{
				"image": {Type: "string", Description: "another description", Title: "a title"},
				"mode":  {Type: "string", Enum: []apiextv1.JSON{*jsonOf(`"a"`), *jsonOf(`"b"`)}, Default: jsonOf(`"b"`)},
				"ports": {Type: "array", XListType: ptr("atomic"),
					Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object", Required: []string{"port"}, Properties: map[string]apiextv1.JSONSchemaProps{
						"port": {Type: "integer", Minimum: ptr(0.0), Maximum: ptr(65535.0)},
					}}}},
				"labels": {Type: "object",
					AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "string"}}},
				"count": {Type: "number"},
				"added": {Type: "boolean"},
			}},
		"status": {Type: "object"},
	}}
}

// TestSchemaDiff: each kind of difference is one line, by path, sorted;
// descriptions, titles, rule messages and the order of an enum are none.
func TestSchemaDiff(t *testing.T) {
	got := schemaDiff(mustStructural(t, diffCRDSchema()), mustStructural(t, diffProjectSchema()))
	want := []string{
		`.spec.added: declared in the project, not in the CRD`,
		`.spec.count: multipleOf 2 in the CRD, none in the project`,
		`.spec.count: nullable in the CRD, not in the project`,
		`.spec.count: type "integer" in the CRD, "number" in the project`,
		`.spec.extra: declared in the CRD, not in the project`,
		`.spec.image: format "ipv4" in the CRD, none in the project`,
		`.spec.image: maxLength 15 in the CRD, none in the project`,
		`.spec.image: pattern "^[0-9.]+$" in the CRD, none in the project`,
		`.spec.image: required in the CRD, not in the project`,
		`.spec.labels.*: maxLength 63 in the CRD, none in the project`,
		`.spec.labels: x-kubernetes-map-type "granular" in the CRD, none in the project`,
		`.spec.mode: default "a" in the CRD, "b" in the project`,
		`.spec.mode: required in the project, not in the CRD`,
		`.spec.ports: maxItems 4 in the CRD, none in the project`,
		`.spec.ports: x-kubernetes-list-map-keys ["port"] in the CRD, none in the project`,
		`.spec.ports: x-kubernetes-list-type "map" in the CRD, "atomic" in the project`,
		`.spec.ports[*].port: minimum 1 in the CRD, 0 in the project`,
		`.spec: rule "self.a < self.b" in the CRD, not in the project`,
		`.spec: rule "self.a <= self.b" in the project, not in the CRD`,
		`.status: x-kubernetes-preserve-unknown-fields in the CRD, not in the project`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The other way round, every line says the opposite.
	back := schemaDiff(mustStructural(t, diffProjectSchema()), mustStructural(t, diffCRDSchema()))
	if len(back) != len(want) || !strings.Contains(strings.Join(back, "\n"), `.spec.image: format none in the CRD, "ipv4" in the project`) {
		t.Errorf("reversed:\n%s", strings.Join(back, "\n"))
	}

	// Only descriptions, titles and rule messages differ: equal.
	same := diffCRDSchema()
	spec := same.Properties["spec"]
	spec.Description = "another"
	spec.XValidations = apiextv1.ValidationRules{{Rule: "has(self.image)"}, {Rule: "self.a < self.b", Message: "another"}}
	same.Properties["spec"] = spec
	same.Title = "CronTab"
	if d := schemaDiff(mustStructural(t, diffCRDSchema()), mustStructural(t, same)); len(d) != 0 {
		t.Errorf("schemas that differ only in descriptions, titles and messages: %q, want none", d)
	}

	// Root rules, a key that is no identifier, additionalProperties, anyOf,
	// enum, the other bounds.
	c := &apiextv1.JSONSchemaProps{Type: "object", XValidations: apiextv1.ValidationRules{{Rule: "self.metadata.name.size() < 10"}},
		Properties: map[string]apiextv1.JSONSchemaProps{"a.b": {Type: "object", AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "string"}}},
			"n": {AnyOf: []apiextv1.JSONSchemaProps{{Type: "integer"}, {Type: "string"}}, XIntOrString: true},
			"e": {Type: "string", Enum: []apiextv1.JSON{*jsonOf(`"x"`), *jsonOf(`"y"`)}, MinLength: ptr[int64](1)},
			"l": {Type: "array", MinItems: ptr[int64](1), Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "string"}}},
			"m": {Type: "object", MaxProperties: ptr[int64](3), AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "integer", Maximum: ptr(9.0), ExclusiveMaximum: true}}}}}
	p := &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"a.b": {Type: "object"}, "n": {Type: "string"},
		"e": {Type: "string", Enum: []apiextv1.JSON{*jsonOf(`"x"`)}},
		"l": {Type: "array", XListType: ptr("set"), Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "string"}}},
		"m": {Type: "object", MinProperties: ptr[int64](1), AdditionalProperties: &apiextv1.JSONSchemaPropsOrBool{Allows: true, Schema: &apiextv1.JSONSchemaProps{Type: "integer", Maximum: ptr(9.0)}}}}}
	got = schemaDiff(mustStructural(t, c), mustStructural(t, p))
	want = []string{
		`.: rule "self.metadata.name.size() < 10" in the CRD, not in the project`,
		`.["a.b"]: additionalProperties a schema in the CRD, none in the project`,
		`.e: enum ["x","y"] in the CRD, ["x"] in the project`,
		`.e: minLength 1 in the CRD, none in the project`,
		`.l: minItems 1 in the CRD, none in the project`,
		`.l: x-kubernetes-list-type none in the CRD, "set" in the project`,
		`.m.*: exclusiveMaximum in the CRD, not in the project`,
		`.m: maxProperties 3 in the CRD, none in the project`,
		`.m: minProperties none in the CRD, 1 in the project`,
		`.n: anyOf [{"type":"integer"},{"type":"string"}] in the CRD, none in the project`,
		`.n: type none in the CRD, "string" in the project`,
		`.n: x-kubernetes-int-or-string in the CRD, not in the project`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestLostFields: a field the CRD declares and the project's schema does
// not, or that the CRD keeps as unknown and the project prunes, is named
// by its schema path with the objects that hold it (up to five, and a
// count); fields no object holds, or that the project keeps, are not.
func TestLostFields(t *testing.T) {
	crdSchema := &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"metadata": {Type: "object"},
		"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
			"schedule": {Type: "string"},
			"extra":    {Type: "string"},
			"unused":   {Type: "string"},
			"ports": {Type: "array", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
				"port": {Type: "integer"}, "name": {Type: "string"},
			}}}},
			"config": {Type: "object", XPreserveUnknownFields: ptr(true)},
			"kept":   {Type: "object", XPreserveUnknownFields: ptr(true)},
		}},
	}}
	projectSchema := &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"metadata": {Type: "object"},
		"spec": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
			"schedule": {Type: "string"},
			"ports": {Type: "array", Items: &apiextv1.JSONSchemaPropsOrArray{Schema: &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
				"port": {Type: "integer"},
			}}}},
			"config": {Type: "object"},
			"kept":   {Type: "object", XPreserveUnknownFields: ptr(true)},
		}},
	}}
	var objs []*unstructured.Unstructured
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		o := crontab(n)
		o.Object["spec"] = map[string]any{"schedule": "* * * * *", "extra": "x", "kept": map[string]any{"any": "thing"}}
		delete(o.Object, "status") // the CRD's schema declares none
		objs = append(objs, o)
	}
	objs[0].Object["spec"].(map[string]any)["ports"] = []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(443), "name": "https"}}
	objs[1].Object["spec"].(map[string]any)["config"] = map[string]any{"level": "debug"}
	delete(objs[6].Object["spec"].(map[string]any), "extra")

	var lines []string
	for _, f := range lostFields(objs, mustStructural(t, crdSchema), mustStructural(t, projectSchema)) {
		lines = append(lines, f.line("crontabs.stable.example.com v1: ", ""))
	}
	want := []string{
		"crontabs.stable.example.com v1: .spec.config.level: kept by the CRD (x-kubernetes-preserve-unknown-fields), not declared in the project: the copy would prune it from 1 stored objects (default/b): declare it in the project's schema, or remove it from the objects",
		"crontabs.stable.example.com v1: .spec.extra: declared in the CRD, not in the project: the copy would prune it from 6 stored objects (default/a, default/b, default/c, default/d, default/e and 1 more): declare it in the project's schema, or remove it from the objects",
		"crontabs.stable.example.com v1: .spec.ports[*].name: declared in the CRD, not in the project: the copy would prune it from 1 stored objects (default/a): declare it in the project's schema, or remove it from the objects",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if lost := lostFields(objs, mustStructural(t, crdSchema), mustStructural(t, crdSchema)); len(lost) != 0 {
		t.Errorf("the CRD's own schema prunes %+v", lost[0])
	}
}

// TestPlanSchemas: the plan (dry run and real run) lists each difference
// between the CRD's schema and the project's per kind and version, says
// when they are equal, refuses a field stored objects hold that the copy
// would prune (nothing changed), and only warns when the project's
// apiserver predates the schemas endpoint.
func TestPlanSchemas(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	out, err := f.run(Options{DryRun: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "\n  crontabs.stable.example.com v1: schemas equal\n", "dry run: the adoption can go ahead")

	// Differences no stored object is hurt by are listed, not refused.
	f = newFakeCluster(t, crontab("a"))
	p := crontabSchema()
	spec := p.Properties["spec"]
	spec.Properties["schedule"] = apiextv1.JSONSchemaProps{Type: "string", Pattern: `^\S+ \S+ \S+ \S+ \S+$`}
	spec.Properties["suspend"] = apiextv1.JSONSchemaProps{Type: "boolean", Default: jsonOf("false")}
	p.Properties["spec"] = spec
	f.schemas["v1"] = p
	out, err = f.run(Options{DryRun: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "; 1 objects\n"+
		`  crontabs.stable.example.com v1: .spec.schedule: pattern none in the CRD, "^\\S+ \\S+ \\S+ \\S+ \\S+$" in the project`+"\n"+
		"  crontabs.stable.example.com v1: .spec.suspend: declared in the project, not in the CRD\n",
		"dry run: the adoption can go ahead")
	if strings.Contains(out, "schemas equal") {
		t.Errorf("different schemas said equal:\n%s", out)
	}

	// A field the CRD declares, held by stored objects, that the project's
	// schema lacks: refused by name, dry run or not, nothing changed.
	for _, dry := range []bool{true, false} {
		f = newFakeCluster(t, crontab("a"), crontab("b"))
		p = crontabSchema()
		delete(p.Properties["status"].Properties, "active")
		f.schemas["v1"] = p
		out, err = f.run(Options{DryRun: dry})
		if !errors.Is(err, ErrRefused) {
			t.Errorf("dry run %v: want a refusal, got %v\n%s", dry, err, out)
		}
		wantLines(t, out, "  crontabs.stable.example.com v1: .status.active: declared in the CRD, not in the project\n",
			"crontabs.stable.example.com v1: .status.active: declared in the CRD, not in the project: the copy would prune it from 2 stored objects (default/a, default/b): "+
				"declare it in the project's types, or put the CRD's manifest at config/crd/bases/stable.example.com_crontabs.yaml to serve its schema, or remove it from the objects\n")
		if f.routed() || !f.crdServed() || f.pauseExists() || f.tempExists() || len(f.project) > 0 {
			t.Errorf("dry run %v: a refused run changed something:\n%s", dry, out)
		}
	}

	// A project serving a manifest already is told to declare the field there.
	f = newFakeCluster(t, crontab("a"))
	f.schemas["v1"], f.manifest = p, "config/crd/bases/stable.example.com_crontabs.yaml"
	out, _ = f.run(Options{DryRun: true})
	wantLines(t, out, "crontabs.stable.example.com v1: .status.active: declared in the CRD, not in the project: the copy would prune it from 1 stored objects (default/a): "+
		"declare it in the project's schema, or remove it from the objects\n")

	// The same difference with no object holding the field: listed only.
	b := crontab("b")
	delete(b.Object, "status")
	f = newFakeCluster(t, b)
	f.schemas["v1"] = p
	out, err = f.run(Options{DryRun: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "  crontabs.stable.example.com v1: .status.active: declared in the CRD, not in the project\n", "dry run: the adoption can go ahead")

	// An older build of the project: a warning naming why, and the plan goes on.
	f = newFakeCluster(t, crontab("a"))
	f.oldBuild = true
	f.schemas["v1"] = p // not served: nothing is compared, nothing refused
	out, err = f.run(Options{DryRun: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "\nwarning: crontabs.stable.example.com: cannot compare the CRD's schema with the project's: the project's apiserver predates the adoption API's schemas (GET /apis/adoption.apiserver-boot.io/v1alpha1/crontabs.stable.example.com/schemas answered 404 Not Found)",
		"dry run: the adoption can go ahead")

	// The project has no schema for the version: said, not refused.
	f = newFakeCluster(t, crontab("a"))
	f.schemas["v1"] = nil
	out, err = f.run(Options{DryRun: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "\nwarning: crontabs.stable.example.com v1: cannot compare the schemas: the project's apiserver has no schema for v1\n")

	// kube-apiserver authorizes the GET it forwards as a get of
	// <plural>.<group> in the adoption API's group: asked for up front.
	f = newFakeCluster(t, crontab("a"))
	f.denied["get adoption.apiserver-boot.io crontabs.stable.example.com"] = true
	out, err = f.run(Options{DryRun: true})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("want a refusal, got %v\n%s", err, out)
	}
	wantLines(t, out, `missing permission: verb "get" on "crontabs.stable.example.com" in API group "adoption.apiserver-boot.io"`)
}
