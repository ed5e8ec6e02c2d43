package generators

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func testAPI(t *testing.T, root string) *State {
	t.Helper()
	header, err := os.ReadFile(filepath.Join(root, "hack", "boilerplate.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	p := &project.Project{Domain: "example.com", Module: "example.com/shop", Resources: []*project.Resource{
		{KindDescriptor: project.KindDescriptor{Group: "shop", Version: "v1", Kind: "Widget", Plural: "widgets"}, Controller: true},
	}}
	api, err := model.LoadAPI(root, p, "github.com/apiserver-boot/apiserver-boot", string(header))
	if err != nil {
		t.Fatal(err)
	}
	return &State{API: api}
}

// TestSourceGeneratorsGolden checks the files generated from source (internal
// types, registration, controller wiring) against testdata/golden.
func TestSourceGeneratorsGolden(t *testing.T) {
	root, _ := filepath.Abs("testdata/api")
	api := testAPI(t, root)
	g := api.Groups[0]
	if len(g.Kinds) != 2 || g.Kinds[0].Kind != "Shelf" || g.Kinds[0].Namespaced() || !g.Kinds[1].StatusSubresource ||
		strings.Join(g.Kinds[1].ShortNames, ",") != "wd,wdg" {
		t.Fatalf("markers not read as expected: %+v %+v", g.Kinds[0], g.Kinds[1])
	}
	var files []files.File
	for _, gen := range sourceGenerators {
		out, err := gen.Generate(api)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, out...)
	}
	if err := formatAll(files); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(root, f.Path)
		golden := filepath.Join("testdata", "golden", rel+".golden")
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, f.Content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (run go test ./generators -update)", err)
		}
		if !bytes.Equal(want, f.Content) {
			t.Errorf("%s differs from %s (run go test ./generators -update and review the diff):\n%s", rel, golden, f.Content)
		}
	}
}

