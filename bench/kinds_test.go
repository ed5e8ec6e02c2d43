package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scaffolded is a kind exactly as `create group version resource` wrote it
// (example/ is regenerated from templates/ and kept in sync by a test).
const scaffolded = "../example/pkg/apis/stable/v1/calendar_types.go"

func copyScaffolded(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(scaffolded)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "calendar_types.go")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// parsed returns the file's package name and, per type, its doc comment and
// field names (nil for a type that is not a struct).
func parsed(t *testing.T, path string) (string, map[string]string, map[string][]string, map[string]string) {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	docs, fields, fieldDocs := map[string]string{}, map[string][]string{}, map[string]string{}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		ts := gd.Specs[0].(*ast.TypeSpec)
		docs[ts.Name.Name] = gd.Doc.Text()
		if st, ok := ts.Type.(*ast.StructType); ok {
			for _, fl := range st.Fields.List {
				for _, n := range fl.Names {
					fields[ts.Name.Name] = append(fields[ts.Name.Name], n.Name)
					fieldDocs[ts.Name.Name+"."+n.Name] = fl.Doc.Text()
				}
			}
		}
	}
	return f.Name.Name, docs, fields, fieldDocs
}

func TestGrowthEditOfScaffoldedKind(t *testing.T) {
	path := copyScaffolded(t)
	if err := growthEdit(path, "Calendar"); err != nil {
		t.Fatal(err)
	}
	_, docs, fields, fieldDocs := parsed(t, path)
	if got, want := strings.Join(fields["CalendarSpec"], ","), "Replicas,Image,Description,Args,Labels,Endpoint,TimeoutSeconds"; got != want {
		t.Errorf("spec fields %s, want %s", got, want)
	}
	if got := strings.Join(fields["CalendarEndpoint"], ","); got != "Host,Port,Path" {
		t.Errorf("CalendarEndpoint fields %q", got)
	}
	if d := fieldDocs["CalendarStatus.Conditions"]; !strings.Contains(d, "+optional\n+listType=map\n+listMapKey=type\n") {
		t.Errorf("conditions doc %q lacks the list markers", d)
	}
	if !strings.Contains(docs["Calendar"], "+resource:path=calendars") {
		t.Errorf("the kind's markers changed: %q", docs["Calendar"])
	}
}

func TestKubebuilderKindOfScaffoldedKind(t *testing.T) {
	to := filepath.Join(t.TempDir(), "out", "calendar_types.go")
	if err := kubebuilderKind(scaffolded, to, "Calendar"); err != nil {
		t.Fatal(err)
	}
	_, docs, fields, _ := parsed(t, to)
	if d := docs["Calendar"]; !strings.HasSuffix(d, "\n+kubebuilder:object:root=true\n+kubebuilder:subresource:status\n") || strings.Contains(d, "+resource:") || strings.Contains(d, "+k8s:") {
		t.Errorf("kind doc %q", d)
	}
	if d := docs["CalendarList"]; !strings.HasSuffix(d, "\n+kubebuilder:object:root=true\n") || strings.Contains(d, "+k8s:") {
		t.Errorf("list doc %q", d)
	}
	_, _, want, _ := parsed(t, scaffolded)
	for name, fs := range want {
		if strings.Join(fields[name], ",") != strings.Join(fs, ",") {
			t.Errorf("%s fields %v, want the scaffolded %v", name, fields[name], fs)
		}
	}
}

func TestKubeKindOfScaffoldedKind(t *testing.T) {
	tr := &growthTree{boot: t.TempDir()}
	src := kindTypesFile(tr.boot, "stable", "v1", "Calendar")
	b, _ := os.ReadFile(scaffolded)
	if err := writeFile(src, string(b)); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tr.kubeKind("stable", "v1", "Calendar", dir, "stable", "+genclient"); err != nil {
		t.Fatal(err)
	}
	pkg, docs, _, _ := parsed(t, filepath.Join(dir, "calendar_types.go"))
	if pkg != "stable" {
		t.Errorf("package %s, want stable", pkg)
	}
	if d := docs["Calendar"]; !strings.HasSuffix(d, "+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n+genclient\n") || strings.Contains(d, "+resource:") || strings.Contains(d, "+subresource:") {
		t.Errorf("kind doc %q", d)
	}
}

func TestKindEditNamesWhatIsMissing(t *testing.T) {
	path := copyScaffolded(t)
	if err := addSpecField(path, "Widget", "extra1"); err == nil || !strings.Contains(err.Error(), path+": no type WidgetSpec") {
		t.Errorf("err %v, want one naming the file and WidgetSpec", err)
	}
	if err := addSpecField(path, "Calendar", "extra1"); err != nil {
		t.Fatal(err)
	}
	_, _, fields, _ := parsed(t, path)
	if got := strings.Join(fields["CalendarSpec"], ","); got != "Replicas,Extra1" {
		t.Errorf("spec fields %s", got)
	}
}
