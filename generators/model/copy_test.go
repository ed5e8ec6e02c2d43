package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyTypes: a type is copied with its doc comment, the markers a blank
// line above it, and the types of its file it uses (not those the target
// declares, not the rest of the file), with the imports they use; a file
// holding nothing else is copied whole.
func TestCopyTypes(t *testing.T) {
	dir := t.TempDir()
	src := "// header\n\npackage v1\n\nimport (\n\t\"time\"\n\n\tmetav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n)\n\n" +
		"// +genclient\n\n// Req is a request.\n// +subresource:request\ntype Req struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tP Policy `json:\"p\"`\n\tO Owned `json:\"o\"`\n}\n\n" +
		"type (\n\t// Policy is a policy.\n\tPolicy struct {\n\t\tL []Level `json:\"l\"`\n\t}\n\t// Unused is not used.\n\tUnused struct{ D time.Duration }\n)\n\n" +
		"// Level is a level.\ntype Level string\n\n// Owned is declared in the target.\ntype Owned struct{}\n\nconst Default = \"x\"\n"
	os.WriteFile(filepath.Join(dir, "a_types.go"), []byte(src), 0o644)
	v := &Version{Name: "v1", Dir: dir}
	if err := v.load(); err != nil {
		t.Fatal(err)
	}
	b, err := v.CopyTypes([]string{"Req"}, "v2", []byte("// new header\n"), func(name string) bool { return name == "Owned" })
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, want := range []string{"// new header\n\npackage v2\n", "metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"",
		"// +genclient\n\n// Req is a request.\n// +subresource:request\ntype Req struct {", "// Policy is a policy.\n\ttype Policy struct {", "// Level is a level.\ntype Level string"} {
		if !strings.Contains(got, want) {
			t.Errorf("the copy lacks %q:\n%s", want, got)
		}
	}
	for _, not := range []string{"Unused", "\"time\"", "type Owned", "Default"} {
		if strings.Contains(got, not) {
			t.Errorf("the copy has %q:\n%s", not, got)
		}
	}

	// The file without the rest: copied whole.
	only := "// header\n\npackage v1\n\n// Req is a request.\n// +subresource:request\ntype Req struct {\n\tL Level `json:\"l\"`\n}\n\n// Level is a level.\ntype Level string\n"
	os.WriteFile(filepath.Join(dir, "a_types.go"), []byte(only), 0o644)
	v = &Version{Name: "v1", Dir: dir}
	if err := v.load(); err != nil {
		t.Fatal(err)
	}
	if b, err = v.CopyTypes([]string{"Req"}, "v2", nil, func(string) bool { return false }); err != nil || string(b) != strings.Replace(only, "package v1", "package v2", 1) {
		t.Errorf("want the file copied whole, got %v:\n%s", err, b)
	}
}
