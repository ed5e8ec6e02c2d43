package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// TestRepoRelease: a released apiserver-boot makes a project that builds
// anywhere its go.mod resolves: the framework required at the release, no
// replace, the release's checksums in go.sum, and PROJECT recording it; a
// devel re-init keeps the recorded release.
func TestRepoRelease(t *testing.T) {
	root := t.TempDir()
	cli := version.Info{Version: "v0.3.0", Sum: "h1:zipsum="}
	plan, err := Repo(root, RepoOptions{Domain: "example.com", Module: "example.com/crontab", License: "apache2", Year: 2026, CLI: &cli})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Apply(); err != nil {
		t.Fatal(err)
	}
	read := func(name string) string { b, _ := os.ReadFile(filepath.Join(root, name)); return string(b) }
	if mod := read("go.mod"); !strings.Contains(mod, "\nrequire "+version.Module+" v0.3.0\n") || strings.Contains(mod, "replace") {
		t.Errorf("go.mod:\n%s", mod)
	}
	if sum := read("go.sum"); !strings.Contains(sum, version.Module+" v0.3.0 h1:zipsum=\n") || !strings.Contains(sum, version.Module+" v0.3.0/go.mod h1:") {
		t.Errorf("go.sum lacks the release's checksums")
	}
	if p, err := project.Load(root); err != nil || p.CLIVersion != "v0.3.0" {
		t.Errorf("PROJECT: %v %+v", err, p)
	}

	devel := version.Info{Build: "(devel)", SourceDir: "/src/apiserver-boot"}
	plan, err = Repo(root, RepoOptions{Domain: "example.com", Module: "example.com/crontab", License: "apache2", Year: 2026, CLI: &devel})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Files {
		if f.Path == project.FileName && !strings.Contains(string(f.Content), "cliVersion: v0.3.0") {
			t.Errorf("a devel re-init drops the recorded release:\n%s", f.Content)
		}
	}
	if _, err := Repo(t.TempDir(), RepoOptions{Domain: "example.com", Module: "example.com/crontab", License: "apache2", Year: 2026, CLI: &version.Info{Build: "(devel)"}}); err == nil || !strings.Contains(err.Error(), "APISERVER_BOOT_SOURCE") || !strings.Contains(err.Error(), "go install") {
		t.Errorf("a -trimpath devel build: want an error naming APISERVER_BOOT_SOURCE and a release, got %v", err)
	}
}
