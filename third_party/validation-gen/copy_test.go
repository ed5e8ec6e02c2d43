package validationgen

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// upstreamFiles are the files of k8s.io/code-generator/cmd/validation-gen
// (package main there) carried here as a library.
var upstreamFiles = []string{"targets.go", "validation.go", "lint.go", "lint_rules.go", "test_targets.go"}

// transform is every change made to the upstream files: the package clause,
// and the validator registry initialised through initValidators (reinit.go)
// so that generate may run more than once in a process.
func transform(src []byte) []byte {
	src = bytes.Replace(src, []byte("\npackage main\n"), []byte("\npackage validationgen\n"), 1)
	return bytes.ReplaceAll(src, []byte("validators.InitGlobalValidator(context, inputToCanonicalPkg)"), []byte("initValidators(context, inputToCanonicalPkg)"))
}

var update = flag.Bool("update", false, "copy the files again from the module cache")

// TestCopyIsUpstream: the carried files are those of the k8s.io/code-generator
// go.mod requires, with transform's changes only. After a go.mod upgrade of
// k8s.io/code-generator, copy them again with
//
//	go test ./third_party/validation-gen -run TestCopyIsUpstream -update
func TestCopyIsUpstream(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "k8s.io/code-generator").Output()
	if err != nil {
		t.Fatalf("go list -m k8s.io/code-generator: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "cmd", "validation-gen")
	for _, name := range upstreamFiles {
		src, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		want := transform(src)
		if *update {
			if err := os.WriteFile(name, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from %s with transform's changes: copy it again (go test ./third_party/validation-gen -run TestCopyIsUpstream -update)", name, filepath.Join(dir, name))
		}
	}
}
