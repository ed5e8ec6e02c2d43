package apidocs

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/apidocstest"
)

// widgetSchema has a constraint of every kind the reference puts in words.
const widgetSchema = `{"type":"object","description":"Widget is a widget.","x-kubernetes-validations":[{"rule":"self.metadata.name.size() < 30","message":"the name is too long"}],
"properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},"metadata":{"type":"object"},
"spec":{"type":"object","description":"WidgetSpec is what a widget should be.","required":["size"],
 "x-kubernetes-validations":[{"rule":"!has(self.min) || self.min <= self.size","message":"min must not exceed size"}],
 "properties":{
  "size":{"type":"integer","format":"int32","description":"Size in units.\n\nSupport: Core <gateway:util>","minimum":1,"maximum":100,"default":3},
  "min":{"type":"integer","description":"Min size.","exclusiveMinimum":true,"minimum":0,"x-kubernetes-validations":[{"rule":"self  >= 0 || self.string().matches(r\"\"\"^(\\*\\.)?[0-9]$\"\"\")","message":"matching ^(\\*\\.)?[0-9]$ with ticks"}]},
  "class":{"type":"string","description":"Class, fixed once set.","x-kubernetes-validations":[{"rule":"self == oldSelf","message":"class is immutable"}]},
  "mode":{"type":"string","description":"Mode of work.","enum":["Fast","Slow"]},
  "name":{"type":"string","description":"Name of it.","minLength":1,"maxLength":63,"pattern":"^[a-z]+$"},
  "tags":{"type":"array","description":"Tags.","x-kubernetes-list-type":"set","maxItems":5,"items":{"type":"string","maxLength":10}},
  "ports":{"type":"array","description":"Ports by name.","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","protocol"],
   "items":{"type":"object","description":"Port is a port.","required":["name"],"x-kubernetes-validations":[{"rule":"self.port > 0","messageExpression":"'bad port'","message":"the port must be positive"}],
    "properties":{"name":{"type":"string","description":"Name of the port."},"protocol":{"type":"string","description":"Protocol.","default":"TCP"},"port":{"type":"integer","description":"Number."}}}},
  "labels":{"type":"object","description":"Labels.","x-kubernetes-map-type":"granular","additionalProperties":{"type":"string","maxLength":7}},
  "backup":{"type":"object","description":"Backup is a second port.","properties":{"name":{"type":"string","description":"Name of the port."}}}}},
"status":{"type":"object","description":"WidgetStatus.","properties":{"ready":{"type":"boolean","description":"Ready."}}}}}`

func widgetGroups(t *testing.T) []Group {
	var s apiextensionsv1.JSONSchemaProps
	if err := yaml.Unmarshal([]byte(widgetSchema), &s); err != nil {
		t.Fatal(err)
	}
	k := &model.Kind{KindDescriptor: project.KindDescriptor{Group: "shop", Version: "v1", Kind: "Widget", Plural: "widgets", Singular: "widget",
		ShortNames: []string{"wd"}, Categories: []string{"all"}, Scope: project.Cluster},
		StatusSubresource: true, Scale: &model.ScaleSubresource{SpecPath: ".spec.size", StatusPath: ".status.size"},
		Versions: []string{"v1"}, StorageVersion: "v1",
		PrintColumns:     []model.PrintColumn{{Name: "Size", Type: "integer", JSONPath: ".spec.size", Description: "the size"}},
		SelectableFields: []string{".spec.mode"}, Subresources: []model.RESTSubresource{{Path: "restart", Request: "WidgetRestart"}}}
	return []Group{{Name: "shop.example.com", Package: "shop", Versions: []Version{{Name: "v1", Kinds: []Kind{{Kind: k, Group: "shop.example.com", Schema: &s, Sample: "kind: Widget\n", SamplePath: "config/samples/shop_v1_widget.yaml"}}}}}}
}

