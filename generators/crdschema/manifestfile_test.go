package crdschema

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// widgetTypes declares Widget in a version, with markers the manifest of
// the tests replaces.
func widgetTypes(version, extra string) string {
	return `package ` + version + `

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +resource:path=widgets,shortNames=wd,categories=shop
// +subresource:scale:specpath=.spec.count,statuspath=.status.count
// +printcolumn:name=SKU,type=string,JSONPath=.spec.sku
// +selectablefield:JSONPath=.spec.sku
` + extra + `
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec              WidgetSpec ` + "`json:\"spec,omitempty\"`" + `
}

type WidgetSpec struct {
	SKU   string ` + "`json:\"sku\"`" + `
	Count int32  ` + "`json:\"count,omitempty\"`" + `
}

type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Widget ` + "`json:\"items\"`" + `
}
`
}

// widgetCRD is a CRD manifest of Widget with the versions given.
func widgetCRD(group string, versions ...string) string {
	s := `---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.` + group + `
spec:
  group: ` + group + `
  names:
    kind: Widget
    listKind: WidgetList
    plural: widgets
    singular: gadget
    shortNames: [wg, wgt]
    categories: [all]
  scope: Namespaced
  versions:
`
	for _, v := range versions {
		s += `  - name: ` + v + `
    served: true
    storage: ` + fmt.Sprint(v == versions[0]) + `
    additionalPrinterColumns:
    - name: Count
      type: integer
      jsonPath: .spec.count
      priority: 1
    - name: Age
      type: date
      jsonPath: .metadata.creationTimestamp
    selectableFields:
    - jsonPath: .spec.count
    subresources:
      status: {}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              sku:
                type: string
`
	}
	return s
}