// TestStorageVersionPerKind: kinds of one group stored in different versions
// (wardle's Flunder in v1beta1, Fischer in v1alpha1) each get the internal
// shape of their own storage version; a type both reach must match.
func TestStorageVersionPerKind(t *testing.T) {
	write := func(root, v, src string) {
		dir := filepath.Join(root, "pkg", "apis", "wardle", v)
		os.MkdirAll(dir, 0o755)
		if err := os.WriteFile(filepath.Join(dir, "types_types.go"), []byte("package "+v+"\n\n"+src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	common := "type Ref string\n\nconst RefFlunder = Ref(\"Flunder\")\n\n"
	alpha := common + `// +resource:path=flunders
type Flunder struct{ Reference string }
type FlunderList struct{ Items []Flunder }

// +resource:path=fischers
// +storageversion
type Fischer struct{ Disallowed []string; Kind Ref }
type FischerList struct{ Items []Fischer }
`
	beta := common + `// +resource:path=flunders
// +storageversion
type Flunder struct{ Spec FlunderSpec }
type FlunderList struct{ Items []Flunder }
type FlunderSpec struct{ ReferenceType *Ref }
`
	root := t.TempDir()
	write(root, "v1alpha1", alpha)
	write(root, "v1beta1", beta)
	api, err := model.LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/wardle"}, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	g := api.Groups[0]
	stored := map[string]string{}
	for _, k := range g.Kinds {
		stored[k.Kind] = k.StorageVersion
	}
	if stored["Flunder"] != "v1beta1" || stored["Fischer"] != "v1alpha1" || g.StorageVersion != "v1beta1" {
		t.Fatalf("storage versions %v, group %s", stored, g.StorageVersion)
	}
	src, err := internalTypesSource(g, "")
	if err != nil {
		t.Fatal(err)
	}
	got := string(src)
	for _, want := range []string{"type Flunder struct{ Spec FlunderSpec }", "type FlunderSpec struct{ ReferenceType *Ref }",
		"type Fischer struct{ Disallowed []string; Kind Ref }", "type Ref string", "from the v1beta1 and v1alpha1 types"} {
		if !strings.Contains(got, want) {
			t.Errorf("internal types lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Reference string") || strings.Count(got, "type Ref string") != 1 || strings.Count(got, "RefFlunder") != 1 {
		t.Errorf("internal types hold v1alpha1's Flunder, or Ref twice:\n%s", got)
	}
	if _, err := files.FormatGo("zz_generated.types.go", src); err != nil {
		t.Error(err)
	}

	// A type both storage versions reach, declared differently, cannot be internal.
	write(root, "v1alpha1", strings.Replace(alpha, "type Ref string", "type Ref int", 1))
	api, err = model.LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/wardle"}, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := internalTypesSource(api.Groups[0], ""); err == nil || !strings.Contains(err.Error(), "type Ref is declared differently in v1beta1 (reached from Flunder) and v1alpha1 (reached from Fischer)") {
		t.Errorf("want an error naming Ref, both versions and kinds, got %v", err)
	}
}

// TestKindInAnyFile: a kind declared in a file not named *_types.go
// (widget.go) is of the API as much as one in widget_types.go: the internal
// package gets it and every type it reaches (with the const values of them),
// not the helpers of that file; a kind in a file the Go build leaves out
// fails, naming it at its file:line.
func TestKindInAnyFile(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pkg", "apis", "gadgets", "v1")
	os.MkdirAll(dir, 0o755)
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("widget.go", `package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +kubebuilder:object:root=true
type Widget struct {
	metav1.TypeMeta   `+"`json:\",inline\"`"+`
	metav1.ObjectMeta `+"`json:\"metadata,omitempty\"`"+`
	Spec WidgetSpec `+"`json:\"spec,omitempty\"`"+`
}

type WidgetSpec struct {
	Color Color `+"`json:\"color,omitempty\"`"+`
}

type Color string

const ColorRed Color = "red"

// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta `+"`json:\",inline\"`"+`
	metav1.ListMeta `+"`json:\"metadata,omitempty\"`"+`
	Items []Widget `+"`json:\"items\"`"+`
}

type helper struct{ n int }
`)
	p := &project.Project{Domain: "sh", Module: "example.com/gadgets"}
	api, err := model.LoadAPI(root, p, "x", "")
	if err != nil {
		t.Fatal(err)
	}
	g := api.Groups[0]
	if g.FullName != "gadgets.sh" || len(g.Kinds) != 1 || g.Kinds[0].Kind != "Widget" {
		t.Fatalf("want kind Widget of gadgets.sh, got %s %+v", g.FullName, g.Kinds)
	}
	for _, name := range []string{"Widget", "WidgetList", "WidgetSpec", "Color"} {
		if g.Versions[0].Types[name] == nil {
			t.Errorf("the model lacks type %s of widget.go, which the kind reaches", name)
		}
	}
	src, err := internalTypesSource(g, "")
	if err != nil {
		t.Fatal(err)
	}
	got := string(src)
	for _, want := range []string{"type Widget struct", "type WidgetList struct", "type WidgetSpec struct", "type Color string", `ColorRed Color = "red"`} {
		if !strings.Contains(got, want) {
			t.Errorf("internal types lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "helper") {
		t.Errorf("internal types copy a helper no kind reaches:\n%s", got)
	}
	if _, err := files.FormatGo("zz_generated.types.go", src); err != nil {
		t.Error(err)
	}

	// A kind in a file the build leaves out cannot be served: said, at its line.
	write("gizmo.go", "//go:build ignore\n\npackage v1\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n// +kubebuilder:object:root=true\ntype Gizmo struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n}\n")
	_, err = model.LoadAPI(root, p, "x", "")
	if err == nil || !strings.Contains(err.Error(), "gizmo.go:8:6: type Gizmo is marked as a kind, but the Go build leaves gizmo.go out of package v1") {
		t.Errorf("want an error naming Gizmo at gizmo.go:8, got %v", err)
	}
}
