package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

func TestMarkerErrorsNameTheLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pkg", "apis", "shop", "v1")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(filepath.Join(root, "hack"), 0o755)
	os.WriteFile(filepath.Join(root, "hack", "boilerplate.go.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package v1\n\n// +resource:path=as,scope=Galaxy\ntype A struct{}\n"), 0o644)
	_, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
	if err == nil || !strings.Contains(err.Error(), "a_types.go:4") || !strings.Contains(err.Error(), "Namespaced or Cluster") {
		t.Fatalf("want an error at a_types.go:4 naming the valid scopes, got %v", err)
	}
}

func TestUnknownMarkersAreErrorsWithSuggestions(t *testing.T) {
	for _, tc := range []struct{ types, want string }{
		{"// +resoruce:path=as\ntype A struct{}\n", "a_types.go:3:1: unknown marker +resoruce (did you mean +resource?)"},
		{"// +resource:path=as\ntype A struct {\n\t// +kubebuilder:validation:Maximun=3\n\tX int `json:\"x\"`\n}\n", "a_types.go:5:2: unknown marker +kubebuilder:validation:Maximun (did you mean +kubebuilder:validation:Maximum?)"},
		{"// +resource:path=as\n// +printcolumn:name=X,type=text,JSONPath=.spec.x\ntype A struct{}\n", `type="text": want integer, number, string, boolean or date`},
		{"// +resource:path=as\ntype A struct {\n\t// +kubebuilder:validation:MinLength=3\n\tX int `json:\"x\"`\n}\n", ""},
		{"// +resource:path=as\ntype A struct {\n\t// +optional\n\t// +listType=atomic\n\tX []int `json:\"x\"`\n}\n", ""},
	} {
		root := t.TempDir()
		dir := filepath.Join(root, "pkg", "apis", "shop", "v1")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package v1\n\n"+tc.types), 0o644)
		_, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("unexpected error: %v", err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("want an error containing %q, got %v", tc.want, err)
		}
	}
}

func TestStorageVersionMustBeMarkedWithManyVersions(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		dir := filepath.Join(root, "pkg", "apis", "shop", v)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package "+v+"\n\n// +resource:path=as\ntype A struct{}\n"), 0o644)
	}
	_, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
	if err == nil || !strings.Contains(err.Error(), "+storageversion") {
		t.Fatalf("want an error asking for +storageversion, got %v", err)
	}
}

// TestVersionPriority: Kubernetes version order unless +versionPriority says otherwise.
func TestVersionPriority(t *testing.T) {
	for _, tc := range []struct {
		priorities map[string]string // version -> doc.go marker
		want       string
	}{
		{map[string]string{}, "v2 v1 v1beta1 v1alpha1"},
		{map[string]string{"v1": "// +versionPriority=10\n"}, "v1 v2 v1beta1 v1alpha1"},
		{map[string]string{"v1beta1": "// +versionPriority=5\n", "v2": "// +versionPriority=-1\n"}, "v1beta1 v1 v1alpha1 v2"},
	} {
		root := t.TempDir()
		for _, v := range []string{"v1alpha1", "v1", "v2", "v1beta1"} {
			dir := filepath.Join(root, "pkg", "apis", "shop", v)
			os.MkdirAll(dir, 0o755)
			storage := ""
			if v == "v1" {
				storage = "// +storageversion\n"
			}
			os.WriteFile(filepath.Join(dir, "doc.go"), []byte(tc.priorities[v]+"package "+v+"\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package "+v+"\n\n// +resource:path=as\n"+storage+"type A struct{}\n"), 0o644)
		}
		api, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range api.Groups[0].Versions {
			got = append(got, v.Name)
		}
		if strings.Join(got, " ") != tc.want || strings.Join(api.Groups[0].Kinds[0].Versions, " ") != tc.want {
			t.Errorf("%v: versions %v, kind versions %v, want %s", tc.priorities, got, api.Groups[0].Kinds[0].Versions, tc.want)
		}
	}
}

// loadTypes loads one version package holding src as a_types.go.
func loadTypes(t *testing.T, src string) (*API, error) {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "pkg", "apis", "shop", "v1")
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package v1\n\n"+src), 0o644); err != nil {
		t.Fatal(err)
	}
	return LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
}

