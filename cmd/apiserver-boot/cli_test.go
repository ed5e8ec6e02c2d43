package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// run executes the CLI in dir, as a user would, with stdin closed.
func run(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func listFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestInitBadInputWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		gomod bool
		want  string
	}{
		{"no domain", []string{"init", "repo"}, true, "--domain is required"},
		{"bad domain", []string{"init", "repo", "--domain", "Bad_Domain"}, true, "--domain"},
		{"no go.mod", []string{"init", "repo", "--domain", "example.com"}, false, "go mod init"},
		{"bad module", []string{"init", "repo", "--domain", "example.com", "--module", "not a module"}, false, "--module"},
		{"module mismatch", []string{"init", "repo", "--domain", "example.com", "--module", "example.com/other"}, true, "--module"},
		{"bad license", []string{"init", "repo", "--domain", "example.com", "--license", "gpl9"}, true, "--license"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.gomod {
				os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/crontab\n\ngo 1.26\n"), 0o644)
			}
			before := listFiles(t, dir)
			_, err := run(t, dir, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if after := listFiles(t, dir); len(after) != len(before) {
				t.Errorf("files written on error: %v", after)
			}
		})
	}
}

func TestCreateBadInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	// A minimal initialised project: PROJECT and the license header are all create reads.
	os.WriteFile(filepath.Join(dir, "PROJECT"), []byte("version: \"1\"\ndomain: example.com\nmodule: example.com/crontab\nresources:\n- group: stable\n  version: v1\n  kind: CronTab\n  plural: crontabs\n  singular: crontab\n  scope: Namespaced\n  controller: true\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "hack"), 0o755)
	os.WriteFile(filepath.Join(dir, "hack", "boilerplate.go.txt"), []byte("// header\n"), 0o644)
	before := listFiles(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--version", "v1", "--kind", "CronTab"}, "--group is required"},
		{[]string{"--group", "Stable", "--version", "v1", "--kind", "CronTab"}, "--group"},
		{[]string{"--group", "stable", "--version", "1", "--kind", "CronTab"}, "--version"},
		{[]string{"--group", "stable", "--version", "v1beta", "--kind", "CronTab"}, "--version"},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "cronTab"}, "--kind"},
		{[]string{"--group", "stable", "--version", "v1"}, "--kind is required"},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "Crontabs"}, "clashes"},
		{[]string{"--group", "func", "--version", "v1", "--kind", "CronTab"}, `--group "func" is not valid: it is a Go keyword`},
		{[]string{"--group", "any", "--version", "v1", "--kind", "CronTab"}, `--group "any" is not valid: it is a predeclared Go identifier`},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "Error"}, `--kind "Error" is not valid`},
	} {
		_, err := run(t, dir, append([]string{"create", "group", "version", "resource"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	for _, args := range [][]string{
		{"create", "controller", "--group", "apps", "--version", "v1", "--kind", "Deploymentx"},
		{"create", "controller", "--group", "stable", "--version", "v1"},
		{"create", "subresource", "--subresource", "scale", "--group", "stable", "--version", "v1", "--kind", "Missing"},
	} {
		if _, err := run(t, dir, args...); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
	if after := listFiles(t, dir); len(after) != len(before) {
		t.Errorf("files written on error: %v", after)
	}
}

func TestCreateOutsideProject(t *testing.T) {
	_, err := run(t, t.TempDir(), "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab")
	if err == nil || !strings.Contains(err.Error(), "init repo") {
		t.Fatalf("want a hint to run init repo, got %v", err)
	}
}

func TestEveryCommandHasAnExample(t *testing.T) {
	var check func(path string, c *cobra.Command)
	check = func(path string, c *cobra.Command) {
		if c.Runnable() && c.Example == "" {
			t.Errorf("%s has no example in --help", path)
		}
		for _, sub := range c.Commands() {
			check(path+" "+sub.Name(), sub)
		}
	}
	check("apiserver-boot", newRootCommand())
}

// TestCLIDoesNotLinkTheServer: the CLI starts in milliseconds (a no-op
// generate is a cache check); the apiserver library, whose packages register
// schemes and flags at start-up, belongs to generated projects, not the CLI.
func TestCLIDoesNotLinkTheServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// CEL (with the feature gates and the authorizer interface its
		// libraries declare) checks rules at generate; nothing that serves.
		cel := strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/cel") || strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/apis/cel") ||
			strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/util/") || strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/authentication/") ||
			pkg == "k8s.io/apiserver/pkg/authorization/authorizer" || pkg == "k8s.io/apiserver/pkg/warning"
		if (strings.HasPrefix(pkg, "k8s.io/apiserver/") && !cel) || pkg == "github.com/apiserver-boot/apiserver-boot/pkg/conformance" ||
			strings.HasPrefix(pkg, "k8s.io/apiextensions-apiserver/pkg/registry") {
			t.Errorf("the CLI links %s", pkg)
		}
	}
}

// TestRunLocalKeepsFilesItDidNotWrite: a --kubeconfig path holding anything
// but this project's kubeconfig is refused before anything is built, and
// left as it is.
func TestRunLocalKeepsFilesItDidNotWrite(t *testing.T) {
	dir := newProject(t)
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	_, err := run(t, dir, "run", "local", "--kubeconfig", "go.mod", "--generate=false", "--controller-manager=false", "--secure-port", "0")
	if err == nil || !strings.Contains(err.Error(), "--kubeconfig "+filepath.Join(dir, "go.mod")+" exists and is not a kubeconfig") {
		t.Errorf("want an error naming the file, got %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(after) != string(gomod) {
		t.Errorf("go.mod changed")
	}
}
