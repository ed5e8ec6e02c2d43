//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// gatewayKinds are the kinds of Gateway API's apis/v1 whose objects are
// compared: every kind a CRD of the release serves in v1.
var gatewayKinds = []string{"GatewayClass", "Gateway", "HTTPRoute", "GRPCRoute", "ListenerSet", "BackendTLSPolicy", "ReferenceGrant", "TCPRoute", "TLSRoute", "UDPRoute"}

// manifestViolations break rules that only the release's CRD manifests
// have: Gateway API's generator writes them from its <gateway:...> comment
// tags, which no marker of the Go types says.
var manifestViolations = []sidePatch{
	{"an IPAddress with a port (<gateway:validateIPAddress>)", "Gateway", `{"spec":{"addresses":[{"type":"IPAddress","value":"1.2.3.4:8080"}]}}`},
	{"duplicate parentRefs (<gateway:standard:validation:XValidation>)", "HTTPRoute", `{"spec":{"parentRefs":[{"name":"gw"},{"name":"gw"}]}}`},
}

// experimentalFields are fields of the Go types that only the experimental
// channel's CRDs declare: the standard channel prunes them (and refuses
// them under strict field validation, kubectl's default), the experimental
// one stores them. path is where the field is in the stored spec.
var experimentalFields = []struct {
	sidePatch
	path string
}{
	{sidePatch{"Gateway defaultScope", "Gateway", `{"spec":{"defaultScope":"All"}}`}, "defaultScope"},
	{sidePatch{"HTTPRoute rule retry", "HTTPRoute", `{"spec":{"rules":[{"retry":{"attempts":2},"backendRefs":[{"name":"s","port":80}]}]}}`}, "rules.0.retry"},
}

// TestCRDManifestsSideBySide serves Gateway API's apis/v1, unchanged, with
// each channel's CRD manifests of the release as the kinds' schemas
// (config/crd/bases/<group>_<plural>.yaml), beside kube-apiserver serving the
// same manifests, and compares every decision and what is stored: the
// standard channel's rules that no marker says (written from comment tags
// by Gateway API's own generator) are kept, and the experimental fields the
// Go types hold are pruned by the standard manifests and kept by the
// experimental ones. Beside them, a kind of our own whose CRD controller-gen
// wrote and a patch then edited (a CEL rule and a pattern added) is served
// with those rules.
func TestCRDManifestsSideBySide(t *testing.T) {
	dir := downloadModule(t, gatewayAPI)
	quota := quotaManifest(t)
	for _, channel := range []string{"standard", "experimental"} {
		t.Run(channel, func(t *testing.T) { manifestSideBySide(t, dir, channel, quota) })
	}
}

