package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/test/fixtures"
)

// TestDomainWithoutDot: Kubernetes asks the dot of the group, not of the
// domain: init repo --domain sh works and --group widgets is widgets.sh; a
// domain that is no DNS name is refused naming --domain, with nothing
// written.
func TestDomainWithoutDot(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, dir, "init", "repo", "--module", "example.com/bad", "--domain", "Sh_"); err == nil || !strings.Contains(err.Error(), `--domain "Sh_" is not valid: want a lowercase DNS name, such as example.com or sh`) {
		t.Errorf("want --domain Sh_ refused naming the flag, got %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused init wrote %d files", len(entries))
	}
	mustRun(t, dir, "init", "repo", "--module", "example.com/widgets", "--domain", "sh")
	if testing.Short() {
		return
	}
	mustRun(t, dir, "create", "group", "version", "--group", "widgets", "--version", "v1")
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "widgets", "v1", "doc.go")); !strings.Contains(string(b), "+groupName=widgets.sh\n") {
		t.Errorf("pkg/apis/widgets/v1/doc.go does not serve widgets.sh:\n%s", b)
	}
	if _, err := run(t, dir, "create", "group", "version", "--group", "widgets.sh", "--version", "v1"); err == nil || !strings.Contains(err.Error(), "give the group without the project's domain: --group widgets") {
		t.Errorf("want --group widgets.sh in a project of domain sh pointed to --group widgets, got %v", err)
	}
}

// TestAnyAPIGroupAndKindInAnyFile: any group a CRD can have is served: the
// domain itself (acme.sh in a project of domain acme.sh), a group outside the
// domain (tools.dev), and <group>.<domain>; a kind declared in widget.go
// counts as one in widget_types.go. The project generates, builds, vets and
// serves each kind (its generated conformance tests: create, get, list,
// update, delete, watch).
func TestAnyAPIGroupAndKindInAnyFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated project")
	}
	dir := t.TempDir()
	mustRun(t, dir, "init", "repo", "--module", "example.com/acme", "--domain", "acme.sh")
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "gadgets", "--version", "v1", "--kind", "Gadget", "--controller=false")
	mustRun(t, dir, "create", "group", "version", "--group", "acme.sh", "--version", "v1")
	// With a controller: the typed clients of tools.dev are wired to it.
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "tools.dev", "--version", "v1", "--kind", "Tool")
	// The group recorded in full is named either way afterwards.
	if out := mustRun(t, dir, "create", "group", "version", "resource", "--group", "tools", "--version", "v1", "--kind", "Tool"); !strings.Contains(out, "Nothing to do") {
		t.Errorf("--group tools names the package of tools.dev, whose Tool exists: %s", out)
	}
	if _, err := run(t, dir, "create", "group", "version", "--group", "acme", "--version", "v2"); err != nil {
		t.Errorf("--group acme names the package of acme.sh: %v", err)
	}
	os.RemoveAll(filepath.Join(dir, "pkg", "apis", "acme", "v2"))
	// A first label with a dash (cert-manager.io, cluster-api.<domain>):
	// served from the package of the label without dashes, its typed
	// clients named CertManager (+groupGoName).
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "cert-manager.io", "--version", "v1", "--kind", "Certificate")
	mustRun(t, dir, "create", "group", "version", "resource", "--group", "cluster-api", "--version", "v1beta1", "--kind", "Machine", "--controller=false")
	if _, err := run(t, dir, "create", "group", "version", "--group", "cluster-api", "--version", "v1beta2"); err != nil {
		t.Errorf("--group cluster-api names the package of cluster-api.acme.sh: %v", err)
	}
	os.RemoveAll(filepath.Join(dir, "pkg", "apis", "clusterapi", "v1beta2"))
	project, _ := os.ReadFile(filepath.Join(dir, "PROJECT"))
	if !strings.Contains(string(project), "groups:\n  acme: acme.sh\n  certmanager: cert-manager.io\n  clusterapi: cluster-api.acme.sh\n  tools: tools.dev\n") {
		t.Errorf("PROJECT does not record the groups given in full:\n%s", project)
	}
	if _, err := run(t, dir, "create", "group", "version", "--group", "gadgets.io", "--version", "v1"); err == nil || !strings.Contains(err.Error(), "--group gadgets.io is served from the Go package pkg/apis/gadgets (its first label), which is group gadgets.acme.sh already") {
		t.Errorf("want a second group for package gadgets refused, got %v", err)
	}
	if _, err := run(t, dir, "create", "group", "version", "--group", "cert-manager.dev", "--version", "v1"); err == nil || !strings.Contains(err.Error(), "--group cert-manager.dev is served from the Go package pkg/apis/certmanager (its first label, without dashes), which is group cert-manager.io already") {
		t.Errorf("want a second group for package certmanager refused, got %v", err)
	}

	widget := filepath.Join(dir, "pkg", "apis", "acme", "v1", "widget.go")
	os.WriteFile(widget, []byte(fixtures.WidgetGo), 0o644)
	mustRun(t, dir, "generate")
	for path, want := range map[string]string{
		"pkg/apis/acme/zz_generated.register.go":                                       `const GroupName = "acme.sh"`,
		"pkg/apis/acme/zz_generated.types.go":                                          "type Widget struct",
		"pkg/apis/tools/v1/zz_generated.register.go":                                   `const GroupName = "tools.dev"`,
		"pkg/apis/gadgets/zz_generated.register.go":                                    `const GroupName = "gadgets.acme.sh"`,
		"pkg/apis/certmanager/v1/doc.go":                                               "+groupName=cert-manager.io\n// +groupGoName=CertManager\n",
		"pkg/apis/certmanager/v1/zz_generated.register.go":                             `const GroupName = "cert-manager.io"`,
		"pkg/apis/clusterapi/zz_generated.register.go":                                 `const GroupName = "cluster-api.acme.sh"`,
		"pkg/client/clientset/versioned/clientset.go":                                  "CertManagerV1() certmanagerv1.CertManagerV1Interface",
		"pkg/client/informers/externalversions/factory.go":                             "CertManager() certmanager.Interface",
		"pkg/client/listers/certmanager/v1/certificate.go":                             "type CertificateLister interface",
		"pkg/client/clientset/versioned/typed/clusterapi/v1beta1/clusterapi_client.go": "type ClusterApiV1beta1Client struct",
		"pkg/controller/certificate/zz_generated.controller.go":                        "si.Factory.CertManager().V1().Certificates()",
	} {
		if b, _ := os.ReadFile(filepath.Join(dir, path)); !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", path, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "acme", "zz_generated.types.go")); !strings.Contains(string(b), "type Size string") || !strings.Contains(string(b), `SizeSmall Size = "S"`) {
		t.Errorf("the internal types lack Size of widget.go:\n%s", b)
	}
	goIn(t, dir, "build", "./...")
	goIn(t, dir, "vet", "./...")
	goIn(t, dir, "test", "-count=1", "-run", "Conformance|RoundTrip", "./pkg/apis/")
}
