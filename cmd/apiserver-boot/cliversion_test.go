package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	apiserverboot "github.com/apiserver-boot/apiserver-boot"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/versionreport"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// TestVersionCommand: version's first line is "apiserver-boot <version>";
// it lists the Kubernetes libraries, etcd and kine the framework's go.mod
// pins; -o json carries the same; a bad -o names the flag and the choices.
func TestVersionCommand(t *testing.T) {
	out, err := run(t, t.TempDir(), "version")
	if err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(out, "\n", 2)[0]; first != "apiserver-boot devel" {
		t.Errorf("first line %q, want \"apiserver-boot devel\" (a test binary is a devel build)", first)
	}
	f, err := modfile.Parse("go.mod", apiserverboot.GoMod, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		switch r.Mod.Path {
		case "k8s.io/apiserver", "k8s.io/client-go", "k8s.io/apimachinery", "k8s.io/code-generator", "go.etcd.io/etcd/server/v3", "github.com/k3s-io/kine":
			if !strings.Contains(out, r.Mod.Path) || !strings.Contains(out, r.Mod.Version) {
				t.Errorf("no %s %s in\n%s", r.Mod.Path, r.Mod.Version, out)
			}
		}
	}
	if !strings.Contains(out, "kubernetes  1.37 (k8s.io/apiserver v0.37.") || !strings.Contains(out, "go          go1.") {
		t.Errorf("kubernetes and go lines:\n%s", out)
	}

	out, err = run(t, t.TempDir(), "version", "-o", "json")
	var r versionreport.Report
	if err != nil || json.Unmarshal([]byte(out), &r) != nil || r.Version != "devel" || r.Release || r.Pin("k8s.io/client-go") == "" || r.Kubernetes == "" {
		t.Errorf("-o json: %v\n%s", err, out)
	}
	if _, err := run(t, t.TempDir(), "version", "--output", "xml"); err == nil || !strings.Contains(err.Error(), `--output "xml": want text, json or yaml`) {
		t.Errorf("--output xml: %v", err)
	}
}

// TestCommandsKeepCLIVersion: a command that rewrites PROJECT keeps the
// release recorded there (only init and upgrade set it).
func TestCommandsKeepCLIVersion(t *testing.T) {
	dir := newProject(t)
	path := filepath.Join(dir, project.FileName)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "cliVersion") {
		t.Fatalf("a devel build records no cliVersion:\n%s", b)
	}
	os.WriteFile(path, []byte(strings.Replace(string(b), "domain:", "cliVersion: v0.3.0\ndomain:", 1)), 0o644)
	if out, err := run(t, dir, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Calendar", "--controller=false"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	b, _ = os.ReadFile(path)
	if !strings.Contains(string(b), "Calendar") || !strings.Contains(string(b), "\ncliVersion: v0.3.0\n") {
		t.Errorf("PROJECT after create:\n%s", b)
	}
}

// TestInitSaysItTiesToTheCheckout: a devel build (this test binary) that
// inits a project outside its checkout says the project is tied to it, and
// how to depend on a release instead.
func TestInitSaysItTiesToTheCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	dir := t.TempDir()
	out, err := run(t, dir, "init", "repo", "--module", "example.com/crontab", "--domain", "example.com")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	if !strings.Contains(string(mod), "replace "+version.Module+" => ") || !strings.Contains(out, "the project builds only where that folder exists") || !strings.Contains(out, "go mod edit -dropreplace="+version.Module) {
		t.Errorf("init by a devel build outside its checkout:\n%s\ngo.mod:\n%s", out, mod)
	}
}