// TestKubebuilderKinds: types written for controller-gen are served as they
// are, with controller-gen's meaning of each marker.
func TestKubebuilderKinds(t *testing.T) {
	api, err := loadTypes(t, `// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=gateway-api,scope=Cluster,shortName=gc
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:printcolumn:name="Controller",type=string,JSONPath=`+"`.spec.controllerName`"+`
// +kubebuilder:printcolumn:name="Description",type=string,JSONPath=`+"`.spec.description`"+`,priority=1
// +kubebuilder:selectablefield:JSONPath=`+"`.spec.controllerName`"+`
type GatewayClass struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Spec GatewayClassSpec `+"`json:\"spec\"`"+`
}

// A root type that is no object (no ObjectMeta) is not a kind, as for controller-gen.
// +kubebuilder:object:root=true
type Options struct {
	metav1.TypeMeta
}

// +kubebuilder:object:root=true
type GatewayClassList struct{}

type GatewayClassSpec struct {
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`+"`^[a-z0-9]$`"+`
	// +kubebuilder:validation:XValidation:message="Value is immutable",rule="self == oldSelf"
	// +required
	ControllerName string `+"`json:\"controllerName\"`"+`
	// +optional
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:default="none"
	Description *string `+"`json:\"description,omitempty\"`"+`
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:ExclusiveMinimum=true
	Items []Item `+"`json:\"items,omitempty\"`"+`
}

// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
type Hostname string

// +kubebuilder:validation:Enum=200;301;302
type Code int

// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=be

// Backend is a backend: its markers sit a blank line above its doc, as
// Gateway API keeps them.
type Backend struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	// +kubebuilder:validation:MinLength=1

	// Name is the name: its marker too.
	Name string `+"`json:\"name\"`"+` // +kubebuilder:validation:MaxLength=9 (a line comment, not the next field's)
	Port int `+"`json:\"port\"`"+`
}

type Item struct {
	Name string
	// +kubebuilder:default=3
	Count int `+"`json:\"count\"`"+`
	// +kubebuilder:default={name: "x"}
	Ref Item2 `+"`json:\"ref,omitempty\"`"+`
	// +kubebuilder:default=1
	Ok *int `+"`json:\"ok\"`"+`
}

type Item2 struct{ Name string }
`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range api.Groups[0].Kinds {
		got = append(got, k.Kind)
	}
	if strings.Join(got, " ") != "Backend GatewayClass" {
		t.Fatalf("kinds %v, want Backend and GatewayClass (object:root types that are not lists)", got)
	}
	b, gc := api.Groups[0].Kinds[0], api.Groups[0].Kinds[1]
	if b.Plural != "backends" || b.Singular != "backend" || !b.Namespaced() || strings.Join(b.ShortNames, ",") != "be" {
		t.Errorf("object:root alone: controller-gen's defaults, got %+v", b)
	}
	if gc.Plural != "gatewayclasses" || gc.Namespaced() || strings.Join(gc.ShortNames, ",") != "gc" || strings.Join(gc.Categories, ",") != "gateway-api" ||
		!gc.StatusSubresource || gc.StorageVersion != "v1" || len(gc.PrintColumns) != 2 || gc.PrintColumns[1].Priority != 1 ||
		strings.Join(gc.SelectableFields, ",") != ".spec.controllerName" {
		t.Errorf("kubebuilder markers not read as controller-gen reads them: %+v", gc)
	}
}

// TestMarkersWithoutMeaningWarn: controller-tools markers that configure
// what only a CRD has are warnings naming file:line; typos stay errors.
func TestMarkersWithoutMeaningWarn(t *testing.T) {
	api, err := loadTypes(t, "// +kubebuilder:object:root=true\n// +kubebuilder:metadata:labels=\"a=b\"\n// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get\ntype A struct {\n\t// +kubebuilder:validation:Minimum=1\n\tN int `json:\"n\"`\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(api.Warnings, "\n")
	for _, want := range []string{"a_types.go:4:1: +kubebuilder:metadata:labels has no meaning for an aggregated apiserver", "a_types.go:5:1: +kubebuilder:rbac:groups has no meaning"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	_, err = loadTypes(t, "// +kubebuilder:object:root=true\n// +kubebuilder:subresource:stauts\ntype A struct{}\n")
	if err == nil || !strings.Contains(err.Error(), "a_types.go:4:1: unknown marker +kubebuilder:subresource:stauts (did you mean +kubebuilder:subresource:status?)") {
		t.Errorf("want a did-you-mean error, got %v", err)
	}
}

// TestOtherGeneratorsTagsWarnOncePerKind: Gateway API's comment tags
// (lines of its v1.6.3 apis/v1), which generate does not read, give one
// warning per kind of tag across the API, at the first one's file:line with
// how many there are (an enum constant's counted), pointing at the CRD
// manifest; closing tags and prose are not tags.
func TestOtherGeneratorsTagsWarnOncePerKind(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"v1", "v1beta1"} {
		dir := filepath.Join(root, "pkg", "apis", "gateway", v)
		os.MkdirAll(dir, 0o755)
		storage := ""
		if v == "v1" {
			storage = "// +storageversion\n"
		}
		os.WriteFile(filepath.Join(dir, "gateway_types.go"), []byte("package "+v+`

// +resource:path=gateways
`+storage+`type Gateway struct {
	Spec GatewaySpec `+"`json:\"spec\"`"+`
}

// <gateway:experimental:description>
// GatewaySpec is the spec. A line <like this> is prose.
// </gateway:experimental:description>
type GatewaySpec struct {
	// +optional
	// +listType=atomic
	// <gateway:validateIPAddress>
	// +kubebuilder:validation:MaxItems=16
	Addresses []string `+"`json:\"addresses,omitempty\"`"+`

	// <gateway:util:excludeFromCRD>
	// Ensures that when the same parent is referenced more than once...
	// </gateway:util:excludeFromCRD>
	// <gateway:standard:validation:XValidation:message="sectionName must be unique when parentRefs includes 2 or more references to the same parent",rule="self.all(p1, self.exists_one(p2, p1.name == p2.name))">
	// <gateway:experimental:validation:XValidation:message="sectionName or port must be unique",rule="self.all(p1, self.exists_one(p2, p1.name == p2.name))">
	// +optional
	ParentRefs []string `+"`json:\"parentRefs,omitempty\"`"+`

	// <gateway:experimental>
	// <gateway:experimental:validation:Pattern=`+"`^[!-~]+([\\t ]?[!-~]+)*$`"+`>
	// +optional
	Name *string `+"`json:\"name,omitempty\"`"+`
}

const (
	// <gateway:experimental>
	Experimental = "x"
)
`), 0o644)
	}
	api, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/gw"}, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, w := range api.Warnings {
		if strings.Contains(w, "comment tag <") {
			tags = append(tags, w)
		}
	}
	want := map[string]string{
		"gateway:experimental:description":            "pkg/apis/gateway/v1/gateway_types.go:9: comment tag <gateway:experimental:description> (2 places, the first here)",
		"gateway:validateIPAddress":                   "pkg/apis/gateway/v1/gateway_types.go:15: comment tag <gateway:validateIPAddress> (2 places, the first here)",
		"gateway:util:excludeFromCRD":                 "gateway_types.go:19: comment tag <gateway:util:excludeFromCRD> (2 places",
		"gateway:standard:validation:XValidation":     "gateway_types.go:22: comment tag <gateway:standard:validation:XValidation> (2 places",
		"gateway:experimental:validation:XValidation": "gateway_types.go:23: comment tag <gateway:experimental:validation:XValidation> (2 places",
		"gateway:experimental":                        "gateway_types.go:27: comment tag <gateway:experimental> (4 places",
		"gateway:experimental:validation:Pattern":     "gateway_types.go:28: comment tag <gateway:experimental:validation:Pattern> (2 places",
	}
	if len(tags) != len(want) {
		t.Errorf("want %d warnings, one per kind of tag, got %d:\n%s", len(want), len(tags), strings.Join(tags, "\n"))
	}
	for key, w := range want {
		found := false
		for _, got := range tags {
			if strings.Contains(got, w) && strings.Contains(got, "config/crd/bases/<group>_<plural>.yaml") {
				found = true
			}
		}
		if !found {
			t.Errorf("no warning for %s: want %q in\n%s", key, w, strings.Join(tags, "\n"))
		}
	}
}
