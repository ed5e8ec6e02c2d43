package project

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadChecksGroups: a group PROJECT records is checked as create
// checks --group: a hand edit does not reach +groupName unchecked.
func TestLoadChecksGroups(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte("domain: example.com\ngroups:\n  widgets: Widgets_SH\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), `groups.widgets "Widgets_SH" is not a valid API group name`) {
		t.Errorf("want an error naming groups.widgets, got %v", err)
	}
}

// TestProjectFileRoundTrip: PROJECT reads and writes as it always did, the
// kind's fields (KindDescriptor) inline in each resource: a built-in kind
// keeps its names and scope, a kind of the project only which it is; an
// older PROJECT repeating a kind's names still loads; an unknown field is
// an error.
func TestProjectFileRoundTrip(t *testing.T) {
	const written = `# Written by apiserver-boot: which kinds and controllers the project has. Their names, scope
# and subresources are the +resource and +subresource markers on the types.
domain: example.com
module: example.com/crontab
resources:
- controller: true
  external: true
  group: apps
  kind: Deployment
  package: k8s.io/api/apps/v1
  plural: deployments
  singular: deployment
  version: v1
- controller: true
  group: stable
  kind: CronTab
  version: v1
version: "1"
`
	const older = `version: "1"
domain: example.com
module: example.com/crontab
resources:
- {group: stable, version: v1, kind: CronTab, plural: crontabs, singular: crontab, shortNames: [ct], scope: Namespaced, subresources: [status], controller: true}
- {group: apps, version: v1, kind: Deployment, plural: deployments, singular: deployment, controller: true, external: true, package: k8s.io/api/apps/v1}
`
	for name, content := range map[string]string{"written": written, "older": older} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, FileName), []byte(content), 0o644)
		p, err := Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if r := p.Find("apps", "v1", "Deployment"); r == nil || r.Plural != "deployments" || r.Package != "k8s.io/api/apps/v1" || !r.Namespaced() {
			t.Errorf("%s: the built-in kind reads as %+v", name, r)
		}
		if name == "older" {
			if r := p.Find("stable", "v1", "CronTab"); r == nil || r.Singular != "crontab" || r.ShortNames[0] != "ct" || r.Scope != Namespaced || !r.HasSubresource("status") {
				t.Errorf("older: CronTab reads as %+v", r)
			}
		}
		b, err := p.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != written {
			t.Errorf("%s: written as\n%s\nwant\n%s", name, b, written)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, FileName), []byte("domain: example.com\nresources:\n- {group: stable, version: v1, kind: CronTab, plurals: crontabs}\n"), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "plurals") {
		t.Errorf("an unknown field should be an error naming it, got %v", err)
	}
}

// TestCLIVersion: PROJECT records which apiserver-boot release wrote it
// (cliVersion), keeps it when rewritten, and a PROJECT written before the
// field existed still loads, with none.
func TestCLIVersion(t *testing.T) {
	dir := t.TempDir()
	const recorded = "cliVersion: v0.3.0\ndomain: example.com\nmodule: example.com/crontab\nversion: \"1\"\n"
	os.WriteFile(filepath.Join(dir, FileName), []byte(recorded), 0o644)
	p, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if p.CLIVersion != "v0.3.0" {
		t.Errorf("CLIVersion %q", p.CLIVersion)
	}
	p.Resources = append(p.Resources, &Resource{KindDescriptor: KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab"}})
	if b, err := p.Marshal(); err != nil || !strings.Contains(string(b), "\ncliVersion: v0.3.0\n") {
		t.Errorf("rewritten without its cliVersion: %v\n%s", err, b)
	}
	os.WriteFile(filepath.Join(dir, FileName), []byte("domain: example.com\nmodule: example.com/crontab\nversion: \"1\"\n"), 0o644)
	if p, err := Load(dir); err != nil || p.CLIVersion != "" {
		t.Errorf("a PROJECT without cliVersion: %v %+v", err, p)
	} else if b, _ := p.Marshal(); strings.Contains(string(b), "cliVersion") {
		t.Errorf("no cliVersion is written as none:\n%s", b)
	}
}
