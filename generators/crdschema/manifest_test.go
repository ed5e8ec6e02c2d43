package crdschema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// widgetGo is a version's Widget: what controller-gen would describe in
// widgetManifest, before the manifest was edited.
func widgetGo(version, marker string) string {
	return `package ` + version + `

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// +resource:path=widgets
` + marker + `
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              WidgetSpec ` + "`json:\"spec,omitempty\"`" + `
}

// WidgetSpec is what a widget should be.
type WidgetSpec struct {
	// SKU names the widget.
	// +kubebuilder:validation:MaxLength=12
	SKU string ` + "`json:\"sku\"`" + `
	// Count of widgets.
	Count int32 ` + "`json:\"count,omitempty\"`" + `
	// Parts of the widget.
	Parts []Part ` + "`json:\"parts,omitempty\"`" + `
	// Experimental is left out of the standard channel's manifest.
	Experimental string ` + "`json:\"experimental,omitempty\"`" + `
	// Port is an int-or-string: any manifest type fits it.
	Port intstr.IntOrString ` + "`json:\"port,omitempty\"`" + `
}

type Part struct {
	Name string ` + "`json:\"name\"`" + `
}

type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Widget ` + "`json:\"items\"`" + `
}
`
}

// widgetManifest is Widget's CRD as controller-gen writes it from
// widgetGo, with spec given (the properties of spec, indented for it).
func widgetManifest(spec string, versions ...string) string {
	s := `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.shop.example.com
spec:
  group: shop.example.com
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: widget
  scope: Namespaced
  versions:
`
	for _, v := range versions {
		s += `  - name: ` + v + `
    served: true
    storage: ` + fmt.Sprint(v == versions[0]) + `
    schema:
      openAPIV3Schema:
        description: A widget of the manifest.
        type: object
        properties:
          apiVersion:
            type: string
          kind:
            type: string
          metadata:
            type: object
            properties:
              name:
                type: string
                maxLength: 20
          spec:
            type: object
` + spec
	}
	return s
}

// controllerGenSpec is spec's schema exactly as controller-gen writes it
// from widgetGo, less Experimental.
const controllerGenSpec = `            required:
            - sku
            properties:
              sku:
                type: string
                maxLength: 12
              count:
                type: integer
                format: int32
              port:
                type: string
              parts:
                type: array
                items:
                  type: object
                  required:
                  - name
                  properties:
                    name:
                      type: string
`

// loadProject writes a project (module example.com/shop, with this
// module's requirements) with files and reads its API.
func loadProject(t *testing.T, files map[string]string) *model.API {
	t.Helper()
	root := t.TempDir()
	gomod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	gosum, err := os.ReadFile("../../go.sum")
	if err != nil {
		t.Fatal(err)
	}
	files["go.mod"] = strings.Replace(string(gomod), "module github.com/apiserver-boot/apiserver-boot", "module example.com/shop", 1)
	files["go.sum"] = string(gosum)
	for rel, content := range files {
		path := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	api, err := model.LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "github.com/apiserver-boot/apiserver-boot", "")
	if err != nil {
		t.Fatal(err)
	}
	return api
}

func lineOf(t *testing.T, content, text string) int {
	t.Helper()
	for i, l := range strings.Split(content, "\n") {
		if strings.Contains(l, text) {
			return i + 1
		}
	}
	t.Fatalf("%q not in the content", text)
	return 0
}

const manifestPath = "config/crd/bases/shop.example.com_widgets.yaml"

