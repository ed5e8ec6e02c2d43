//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/fixtures"
	"github.com/apiserver-boot/apiserver-boot/test/harness"
	"sigs.k8s.io/yaml"
)

// conditionsModule is a helper library as operators import one for their
// status conditions: its own Go module, kubebuilder markers, no
// +k8s:openapi-gen and no OpenAPI definitions.
var conditionsModule = map[string]string{
	"go.mod": "module example.com/conditions\n\ngo 1.24\n",
	"status/condition.go": `// Package status holds the condition type of example.com's operators.
package status

// Condition is an observation of an object's state.
type Condition struct {
	// Type of the condition.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Type string ` + "`json:\"type\"`" + `
	// Status of the condition.
	// +kubebuilder:validation:Enum=True;False;Unknown
	Status string ` + "`json:\"status\"`" + `
	// Reason for the condition's last transition.
	// +optional
	Reason string ` + "`json:\"reason,omitempty\"`" + `
}
`,
}

// timerTypes are written for a CRD, kubebuilder's way: an immutable spec
// whose interval is a Duration (fixtures.TimerDurationGo, written beside it
// as duration.go), a printer column and a selectable field on the duration,
// and conditions of the helper library's type.
const timerTypes = `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"example.com/conditions/status"
)

// Timer fires at an interval.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=timers
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Interval",type=string,JSONPath=".spec.interval"
// +kubebuilder:selectablefield:JSONPath=".spec.interval"
type Timer struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   TimerSpec   ` + "`json:\"spec\"`" + `
	Status TimerStatus ` + "`json:\"status,omitempty\"`" + `
}

// TimerSpec is the desired state of a Timer.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec is immutable"
type TimerSpec struct {
	// Interval between two firings, or Never.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:validation:Pattern=` + "`^(([0-9]+(s|m|h))+|Never)$`" + `
	Interval Duration ` + "`json:\"interval\"`" + `
	// Grace after a missed firing, or Never; left out, none. Go writes
	// it (no omitempty) as its zero value, Never, when left out.
	// +optional
	// +kubebuilder:default="0s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Schemaless
	Grace Duration ` + "`json:\"grace\"`" + `
	// Jitter added to each firing; left out, 1s.
	// +optional
	// +kubebuilder:default="1s"
	Jitter metav1.Duration ` + "`json:\"jitter,omitempty\"`" + `
}

// TimerStatus is the observed state of a Timer.
type TimerStatus struct {
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []status.Condition ` + "`json:\"conditions,omitempty\"`" + `
}

// TimerList is a list of Timer objects.
//
// +kubebuilder:object:root=true
type TimerList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `

	Items []Timer ` + "`json:\"items\"`" + `
}
`