// TestMarkdown: every field with its description and constraints, the
// kind's markers, CEL rules with their messages, immutability, nested
// objects once with links, the sample.
func TestMarkdown(t *testing.T) {
	groups := widgetGroups(t)
	md := string(Markdown(groups)["shop.example.com.md"])
	t.Log(md)
	if missing := apidocstest.Missing(md, groups[0].Versions[0].Kinds[0].Schema, true); len(missing) > 0 {
		t.Errorf("missing from the page:\n%s", strings.Join(missing, "\n"))
	}
	for _, want := range []string{
		"| Scope | Cluster |", "| Short names | `wd` |", "| Categories | `all` |", "| Storage version | `v1` (this version) |",
		"`scale` (replicas `.spec.size`, `.status.size`)", "`restart` (POST, request `WidgetRestart`)", "| Selectable fields | `.spec.mode` |",
		"| Size | integer | `.spec.size` | 0 | the size |",
		"- `.spec.size` (integer (int32), required): Size in units.<br>Support: Core &lt;gateway:util>", "Default: `3`.", "At least 1.", "At most 100.", "Greater than 0.",
		"Immutable once set. Rule `self == oldSelf`, else: `class is immutable`.",
		"1 to 63 characters.", "Matches the pattern `^[a-z]+$`.", "One of `\"Fast\"`, `\"Slow\"`.",
		"List type `set`", "At most 5 items.", "`.spec.tags[]`: At most 10 characters.",
		"List type `map`: items are keyed by `name` and `protocol`",
		"`.spec.labels{}`: At most 7 characters.", "Map type `granular`.",
		"Rule `self.metadata.name.size() < 30`, else: `the name is too long`.",
		"- `.spec.ports` ([list of object](#v1-widget-spec-portsitems), optional)",
		"<a id=\"v1-widget-spec-portsitems\"></a>", "Rule `self.port > 0`, else: `the port must be positive`",
		"else: `matching ^(\\*\\.)?[0-9]$ with ticks`",
		"Sample (`config/samples/shop_v1_widget.yaml`):\n\n```yaml\nkind: Widget\n```",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the page does not say %q", want)
		}
	}
	if n := strings.Count(md, "Name of the port."); n != 2 {
		t.Errorf("the port's name is described %d times, want 2 (ports[] and backup, different objects)", n)
	}
}

// TestMarkdownLinksNotRepeats: an object met twice on a page (the same
// schema in two versions) is described once and linked from both.
func TestMarkdownLinksNotRepeats(t *testing.T) {
	groups := widgetGroups(t)
	v2 := groups[0].Versions[0]
	v2.Name = "v2"
	groups[0].Versions = append([]Version{v2}, groups[0].Versions...)
	md := string(Markdown(groups)["shop.example.com.md"])
	if n := strings.Count(md, "- `.spec.ports[].protocol` ("); n != 1 {
		t.Errorf("the port object is described %d times, want once", n)
	}
	if !strings.Contains(md, "- `.spec.ports` ([list of object](#v2-widget-spec-portsitems), optional)") {
		t.Error("v1's ports do not link to v2's description")
	}
}

// TestMissingFindsGaps: the check fails on a page missing a description or
// a rule's message.
func TestMissingFindsGaps(t *testing.T) {
	groups := widgetGroups(t)
	md := string(Markdown(groups)["shop.example.com.md"])
	s := groups[0].Versions[0].Kinds[0].Schema
	for _, cut := range []string{"Size in units.", "min must not exceed size", "At most 7 characters.", "List type `map`"} {
		if len(apidocstest.Missing(strings.Replace(md, cut, "", 1), s, true)) == 0 {
			t.Errorf("without %q the page passes", cut)
		}
	}
}

// TestHTML: the site's pages, with a description's "<" shown as text.
func TestHTML(t *testing.T) {
	site, err := HTML(widgetGroups(t))
	if err != nil {
		t.Fatal(err)
	}
	page := string(site["shop.example.com.html"])
	for _, want := range []string{"Support: Core &lt;gateway:util&gt;", `<a id="v1-widget"></a>`, `href="shop.example.com.html#v1-widget"`, "<table>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not hold %q", want)
		}
	}
	if !strings.Contains(string(site["index.html"]), `<a href="shop.example.com.html#v1-widget">Widget</a>`) {
		t.Errorf("index.html does not link Widget:\n%s", site["index.html"])
	}
}
