package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newProject scaffolds a project with one kind in a temporary folder.
func newProject(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "repo", "--module", "example.com/crontab", "--domain", "example.com"},
		{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"},
	} {
		if out, err := run(t, dir, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func TestCreateIsIdempotentAndKeepsEdits(t *testing.T) {
	dir := newProject(t)
	create := []string{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"}
	out, err := run(t, dir, create...)
	if err != nil || !strings.Contains(out, "Nothing to do") {
		t.Fatalf("re-running create should be a no-op that says so: %v\n%s", err, out)
	}

	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	orig, _ := os.ReadFile(types)
	edited := append(append([]byte(nil), orig...), []byte("\n// edited by the user\n")...)
	os.WriteFile(types, edited, 0o644)
	out, err = run(t, dir, create...)
	if err != nil || !strings.Contains(out, "skipped pkg/apis/stable/v1/crontab_types.go") {
		t.Fatalf("an edited file should be reported as skipped: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(types); !bytes.Equal(b, edited) {
		t.Fatalf("edited file was overwritten without --force")
	}
	if _, err := run(t, dir, append(create, "--force")...); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(types); !bytes.Equal(b, orig) {
		t.Fatalf("--force did not restore the scaffolded file")
	}
}

// TestGenerateFailureLeavesFilesAsTheyWere: a failure after the source
// generators wrote their files (here: the package load) restores every file.
func TestGenerateFailureLeavesFilesAsTheyWere(t *testing.T) {
	dir := newProject(t)
	before := projectFiles(t, dir)

	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	src, _ := os.ReadFile(types)
	// A new kind (so the source generators have something to write) that
	// imports a package that does not exist (so loading fails afterwards).
	broken := strings.Replace(string(src), "import (", "import (\n\t_ \"example.com/crontab/pkg/doesnotexist\"\n", 1) +
		"\n// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n// +resource:path=extras\ntype Extra struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n}\n"
	os.WriteFile(types, []byte(broken), 0o644)

	_, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(err.Error(), "doesnotexist") {
		t.Fatalf("want a load error naming the missing package, got %v", err)
	}
	after := projectFiles(t, dir)
	for path, content := range before {
		if path == filepath.Join("pkg", "apis", "stable", "v1", "crontab_types.go") {
			continue
		}
		if !bytes.Equal(after[path], content) {
			t.Errorf("%s changed by a failed generate", path)
		}
	}
	if len(after) != len(before) {
		t.Errorf("a failed generate left files behind: %d files before, %d after", len(before), len(after))
	}
}