// project writes files (relative paths) under a new project and reads its API.
func testProject(t *testing.T, files map[string]string) *model.API {
	t.Helper()
	root := t.TempDir()
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

// TestManifestReplacesMarkers: a manifest at kubebuilder's path gives the
// kind its names, printer columns (exactly the manifest's, no Age added),
// selectable fields and subresources (status on, scale off), replacing
// what the markers say; without a manifest the markers' stay.
func TestManifestReplacesMarkers(t *testing.T) {
	api := testProject(t, map[string]string{
		"pkg/apis/shop/v1/widget_types.go":                   widgetTypes("v1", ""),
		"config/crd/bases/shop.example.com_widgets.yaml":     widgetCRD("shop.example.com", "v1"),
		"config/crd/bases/shop.example.com_otherthings.yaml": "not read: no kind of that plural\n",
	})
	k := api.Groups[0].Kinds[0]
	if k.StatusSubresource || k.Scale == nil || strings.Join(k.ShortNames, ",") != "wd" || k.ExactColumns {
		t.Fatalf("the markers were not read as the test expects: %+v", k)
	}
	set, err := LoadManifests(api)
	if err != nil {
		t.Fatal(err)
	}
	if m := set[ManifestKey("shop.example.com", "Widget")]; m == nil || m.Path != "config/crd/bases/shop.example.com_widgets.yaml" {
		t.Fatalf("manifest not found: %+v", set)
	}
	warnings, err := ApplyManifests(api, set)
	if err != nil || len(warnings) > 0 {
		t.Fatal(err, warnings)
	}
	for _, kk := range append([]*model.Kind{k}, api.Groups[0].Versions[0].Kinds...) {
		if !kk.StatusSubresource || kk.Scale != nil {
			t.Errorf("subresources not the manifest's: status %v scale %+v", kk.StatusSubresource, kk.Scale)
		}
	}
	if k.Singular != "gadget" || strings.Join(k.ShortNames, ",") != "wg,wgt" || strings.Join(k.Categories, ",") != "all" {
		t.Errorf("names not the manifest's: %q %q %q", k.Singular, k.ShortNames, k.Categories)
	}
	want := []model.PrintColumn{{Name: "Count", Type: "integer", JSONPath: ".spec.count", Priority: 1}, {Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"}}
	if !k.ExactColumns || fmt.Sprint(k.PrintColumns) != fmt.Sprint(want) {
		t.Errorf("columns %+v (exact %v), want %+v exactly", k.PrintColumns, k.ExactColumns, want)
	}
	if strings.Join(k.SelectableFields, ",") != ".spec.count" {
		t.Errorf("selectable fields %q, want the manifest's .spec.count", k.SelectableFields)
	}
}

// TestManifestScaleAndNoColumns: scale paths come from the manifest; a
// manifest without columns leaves the server's default (Name, Age) as on a CRD.
func TestManifestScaleAndNoColumns(t *testing.T) {
	crd := strings.Replace(widgetCRD("shop.example.com", "v1"), "      status: {}\n", "      scale:\n        specReplicasPath: .spec.count\n        statusReplicasPath: .status.count\n        labelSelectorPath: .status.selector\n", 1)
	crd = crd[:strings.Index(crd, "    additionalPrinterColumns:")] + crd[strings.Index(crd, "    selectableFields:"):]
	api := testProject(t, map[string]string{
		"pkg/apis/shop/v1/widget_types.go":               widgetTypes("v1", "// +subresource:status"),
		"config/crd/bases/shop.example.com_widgets.yaml": crd,
	})
	set, err := LoadManifests(api)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ApplyManifests(api, set); err != nil {
		t.Fatal(err)
	}
	k := api.Groups[0].Kinds[0]
	if k.StatusSubresource || k.Scale == nil || *k.Scale != (model.ScaleSubresource{SpecPath: ".spec.count", StatusPath: ".status.count", SelectorPath: ".status.selector"}) {
		t.Errorf("subresources: status %v scale %+v, want the manifest's scale only", k.StatusSubresource, k.Scale)
	}
	if len(k.PrintColumns) != 0 || k.ExactColumns {
		t.Errorf("columns %+v exact %v, want none and Age added, as a CRD without columns", k.PrintColumns, k.ExactColumns)
	}
}

// TestManifestVersions: with several versions, the storage version's
// columns serve the kind; a served version with other columns, and a
// manifest storing another version than the project, are warnings at their
// lines in the manifest.
func TestManifestVersions(t *testing.T) {
	crd := strings.Replace(widgetCRD("shop.example.com", "v1beta1", "v1"), "name: Count", "name: Number", 1)
	api := testProject(t, map[string]string{
		"pkg/apis/shop/v1/widget_types.go":               widgetTypes("v1", "// +storageversion"),
		"pkg/apis/shop/v1beta1/widget_types.go":          widgetTypes("v1beta1", ""),
		"config/crd/bases/shop.example.com_widgets.yaml": crd,
	})
	set, err := LoadManifests(api)
	if err != nil {
		t.Fatal(err)
	}
	warnings, err := ApplyManifests(api, set)
	if err != nil {
		t.Fatal(err)
	}
	if k := api.Groups[0].Kinds[0]; k.PrintColumns[0].Name != "Count" {
		t.Errorf("columns %+v, want the storage version v1's", k.PrintColumns)
	}
	want := []string{
		fmt.Sprintf("shop.example.com_widgets.yaml:%d: the manifest stores Widget in v1beta1, and the project in v1", lineOf(t, crd, "storage: true")),
		fmt.Sprintf("shop.example.com_widgets.yaml:%d: the additionalPrinterColumns of version v1beta1 differ from those of Widget's storage version v1", lineOf(t, crd, "- name: v1beta1")),
	}
	if len(warnings) != len(want) {
		t.Fatalf("warnings %q, want %d", warnings, len(want))
	}
	for i, w := range want {
		if !strings.Contains(warnings[i], w) {
			t.Errorf("warning %q, want %q", warnings[i], w)
		}
	}
}

// TestManifestMarker: +crd:manifest names the manifest, wherever it is; a
// path that does not exist is an error at the marker's line.
func TestManifestMarker(t *testing.T) {
	types := widgetTypes("v1", "// +crd:manifest=deploy/widgets.crd.yaml")
	api := testProject(t, map[string]string{
		"pkg/apis/shop/v1/widget_types.go": types,
		"deploy/widgets.crd.yaml":          widgetCRD("shop.example.com", "v1"),
	})
	set, err := LoadManifests(api)
	if err != nil || set[ManifestKey("shop.example.com", "Widget")] == nil || set[ManifestKey("shop.example.com", "Widget")].Path != "deploy/widgets.crd.yaml" {
		t.Fatalf("manifest of the marker not read: %v %v", set, err)
	}

	// The marker is known: misspelt, it is an error with the right spelling.
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "pkg/apis/shop/v1"), 0o755)
	os.WriteFile(filepath.Join(root, "pkg/apis/shop/v1/widget_types.go"), []byte(strings.Replace(types, "+crd:manifest", "+crd:manfest", 1)), 0o644)
	if _, err := model.LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "", ""); err == nil || !strings.Contains(err.Error(), "did you mean +crd:manifest") {
		t.Errorf("a misspelt +crd:manifest: err %v, want the known spelling", err)
	}

	api = testProject(t, map[string]string{"pkg/apis/shop/v1/widget_types.go": types})
	_, err = LoadManifests(api)
	want := fmt.Sprintf("pkg/apis/shop/v1/widget_types.go:%d", lineOf(t, types, "+crd:manifest"))
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "deploy/widgets.crd.yaml") {
		t.Errorf("err %v, want one at %s naming the path", err, want)
	}
}