func manifestSideBySide(t *testing.T, dir, channel, quotaCRD string) {
	c := startKubeClusterWith(t, clusterOptions{noControllerManager: true})
	theirs := c.kubeconfig(t, "admin", adminToken)

	// The release's CRDs of the channel, at kubebuilder's path in the project.
	files, _ := filepath.Glob(filepath.Join(dir, "config", "crd", channel, "gateway.networking.k8s.io_*.yaml"))
	var crds []string
	extra := map[string]string{}
	for _, f := range files {
		if strings.Contains(f, "vap_") { // an admission policy, not a CRD
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, f)
		extra["config/crd/bases/"+filepath.Base(f)] = string(b)
	}
	if len(crds) != len(gatewayKinds) {
		t.Fatalf("%d CRDs in the %s channel, want one per kind of %v", len(crds), channel, gatewayKinds)
	}
	standard := channel == "standard"
	if standard {
		extra["quota_types.go"] = quotaTypes
		extra["config/crd/bases/gateway.networking.k8s.io_quotas.yaml"] = quotaCRD
		crds = append(crds, writeFile(t, filepath.Join(t.TempDir(), "quotas.yaml"), []byte(quotaCRD)))
	}
	ours, generated := serveTypes(t, "gateway-"+channel, filepath.Join(dir, "apis", "v1"), "networking.k8s.io", "gateway", "v1", extra)
	t.Logf("generate:\n%s", generated)
	if !strings.Contains(generated, "config/crd/bases/gateway.networking.k8s.io_gateways.yaml") {
		t.Errorf("generate does not name the Gateway's manifest it reads the schema from:\n%s", generated)
	}

	s := sideBySide{ours: ours, theirs: theirs, group: "gateway.networking.k8s.io", version: "v1"}
	s.applyCRDs(t, crds)

	// The objects: the release's examples of every kind (the experimental
	// channel takes the standard ones too), the violations of rules that
	// markers and manifests both say, and of those only the manifests say.
	var objects []sideObject
	channels := []string{"standard"}
	if !standard {
		channels = append(channels, channel)
	}
	for _, ch := range channels {
		examples, _ := filepath.Glob(filepath.Join(dir, "examples", ch, "*.yaml"))
		more, _ := filepath.Glob(filepath.Join(dir, "examples", ch, "*", "*.yaml"))
		examples = append(examples, more...)
		sort.Strings(examples)
		for _, f := range examples {
			b, _ := os.ReadFile(f)
			rel, _ := filepath.Rel(dir, f)
			objects = append(objects, s.examples(rel, string(b), gatewayKinds...)...)
		}
	}
	examples := len(objects)
	if examples < 60 {
		t.Fatalf("%d examples: the release's examples were not found", examples)
	}
	objects = append(objects, patched(t, gatewayBase, gatewayViolations, false)...)
	objects = append(objects, patched(t, gatewayBase, manifestViolations, false)...)
	var fields []sidePatch
	for _, f := range experimentalFields {
		fields = append(fields, f.sidePatch)
	}
	// Strict field validation (kubectl's default): an experimental field is
	// an unknown field to a standard CRD, and valid in an experimental one.
	objects = append(objects, patched(t, gatewayBase, fields, !standard)...)
	if standard {
		objects = append(objects, patched(t, quotaBase, quotaValid, true)...)
		objects = append(objects, patched(t, quotaBase, quotaViolations, false)...)
		objects = append(objects, sideObject{name: "violation: a name over the patch's maxLength of metadata.name", violation: true,
			doc: `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Quota","metadata":{"name":"a-quota-named-too-long"},"spec":{"limit":5}}`})
	}
	s.creates(t, objects)
	t.Logf("%s: %d examples of %s, %d violations", channel, examples, gatewayAPI, len(gatewayViolations)+len(manifestViolations))

	s.resources(t)
	s.columns(t, gatewayBase)

	// What is stored when the client does not validate fields: the standard
	// channel prunes the experimental fields, here as on kube-apiserver.
	for i, f := range experimentalFields {
		obj := patched(t, gatewayBase, []sidePatch{f.sidePatch}, true)[0]
		name := fmt.Sprintf("experimental-%d", i)
		doc := strings.Replace(obj.doc, `"name":"valid-0"`, fmt.Sprintf("%q:%q", "name", name), 1)
		var stored [2]any
		for j, kc := range []string{s.ours, s.theirs} {
			if r := kubectlWith(kc, doc, "create", "--validate=false", "-f", "-"); r.err != nil {
				t.Fatalf("%s: create: %v\n%s", f.name, r.err, r.stderr)
			}
			r := kubectlWith(kc, "", "get", s.resource(f.kind), name, "-o", "json")
			if r.err != nil {
				t.Fatalf("%s: get: %v\n%s", f.name, r.err, r.stderr)
			}
			stored[j] = specOf(t, r.stdout)
		}
		if !reflect.DeepEqual(stored[0], stored[1]) {
			t.Errorf("%s (%s): the stored spec differs:\nours:   %v\ntheirs: %v", f.name, channel, stored[0], stored[1])
		}
		if _, kept := lookup(stored[0], f.path); kept != !standard {
			t.Errorf("%s (%s): spec.%s stored=%v, want %v: %v", f.name, channel, f.path, kept, !standard, stored[0])
		}
	}
}

