//go:build e2e

package e2e

import (
	"strings"
	"testing"
)

// TestAnyGroupAndKindInAnyFile: the shared project serves a group outside
// its domain (widgets.sh, a .sh group as a CRD may have) whose kind is
// declared in widget.go, a group that is the domain itself (example.com),
// and a group with a dash in its first label (cert-manager.io, from package
// certmanager): kubectl creates and gets them, the schema of widget.go's
// types applies.
func TestAnyGroupAndKindInAnyFile(t *testing.T) {
	rl, _ := runLocal(t, "--controller-manager=false")
	defer rl.Stop(t)
	for _, manifest := range []string{
		"apiVersion: widgets.sh/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  size: M\n",
		"apiVersion: example.com/v1\nkind: Gizmo\nmetadata:\n  name: g1\nspec:\n  replicas: 2\n",
		"apiVersion: cert-manager.io/v1\nkind: Issuer\nmetadata:\n  name: i1\nspec:\n  replicas: 3\n",
	} {
		if r := kubectlApplyStdin(t, "create", manifest); r.err != nil {
			t.Fatalf("kubectl create: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
	}
	if got := mustKubectl(t, "get", "widgets.widgets.sh", "w1", "-o", "jsonpath={.apiVersion} {.kind} {.spec.size}"); got != "widgets.sh/v1 Widget M" {
		t.Errorf("kubectl get widget w1: %q", got)
	}
	// The table has widget.go's printer column, as the CRD's would.
	if got := strings.Join(strings.Fields(mustKubectl(t, "get", "widgets")), " "); got != "NAME SIZE w1 M" {
		t.Errorf("kubectl get widgets: %q", got)
	}
	if got := mustKubectl(t, "get", "gizmos.example.com", "g1", "-o", "jsonpath={.apiVersion} {.kind} {.spec.replicas}"); got != "example.com/v1 Gizmo 2" {
		t.Errorf("kubectl get gizmo g1: %q", got)
	}
	// widget.go's Enum applies, as it would to the CRD.
	r := kubectlApplyStdin(t, "create", "apiVersion: widgets.sh/v1\nkind: Widget\nmetadata:\n  name: w2\nspec:\n  size: XL\n")
	if r.err == nil || !strings.Contains(r.stderr, `spec.size: Unsupported value: "XL"`) {
		t.Errorf("want size XL refused by the Enum of widget.go, got %v\n%s", r.err, r.stderr)
	}
	if got := mustKubectl(t, "api-resources", "--api-group", "widgets.sh", "--no-headers", "-o", "name"); got != "widgets.widgets.sh\n" {
		t.Errorf("discovery of widgets.sh: %q", got)
	}
	if got := mustKubectl(t, "get", "issuers.cert-manager.io", "i1", "-o", "jsonpath={.apiVersion} {.kind} {.spec.replicas}"); got != "cert-manager.io/v1 Issuer 3" {
		t.Errorf("kubectl get issuer i1: %q", got)
	}
	if got := mustKubectl(t, "api-resources", "--api-group", "cert-manager.io", "--no-headers", "-o", "name"); got != "issuers.cert-manager.io\n" {
		t.Errorf("discovery of cert-manager.io: %q", got)
	}
	// Its OpenAPI is published under the group's name.
	if got := mustKubectl(t, "explain", "issuers.cert-manager.io.spec.replicas"); !strings.Contains(got, "GROUP:      cert-manager.io") || !strings.Contains(got, "FIELD: replicas <integer>") {
		t.Errorf("kubectl explain issuers.cert-manager.io.spec.replicas:\n%s", got)
	}
}