// TestManifestRefused: a manifest of another group, without a version the
// project serves, with a misspelt field, or not a CRD, is an error naming the manifest's line
// and both values.
func TestManifestRefused(t *testing.T) {
	v2 := strings.ReplaceAll(widgetTypes("v2", ""), "// +resource:path=widgets", "// +storageversion\n// +resource:path=widgets")
	other := widgetCRD("shop.other.io", "v1")
	missing := widgetCRD("shop.example.com", "v1", "v1beta1")
	for name, c := range map[string]struct {
		manifest string
		v2       bool
		want     []string
	}{
		"group": {other, false, []string{
			fmt.Sprintf("config/crd/bases/shop.example.com_widgets.yaml:%d", lineOf(t, other, "group: shop.other.io")), `"shop.other.io"`, `"shop.example.com"`}},
		"version": {missing, true, []string{
			fmt.Sprintf("config/crd/bases/shop.example.com_widgets.yaml:%d", lineOf(t, missing, "versions:")), "version v2", "has only v1, v1beta1"}},
		"plural": {strings.Replace(widgetCRD("shop.example.com", "v1"), "plural: widgets", "plural: gadgets", 1), false, []string{`"gadgets"`, `"widgets"`}},
		"misspelt field": {strings.Replace(widgetCRD("shop.example.com", "v1"), "    selectableFields:", "    selectableField:", 1), false, []string{
			fmt.Sprintf("shop.example.com_widgets.yaml:%d", lineOf(t, widgetCRD("shop.example.com", "v1"), "selectableFields:")), `unknown field "selectableField"`}},
		"kind": {strings.Replace(widgetCRD("shop.example.com", "v1"), "kind: CustomResourceDefinition", "kind: ConfigMap", 1), false, []string{"shop.example.com_widgets.yaml:3", "want apiVersion apiextensions.k8s.io/v1, kind CustomResourceDefinition"}},
	} {
		t.Run(name, func(t *testing.T) {
			files := map[string]string{"pkg/apis/shop/v1/widget_types.go": widgetTypes("v1", ""), "config/crd/bases/shop.example.com_widgets.yaml": c.manifest}
			if c.v2 {
				files["pkg/apis/shop/v2/widget_types.go"] = v2
			}
			_, err := LoadManifests(testProject(t, files))
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("err %v, want it to say %s", err, w)
				}
			}
		})
	}
}

// TestFieldPathKeys: a field.Path string as the YAML keys of the manifest.
func TestFieldPathKeys(t *testing.T) {
	got := strings.Join(FieldPathKeys("properties[spec].properties[a.b].items.x-kubernetes-validations[0].rule"), "|")
	if want := "properties|spec|properties|a.b|items|x-kubernetes-validations|0|rule"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
