package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apiserver-boot/apiserver-boot/generators/crdschema"
	"github.com/apiserver-boot/apiserver-boot/generators/driver"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/apidocstest"
)

func servedSchemas(t *testing.T, root string) map[string]*apiextensionsv1.JSONSchemaProps {
	t.Helper()
	out, err := apidocstest.ServedSchemas(root)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBuildDocsExample: build docs on the example project documents every
// field of every schema its server validates against, with its constraints,
// and of the documented schemas with its description; the kinds' markers
// and samples are there; a second run writes nothing.
func TestBuildDocsExample(t *testing.T) {
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	example, _ := filepath.Abs(filepath.Join("..", "..", "example"))
	out := t.TempDir()
	start := time.Now()
	if msg, err := run(t, example, "build", "docs", "--output", out); err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	t.Logf("build docs: %s", time.Since(start))
	page := filepath.Join(out, "stable.example.com.md")
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	served := servedSchemas(t, example)
	for key, s := range served {
		for _, m := range apidocstest.Missing(md, s, false) {
			t.Errorf("%s: %s", key, m)
		}
	}
	p, err := project.Load(example)
	if err != nil {
		t.Fatal(err)
	}
	api, err := model.LoadAPI(example, p, version.Module, "")
	if err != nil {
		t.Fatal(err)
	}
	documented, _, err := crdschema.GenerateDocumented(api, driver.LoadEnv())
	if err != nil {
		t.Fatal(err)
	}
	if len(documented) != len(served) {
		t.Errorf("%d documented schemas, %d served", len(documented), len(served))
	}
	for _, s := range documented {
		for _, m := range apidocstest.Missing(md, s.Schema, true) {
			t.Errorf("%s: %s", s.Key(), m)
		}
	}
	for _, want := range []string{
		"<a id=\"v2-crontab\"></a>", "<a id=\"v1-crontab\"></a>", "<a id=\"v1-calendar\"></a>",
		"| Scope | Cluster |", "| Storage version | `v1` (this version) |", "| Subresources | `status` |",
		"Sample (`config/samples/stable_v1_crontab.yaml`):",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("the page does not say %q", want)
		}
	}

	// docs/api of this repository is this reference (make example).
	if committed, err := os.ReadFile(filepath.Join("..", "..", "docs", "api", "stable.example.com.md")); err != nil || string(committed) != md {
		t.Errorf("docs/api/stable.example.com.md is not the example's reference (run make example): %v", err)
	}

	// A second run is a no-op: nothing written.
	info, _ := os.Stat(page)
	old := info.ModTime().Add(-time.Hour)
	os.Chtimes(page, old, old)
	msg, err := run(t, example, "build", "docs", "--output", out)
	if err != nil {
		t.Fatalf("%v\n%s", err, msg)
	}
	if info, _ := os.Stat(page); !info.ModTime().Equal(old) || !strings.Contains(msg, "is up to date") || strings.Contains(msg, "wrote") {
		t.Errorf("the second run wrote the page:\n%s", msg)
	}
}

// TestBuildDocsOutsideAProject: a clear error, nothing written.
func TestBuildDocsOutsideAProject(t *testing.T) {
	dir := t.TempDir()
	msg, err := run(t, dir, "build", "docs")
	if err == nil || !strings.Contains(err.Error(), "no PROJECT file") || !strings.Contains(err.Error(), "init repo") {
		t.Fatalf("build docs outside a project: %v\n%s", err, msg)
	}
	if files := listFiles(t, dir); len(files) > 0 {
		t.Errorf("wrote %v", files)
	}
	if _, err := run(t, dir, "build", "docs", "--format", "pdf"); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("--format pdf: %v", err)
	}
}

// TestBuildDocsNamesFileLine: a marker the schema cannot take is an error
// at its file:line, and nothing is written.
func TestBuildDocsNamesFileLine(t *testing.T) {
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	example, _ := filepath.Abs(filepath.Join("..", "..", "example"))
	repo := filepath.Dir(example)
	dir := filepath.Join(t.TempDir(), "example")
	if err := os.CopyFS(dir, os.DirFS(example)); err != nil {
		t.Fatal(err)
	}
	gomod := filepath.Join(dir, "go.mod")
	b, _ := os.ReadFile(gomod)
	os.WriteFile(gomod, []byte(strings.Replace(string(b), "=> ..\n", "=> "+repo+"\n", 1)), 0o644)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	b, _ = os.ReadFile(types)
	const at = "\t// Replicas is the desired number of instances.\n"
	if !strings.Contains(string(b), at) {
		t.Fatalf("the example's CronTab changed shape")
	}
	os.WriteFile(types, []byte(strings.Replace(string(b), at, at+"\t// +kubebuilder:validation:Maximum=abc\n", 1)), 0o644)
	out := filepath.Join(t.TempDir(), "docs")
	_, err := run(t, dir, "build", "docs", "--output", out)
	if err == nil || !strings.Contains(err.Error(), "crontab_types.go:") || !strings.Contains(err.Error(), "Maximum=abc") {
		t.Fatalf("build docs with a bad marker: %v", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s written", out)
	}
}