// TestManifestIsTheSchema: a manifest edited after controller-gen (a CEL
// rule and a pattern added, Experimental left out, metadata with
// properties) is each served version's schema, with its path; metadata is
// {type: object} as controller-gen writes it but for the restriction of
// metadata.name, which kube-apiserver enforces for a CRD; descriptions are dropped
// (kept by GenerateDocumented). That the manifest and the markers differ is
// one warning for the kind (two versions), naming the manifest, the
// differences and the field pruned. A kind without a manifest keeps its
// markers' schema.
func TestManifestIsTheSchema(t *testing.T) {
	edited := strings.Replace(controllerGenSpec, "                maxLength: 12\n", "                maxLength: 12\n                pattern: ^[A-Z]{3}-[0-9]+$\n", 1) +
		`            x-kubernetes-validations:
            - rule: self.count <= 10 || self.sku.startsWith('BIG')
              message: more than 10 widgets are BIG ones
`
	manifest := widgetManifest(edited, "v1", "v1beta1")
	api := loadProject(t, map[string]string{
		"pkg/apis/shop/v1/widget_types.go":      widgetGo("v1", "// +storageversion"),
		"pkg/apis/shop/v1beta1/widget_types.go": widgetGo("v1beta1", ""),
		"pkg/apis/shop/v1/gadget_types.go":      strings.NewReplacer("Widget", "Gadget", "widgets", "gadgets", "type Part struct", "type GadgetPart struct", "[]Part", "[]GadgetPart").Replace(widgetGo("v1", "")),
		manifestPath:                            manifest,
	})
	schemas, warnings, err := Generate(api, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Schema{}
	for _, s := range schemas {
		got[s.Key()] = s
	}
	for _, v := range []string{"v1", "v1beta1"} {
		s := got["shop.example.com/"+v+"/Widget"]
		b, _ := json.Marshal(s.Schema)
		js := string(b)
		if s.Manifest != manifestPath {
			t.Errorf("%s: Manifest %q, want %s", v, s.Manifest, manifestPath)
		}
		for _, want := range []string{`"pattern":"^[A-Z]{3}-[0-9]+$"`, `"rule":"self.count \u003c= 10 || self.sku.startsWith('BIG')"`, `"metadata":{"type":"object","properties":{"name":{"type":"string","maxLength":20}}}`} {
			if !strings.Contains(js, want) {
				t.Errorf("%s: the schema lacks the manifest's %s:\n%s", v, want, js)
			}
		}
		if strings.Contains(js, "experimental") || strings.Contains(js, "description") {
			t.Errorf("%s: the schema has experimental (not in the manifest) or a description:\n%s", v, js)
		}
	}
	if g := got["shop.example.com/v1/Gadget"]; g.Manifest != "" || !strings.Contains(mustJSON(t, g.Schema), "experimental") {
		t.Errorf("a kind without a manifest lost its markers' schema: %+v", g)
	}
	var mine []string
	for _, w := range warnings {
		if strings.Contains(w, manifestPath) {
			mine = append(mine, w)
		}
	}
	if len(mine) != 1 {
		t.Fatalf("want one warning naming the manifest for Widget, got %q", warnings)
	}
	for _, want := range []string{"Widget", "the manifest wins", "v1 .spec.experimental (not in the manifest: pruned)", "v1 .spec.sku (pattern)", "v1 .spec (x-kubernetes-validations)", "8 places", "and 3 more"} {
		if !strings.Contains(mine[0], want) {
			t.Errorf("warning %q does not say %q", mine[0], want)
		}
	}

	documented, _, err := GenerateDocumented(api, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range documented {
		if s.Kind == "Widget" && s.Schema.Description != "A widget of the manifest." {
			t.Errorf("GenerateDocumented: %s's description %q, want the manifest's", s.Key(), s.Schema.Description)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestManifestAgainstGo: a field the Go type lacks, or holds with a type
// that cannot carry the manifest's, or unknown fields the manifest keeps
// and the Go type cannot, is an error at the manifest's line
// and the Go type's; a CEL rule that does not compile is an error at the
// rule's line in the manifest.
func TestManifestAgainstGo(t *testing.T) {
	types := widgetGo("v1", "")
	missing := widgetManifest(controllerGenSpec+"              color:\n                type: string\n", "v1")
	incompatible := widgetManifest(strings.Replace(controllerGenSpec, "type: integer\n                format: int32", "type: string", 1), "v1")
	inItems := widgetManifest(controllerGenSpec+"                    weight:\n                      type: number\n", "v1")
	unknown := widgetManifest("            x-kubernetes-preserve-unknown-fields: true\n"+controllerGenSpec, "v1")
	badRule := widgetManifest(controllerGenSpec+"            x-kubernetes-validations:\n            - rule: self.nosuchfield > 1\n", "v1")
	for name, c := range map[string]struct {
		manifest string
		want     []string
	}{
		"missing field": {missing, []string{
			fmt.Sprintf("%s:%d", manifestPath, lineOf(t, missing, "color:")), ".spec.color",
			fmt.Sprintf("pkg/apis/shop/v1/widget_types.go:%d", lineOf(t, types, "type WidgetSpec struct")), "no field of that JSON name"}},
		"incompatible type": {incompatible, []string{
			fmt.Sprintf("%s:%d", manifestPath, lineOf(t, incompatible, "count:")+1), ".spec.count", "string in the manifest, and integer in the Go type",
			fmt.Sprintf("pkg/apis/shop/v1/widget_types.go:%d", lineOf(t, types, "Count int32"))}},
		"missing field of an item": {inItems, []string{
			fmt.Sprintf("%s:%d", manifestPath, lineOf(t, inItems, "weight:")), ".spec.parts[*].weight",
			fmt.Sprintf("pkg/apis/shop/v1/widget_types.go:%d", lineOf(t, types, "type Part struct"))}},
		"unknown fields kept": {unknown, []string{
			fmt.Sprintf("%s:%d", manifestPath, lineOf(t, unknown, "x-kubernetes-preserve-unknown-fields")), ".spec of Widget v1 keeps unknown fields",
			fmt.Sprintf("WidgetSpec at pkg/apis/shop/v1/widget_types.go:%d", lineOf(t, types, "type WidgetSpec struct"))}},
		"rule that does not compile": {badRule, []string{
			fmt.Sprintf("%s:%d", manifestPath, lineOf(t, badRule, "rule: self.nosuchfield")), "self.nosuchfield > 1"}},
	} {
		t.Run(name, func(t *testing.T) {
			api := loadProject(t, map[string]string{"pkg/apis/shop/v1/widget_types.go": types, manifestPath: c.manifest})
			_, _, err := Generate(api, nil)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err %v, want it to say %s", err, w)
				}
			}
		})
	}
}
