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

// kubebuilderTypes are types as a CRD project writes them (Gateway API's
// style): object:root kinds, markers a blank line above the doc, a Kind
// type of their own, markers on named types, Enum on an integer, a struct
// default, CEL rules.
const kubebuilderTypes = `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kind refers to a Kubernetes kind.
type Kind string

// Hostname is a DNS name.
//
// +kubebuilder:validation:MinLength=1
// +kubebuilder:validation:MaxLength=253
type Hostname string

// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:categories=net,shortName=rt
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Host",type=string,JSONPath=` + "`.spec.hostname`" + `

// Route routes.
type Route struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   RouteSpec   ` + "`json:\"spec\"`" + `
	Status RouteStatus ` + "`json:\"status,omitempty\"`" + `
}

// +kubebuilder:validation:XValidation:rule="!has(self.code) || self.code != 302 || has(self.hostname)",message="a 302 needs a hostname"
type RouteSpec struct {
	// +optional
	Hostname *Hostname ` + "`json:\"hostname,omitempty\"`" + `
	// +optional
	// +kubebuilder:validation:Enum=200;301;302
	Code *int ` + "`json:\"code,omitempty\"`" + `
	// +optional
	// +kubebuilder:default={kind: "Service"}
	Backend *Backend ` + "`json:\"backend,omitempty\"`" + `
	// +optional
	// +default:=8080
	Port *int32 ` + "`json:\"port,omitempty\"`" + `
	// +optional
	// +kubebuilder:default:=3
	Retries *int32 ` + "`json:\"retries,omitempty\"`" + `
}

type Backend struct {
	Kind Kind ` + "`json:\"kind\"`" + `
}

type RouteStatus struct {
	// +optional
	Accepted bool ` + "`json:\"accepted,omitempty\"`" + `
}

// +kubebuilder:object:root=true
type RouteList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Route ` + "`json:\"items\"`" + `
}
`

// TestKubebuilderTypesGenerate: types written for controller-gen generate
// as they are, each marker with controller-gen's meaning in the schema.
func TestKubebuilderTypesGenerate(t *testing.T) {
	dir := newProject(t)
	mustRun(t, dir, "create", "group", "version", "--group", "net", "--version", "v1")
	os.WriteFile(filepath.Join(dir, "pkg", "apis", "net", "v1", "route_types.go"), []byte(kubebuilderTypes), 0o644)
	mustRun(t, dir, "generate")
	schemas, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "zz_generated.schemas.go"))
	s := strings.ReplaceAll(string(schemas), `\"`, `"`)
	for _, want := range []string{
		`"net.example.com/v1/Route"`,
		`"hostname":{"type":"string","maxLength":253,"minLength":1}`,
		`"code":{"type":"integer","enum":[200,301,302]}`,
		`"default":{"kind":"Service"}`,
		`"port":{"type":"integer","format":"int32","default":8080}`,
		`"retries":{"type":"integer","format":"int32","default":3}`,
		`"x-kubernetes-validations":[{"rule":"!has(self.code) || self.code != 302 || has(self.hostname)","message":"a 302 needs a hostname"}]`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("schemas lack %s:\n%s", want, s)
		}
	}
	register, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "net", "v1", "zz_generated.register.go"))
	if strings.Contains(string(register), "func Kind(") || !strings.Contains(string(register), "&Route{}") {
		t.Errorf("the registration declares Kind beside the types' own, or misses Route:\n%s", register)
	}
	apis, _ := os.ReadFile(filepath.Join(dir, "pkg", "apis", "zz_generated.register.go"))
	for _, want := range []string{`Plural:            "routes"`, `ShortNames:        []string{"rt"}`, `Categories:        []string{"net"}`, "ExactColumns: true"} {
		if !strings.Contains(string(apis), want) {
			t.Errorf("the API registration lacks %s", want)
		}
	}
}

// TestGeneratedNamesClash: a name the generated code declares, declared by
// the types too (kubebuilder's groupversion_info.go), is a generate error at
// the user's line, with nothing written.
func TestGeneratedNamesClash(t *testing.T) {
	dir := newProject(t)
	info := filepath.Join(dir, "pkg", "apis", "stable", "v1", "groupversion_info.go")
	os.WriteFile(info, []byte("package v1\n\nimport \"sigs.k8s.io/controller-runtime/pkg/scheme\"\n\nvar (\n\tSchemeBuilder = &scheme.Builder{}\n\tAddToScheme   = SchemeBuilder.AddToScheme\n)\n"), 0o644)
	before := tree(t, dir)
	out, err := run(t, dir, "generate")
	msg := out
	if err != nil {
		msg += err.Error()
	}
	for _, want := range []string{"groupversion_info.go:6:2: SchemeBuilder is declared by the generated code of package v1", "groupversion_info.go:7:2: AddToScheme"} {
		if err == nil || !strings.Contains(msg, want) {
			t.Errorf("want %q, got %v\n%s", want, err, out)
		}
	}
	for path, content := range tree(t, dir) {
		if before[path] != content {
			t.Errorf("%s written by a failed generate", path)
		}
	}
}