// quotaTypes is a kind of our own served beside Gateway API's, written for
// controller-gen; its CRD is then edited (quotaManifest).
const quotaTypes = `package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +kubebuilder:object:root=true
// +kubebuilder:resource:path=quotas

// Quota caps a tenant's requests.
type Quota struct {
	metav1.TypeMeta ` + "`" + `json:",inline"` + "`" + `
	// +optional
	metav1.ObjectMeta ` + "`" + `json:"metadata,omitempty"` + "`" + `

	// +optional
	Spec QuotaSpec ` + "`" + `json:"spec,omitempty"` + "`" + `
}

// QuotaSpec is the spec of a Quota.
type QuotaSpec struct {
	// Limit is the requests per second.
	// +kubebuilder:validation:Minimum=1
	Limit int32 ` + "`" + `json:"limit"` + "`" + `

	// Burst is the requests a moment may take.
	// +optional
	Burst *int32 ` + "`" + `json:"burst,omitempty"` + "`" + `

	// Tenant is whose quota it is.
	// +optional
	Tenant string ` + "`" + `json:"tenant,omitempty"` + "`" + `
}

// +kubebuilder:object:root=true

// QuotaList is a list of Quotas.
type QuotaList struct {
	metav1.TypeMeta ` + "`" + `json:",inline"` + "`" + `
	metav1.ListMeta ` + "`" + `json:"metadata,omitempty"` + "`" + `
	Items           []Quota ` + "`" + `json:"items"` + "`" + `
}
`

var quotaBase = map[string]string{
	"Quota": `{"apiVersion":"gateway.networking.k8s.io/v1","kind":"Quota","metadata":{"name":"base"},"spec":{"limit":5}}`,
}

var quotaValid = []sidePatch{
	{"burst above the limit", "Quota", `{"spec":{"burst":10,"tenant":"team"}}`},
}

var quotaViolations = []sidePatch{
	{"limit 0 (the marker's minimum)", "Quota", `{"spec":{"limit":0}}`},
	{"burst below the limit (the patch's rule)", "Quota", `{"spec":{"burst":1}}`},
	{"tenant not lower case (the patch's pattern)", "Quota", `{"spec":{"tenant":"Team_A"}}`},
}

// quotaManifest is the CRD controller-gen writes for quotaTypes, edited as
// a kustomize patch edits it: a CEL rule on the spec, a pattern on the
// tenant and a maxLength of metadata.name, which no marker of the types says.
func quotaManifest(t *testing.T) string {
	t.Helper()
	mod := t.TempDir()
	if err := os.MkdirAll(filepath.Join(mod, "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "v1", "doc.go"), []byte("// +groupName=gateway.networking.k8s.io\npackage v1\n"))
	writeFile(t, filepath.Join(mod, "v1", "quota_types.go"), []byte(quotaTypes))
	goSum, err := os.ReadFile(filepath.Join(repoRoot, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "go.sum"), goSum)
	writeFile(t, filepath.Join(mod, "go.mod"), []byte("module example.com/quota\n\ngo 1.26\n\nrequire k8s.io/apimachinery v0.37.2\n"))
	out := t.TempDir()
	if err := timed("quota: controller-gen", func() error {
		if b, err := harness.Sh(mod, "go", "mod", "tidy"); err != nil {
			return fmt.Errorf("%v\n%s", err, b)
		}
		if b, err := harness.Sh(mod, "go", "run", "sigs.k8s.io/controller-tools/cmd/controller-gen@v0.23.0", "crd", "paths=./v1", "output:crd:dir="+out); err != nil {
			return fmt.Errorf("%v\n%s", err, b)
		}
		return nil
	}); err != nil {
		t.Fatalf("controller-gen: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(out, "gateway.networking.k8s.io_quotas.yaml"))
	if err != nil {
		t.Fatalf("controller-gen wrote no CRD for quotas: %v", err)
	}
	var crd map[string]any
	if err := yaml.Unmarshal(b, &crd); err != nil {
		t.Fatal(err)
	}
	// The group is a Kubernetes one: kube-apiserver asks for the approval
	// annotation, as Gateway API's own CRDs carry it.
	crd["metadata"].(map[string]any)["annotations"].(map[string]any)["api-approved.kubernetes.io"] = "unapproved, test only"
	version := crd["spec"].(map[string]any)["versions"].([]any)[0].(map[string]any)
	props := version["schema"].(map[string]any)["openAPIV3Schema"].(map[string]any)["properties"].(map[string]any)
	spec := props["spec"].(map[string]any)
	spec["x-kubernetes-validations"] = []any{map[string]any{"rule": "!has(self.burst) || self.burst >= self.limit", "message": "burst must be at least the limit"}}
	spec["properties"].(map[string]any)["tenant"].(map[string]any)["pattern"] = "^[a-z]+$"
	// The one restriction of metadata a CRD may declare.
	props["metadata"] = map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string", "maxLength": 20}}}
	patched, err := yaml.Marshal(crd)
	if err != nil {
		t.Fatal(err)
	}
	return string(patched)
}