// controllerGen is controller-gen at the version go.mod pins, kept in
// .cache/bin (bench/editloop.go keeps it there too).
func controllerGen(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(repoRoot, ".cache", "bin", "controller-gen")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	// go install at the pinned version: the tool's own go.sum, not ours
	// (which lacks what controller-gen's help output imports).
	if err := timed("install controller-gen", func() error {
		version, err := harness.Sh(repoRoot, "go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/controller-tools")
		if err != nil {
			return err
		}
		_, err = harness.Sh(repoRoot, "env", "GOBIN="+filepath.Dir(bin), "go", "install",
			"sigs.k8s.io/controller-tools/cmd/controller-gen@"+strings.TrimSpace(version))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestCustomJSONTypesSideBySide serves types written for a CRD that reach
// beyond what openapi-gen and apimachinery's unstructured converter know (a
// condition type from another module without OpenAPI definitions, a
// duration with its own JSON encoding) and compares them with the CRD
// controller-gen writes from the same types, on kube-apiserver: the
// apiserver starts, publishes the condition type and validates it; the
// pattern, a transition rule on a metadata-only write, the printer column
// and the selectable field see the duration as its JSON; a field left out
// gets the CRD's default where Go writes it in its type's own zero form
// (Never), and that zero form sent is kept; a status no one wrote is not
// answered.
func TestCustomJSONTypesSideBySide(t *testing.T) {
	dir := t.TempDir()
	for name, content := range conditionsModule {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, "conditions", name)), 0o755)
		writeFile(t, filepath.Join(dir, "conditions", name), []byte(content))
	}
	p := filepath.Join(dir, "timer")
	os.MkdirAll(p, 0o755)
	for _, step := range [][]string{
		{"go", "mod", "init", "example.com/timer"},
		{cli, "init", "repo", "--domain", "example.com"},
		{cli, "create", "group", "version", "--group", "timing", "--version", "v1"},
		{"go", "mod", "edit", "-require", "example.com/conditions@v0.0.0", "-replace", "example.com/conditions=../conditions"},
	} {
		if out, err := harness.Sh(p, step[0], step[1:]...); err != nil {
			t.Fatalf("%v: %v\n%s", step, err, out)
		}
	}
	os.MkdirAll(filepath.Join(p, "pkg", "apis", "timing", "v1"), 0o755)
	writeFile(t, filepath.Join(p, "pkg", "apis", "timing", "v1", "timer_types.go"), []byte(timerTypes))
	writeFile(t, filepath.Join(p, "pkg", "apis", "timing", "v1", "duration.go"), []byte(fixtures.TimerDurationGo))
	if err := timed("custom JSON types: generate, build", func() error {
		if out, err := harness.Sh(p, cli, "generate"); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		if out, err := harness.Sh(p, "go", "build", "-o", "bin/", "./cmd/apiserver"); err != nil {
			return fmt.Errorf("%v\n%s", err, out)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ours := harness.Start(t, p, cli, "run", "local", "--secure-port", fmt.Sprint(harness.FreePort(t)), "--controller-manager=false")
	defer ours.Stop(t)
	ours.WaitFor(t, "Ready.", 5*time.Minute) // it did not start: "cannot find model definition for example.com/conditions/status.Condition"
	oursKubeconfig := filepath.Join(p, "kubeconfig")

	// The reference: the CRD controller-gen writes from the same types.
	crdDir := filepath.Join(dir, "crd")
	if out, err := harness.Sh(p, controllerGen(t), "crd", "paths=./pkg/apis/timing/v1", "output:crd:dir="+crdDir); err != nil {
		t.Fatalf("controller-gen: %v\n%s", err, out)
	}
	c := startKubeCluster(t)
	theirs := c.kubeconfig(t, "admin", adminToken)
	kubectlAs(t, theirs, "apply", "--server-side", "-f", filepath.Join(crdDir, "timing.example.com_timers.yaml"))
	kubectlAs(t, theirs, "wait", "--for", "condition=Established", "--timeout", "2m", "crd/timers.timing.example.com")

	both := func(stdin string, args ...string) (a, b result) {
		return kubectlWith(oursKubeconfig, stdin, args...), kubectlWith(theirs, stdin, args...)
	}
	timer := func(name, interval string) string {
		return fmt.Sprintf(`{"apiVersion":"timing.example.com/v1","kind":"Timer","metadata":{"name":%q},"spec":{"interval":%q}}`, name, interval)
	}
	applied := func(meta string) string {
		return `{"apiVersion":"timing.example.com/v1","kind":"Timer","metadata":{"name":"applied"` + meta + `},"spec":{"interval":"1m30s","grace":"1m"}}`
	}
	// Writes: each decided alike, errors in the same words, the same spec stored.
	agree, writes := 0, 0
	for _, w := range []struct {
		name, stdin string
		args        []string
		valid       bool
	}{
		{"create 5s", timer("t", "5s"), []string{"create", "-f", "-", "-o", "json"}, true},
		// The applies set grace: server-side apply reads the stored
		// object through the type's ToUnstructured, whose bytes it
		// cannot take back (docs/markers.md).
		{"create 1m30s, applied", applied(""), []string{"apply", "--server-side", "-f", "-", "-o", "json"}, true},
		{"create Never", timer("never", "Never"), []string{"create", "-f", "-", "-o", "json"}, true},
		// The zero form of a field without omitempty sent: kept, not
		// defaulted (jitter, omitempty, would be: docs/markers.md).
		{"create grace Never", `{"apiVersion":"timing.example.com/v1","kind":"Timer","metadata":{"name":"zero"},"spec":{"interval":"5s","grace":"Never","jitter":"2s"}}`,
			[]string{"create", "-f", "-", "-o", "json"}, true},
		{"create grace Never, applied", `{"apiVersion":"timing.example.com/v1","kind":"Timer","metadata":{"name":"zero-applied"},"spec":{"interval":"5s","grace":"Never"}}`,
			[]string{"apply", "--server-side", "-f", "-", "-o", "json"}, true},
		{"create -1s (the pattern)", timer("negative", "-1s"), []string{"create", "-f", "-", "-o", "json"}, false},
		{"a label (metadata only, spec immutable)", "", []string{"label", "timer", "t", "a=b", "-o", "json"}, true},
		{"an annotation by merge patch", "", []string{"patch", "timer", "t", "--type", "merge", "-p", `{"metadata":{"annotations":{"x":"y"}}}`, "-o", "json"}, true},
		{"an annotation by server-side apply", applied(`,"annotations":{"x":"y"}`), []string{"apply", "--server-side", "-f", "-", "-o", "json"}, true},
		{"the interval changed", "", []string{"patch", "timer", "t", "--type", "merge", "-p", `{"spec":{"interval":"6s"}}`, "-o", "json"}, false},
		// The condition type of the other module, validated through /status.
		{"a condition", "", []string{"patch", "timer", "t", "--subresource", "status", "--type", "merge", "-p", `{"status":{"conditions":[{"type":"Ready","status":"True"}]}}`, "-o", "json"}, true},
		{"a condition of status Maybe", "", []string{"patch", "timer", "t", "--subresource", "status", "--type", "merge", "-p", `{"status":{"conditions":[{"type":"Ready","status":"Maybe"}]}}`, "-o", "json"}, false},
		{"a condition without a type", "", []string{"patch", "timer", "t", "--subresource", "status", "--type", "merge", "-p", `{"status":{"conditions":[{"type":"","status":"True"}]}}`, "-o", "json"}, false},
	} {
		a, b := both(w.stdin, w.args...)
		writes++
		switch {
		case (a.err == nil) != (b.err == nil) || (b.err == nil) != w.valid:
			t.Errorf("%s: apiserver-boot accepted=%v, kube-apiserver accepted=%v (want %v)\nours: %s\ntheirs: %s", w.name, a.err == nil, b.err == nil, w.valid, a.stderr, b.stderr)
		case b.err != nil && a.stderr != b.stderr:
			t.Errorf("%s: the errors differ:\nours:   %s\ntheirs: %s", w.name, a.stderr, b.stderr)
		case a.err == nil && !reflect.DeepEqual(specOf(t, a.stdout), specOf(t, b.stdout)):
			t.Errorf("%s: the stored spec differs:\nours:   %s\ntheirs: %s", w.name, specJSON(t, a.stdout), specJSON(t, b.stdout))
		default:
			agree++
		}
	}
	t.Logf("apiserver-boot and kube-apiserver agree on %d of %d writes", agree, writes)

	// The statuses: none where no one wrote one, as the CRD answers (a
	// create drops it), and the condition written through /status.
	for _, args := range [][]string{{"get", "timer", "zero", "-o", "json"}, {"get", "timers", "-o", "json"}, {"get", "timers", "-o", "yaml"}} {
		if a, b := both("", args...); statusesOf(t, a.stdout) != statusesOf(t, b.stdout) {
			t.Errorf("%v: the statuses differ:\nours:   %s\ntheirs: %s", args, statusesOf(t, a.stdout), statusesOf(t, b.stdout))
		} else {
			t.Logf("%v: the same statuses: %s", args, statusesOf(t, a.stdout))
		}
	}

	// The printer column, on the table of every timer (the AGE column aside).
	rows := func(r result) string {
		if r.err != nil {
			t.Fatalf("get timers: %v\n%s", r.err, r.stderr)
		}
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			f := strings.Fields(l)
			if strings.HasPrefix(header(r.stdout), "NAME INTERVAL AGE") {
				f = f[:len(f)-1]
			}
			out = append(out, strings.Join(f, " "))
		}
		return strings.Join(out, "\n")
	}
	if a, b := both("", "get", "timers"); rows(a) != rows(b) || header(a.stdout) != header(b.stdout) {
		t.Errorf("the tables differ:\nours:\n%s\ntheirs:\n%s", a.stdout, b.stdout)
	} else {
		t.Logf("the same table (AGE aside):\n%s", rows(a))
	}
	// The selectable field.
	if a, b := both("", "get", "timers", "--field-selector", "spec.interval=1m30s", "-o", "name"); a.err != nil || a.stdout != b.stdout || a.stdout == "" {
		t.Errorf("field selector spec.interval=1m30s:\nours:   %s%s\ntheirs: %s%s", a.stdout, a.stderr, b.stdout, b.stderr)
	}
	// The published OpenAPI: the condition type and the duration as the CRD has them.
	for _, path := range []string{"timers.spec", "timers.status.conditions"} {
		a, b := both("", "explain", path, "--recursive")
		if a.err != nil || b.err != nil || fieldsOf(a.stdout) == "" || fieldsOf(a.stdout) != fieldsOf(b.stdout) {
			t.Errorf("explain %s --recursive:\nours:\n%s%s\ntheirs:\n%s%s", path, a.stdout, a.stderr, b.stdout, b.stderr)
		} else {
			t.Logf("explain %s --recursive, the same fields:\n%s", path, fieldsOf(a.stdout))
		}
	}
}

// fieldsOf is the FIELDS part of kubectl explain's output.
func fieldsOf(explain string) string {
	_, fields, _ := strings.Cut(explain, "FIELDS:")
	return strings.TrimSpace(fields)
}

// statusesOf is the status of each object of a kubectl get's JSON or YAML
// (a list's items, or the object), by name; "none" where it has none.
func statusesOf(t *testing.T, out string) string {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(out))
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var o map[string]any
	if err := json.Unmarshal(j, &o); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	objects := []any{o}
	if items, ok := o["items"].([]any); ok {
		objects = items
	}
	var parts []string
	for _, item := range objects {
		m, _ := item.(map[string]any)
		meta, _ := m["metadata"].(map[string]any)
		status := "none"
		if st, ok := m["status"]; ok {
			b, _ := json.Marshal(st)
			status = string(b)
		}
		parts = append(parts, fmt.Sprintf("%v=%s", meta["name"], status))
	}
	return strings.Join(parts, " ")
}
