package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tree reads every file under dir, for checks that nothing was written.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(path, ".apiserver-boot") {
			b, _ := os.ReadFile(path)
			out[path] = string(b)
		}
		return nil
	})
	return out
}

// TestUpstreamGeneratorFailureIsAnError: deepcopy-gen ends the process with
// klog.Fatalf on a type it cannot copy; generate reports it as an error
// naming the type and where it is declared, and writes nothing.
func TestUpstreamGeneratorFailureIsAnError(t *testing.T) {
	dir := newProject(t)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	src, _ := os.ReadFile(types)
	edited := strings.Replace(string(src), "type CronTabSpec struct {", "type CronTabSpec struct {\n\tC chan int `json:\"-\"`", 1)
	if edited == string(src) {
		t.Fatal("no CronTabSpec to edit")
	}
	os.WriteFile(types, []byte(edited), 0o644)
	before := tree(t, dir)
	out, err := run(t, dir, "generate")
	if err == nil || !strings.Contains(out+err.Error(), "Hit an unsupported type 'chan int'") || !strings.Contains(out+err.Error(), "crontab_types.go:") {
		t.Fatalf("want an error naming the type and its file:line, got %v\n%s", err, out)
	}
	after := tree(t, dir)
	for path, content := range before {
		if after[path] != content {
			t.Errorf("%s changed by a failed generate", path)
		}
	}
	for path := range after {
		if _, ok := before[path]; !ok {
			t.Errorf("%s written by a failed generate", path)
		}
	}
}

// TestCELRuleThatDoesNotCompile: a CEL rule kube-apiserver would refuse in a
// CRD is a generate error at the marker's line, with nothing written.
func TestCELRuleThatDoesNotCompile(t *testing.T) {
	dir := newProject(t)
	types := filepath.Join(dir, "pkg", "apis", "stable", "v1", "crontab_types.go")
	src, _ := os.ReadFile(types)
	edited := strings.Replace(string(src), "type CronTabSpec struct {", "// +kubebuilder:validation:XValidation:rule=\"self.replicas >\",message=\"bad\"\ntype CronTabSpec struct {", 1)
	os.WriteFile(types, []byte(edited), 0o644)
	before := tree(t, dir)
	out, err := run(t, dir, "generate")
	msg := out
	if err != nil {
		msg += err.Error()
	}
	if err == nil || !strings.Contains(msg, "crontab_types.go:") || !strings.Contains(msg, `CEL rule "self.replicas >" of CronTab (spec)`) {
		t.Fatalf("want an error at the marker naming the rule, got %v\n%s", err, out)
	}
	for path, content := range tree(t, dir) {
		if before[path] != content {
			t.Errorf("%s written by a failed generate", path)
		}
	}

	// A rule that compiles generates.
	os.WriteFile(types, []byte(strings.Replace(edited, `rule="self.replicas >"`, `rule="self.replicas >= 0"`, 1)), 0o644)
	if out, err := run(t, dir, "generate"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
