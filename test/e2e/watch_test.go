//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// TestRunLocalWatch: `run local --watch` in a project of its own. A field
// added to the types file is served after the reload (an object written
// with it keeps it, where before the reload the unknown field was refused
// or pruned),
// objects created before the reload are still there (the embedded etcd's
// data is kept), and the kubeconfig is the same. A syntax error is printed
// and the running apiserver keeps serving; fixing it reloads again.
func TestRunLocalWatch(t *testing.T) {
	dir := widgetProject(t, "watched")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	k := func(stdin string, args ...string) result { return kubectlWith(kubeconfig, stdin, args...) }
	mustK := func(stdin string, args ...string) string {
		t.Helper()
		r := k(stdin, args...)
		if r.err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
		}
		return r.stdout
	}
	widget := func(name string) string {
		return "apiVersion: toys.example.com/v1\nkind: Widget\nmetadata:\n  name: " + name + "\nspec:\n  replicas: 2\n  color: red\n"
	}

	p := harness.Start(t, dir, cli, "run", "local", "--watch", "--controller-manager=false", "--secure-port", fmt.Sprint(harness.FreePort(t)))
	p.WaitFor(t, "Watching pkg/apis", 10*time.Minute)

	// Before the field exists, it is refused (kubectl asks for strict
	// field validation), or pruned when validation is off.
	if r := k(widget("before"), "create", "-f", "-"); r.err == nil || !strings.Contains(r.stderr, `unknown field "spec.color"`) {
		t.Fatalf("before the edit: want spec.color refused as unknown, got %v %s", r.err, r.stderr)
	}
	mustK(widget("before"), "create", "--validate=false", "-f", "-")
	if got := mustK("", "get", "widget", "before", "-o", "jsonpath={.spec.replicas} [{.spec.color}]"); got != "2 []" {
		t.Fatalf("before the edit: replicas and color = %q, want %q", got, "2 []")
	}
	kubeconfigBefore, err := os.ReadFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}

	types := filepath.Join(dir, "pkg", "apis", "toys", "v1", "widget_types.go")
	src, err := os.ReadFile(types)
	if err != nil {
		t.Fatal(err)
	}
	const replicas = "\tReplicas int32 `json:\"replicas,omitempty\"`\n}\n"
	if !strings.Contains(string(src), replicas) {
		t.Fatalf("scaffolded types changed: %q not found", replicas)
	}
	edited := strings.Replace(string(src), replicas, "\tReplicas int32 `json:\"replicas,omitempty\"`\n\t// Color is the widget's colour.\n\t// +optional\n\tColor string `json:\"color,omitempty\"`\n}\n", 1)
	// As an editor saves: a burst of writes.
	for _, s := range []string{string(src) + "\n", edited} {
		if err := os.WriteFile(types, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.WaitFor(t, "Reloaded in", 10*time.Minute)
	for _, line := range strings.Split(p.Out.String(), "\n") {
		if strings.HasPrefix(line, "Reloaded in") || strings.HasPrefix(line, "Changed:") {
			t.Log(line)
		}
	}
	// The burst gave one reload, and the reload's own writes (generated
	// code) none: nothing more comes after a debounce and a margin.
	settle := func() {
		time.Sleep(3 * time.Second)
	}
	count := func(what string) int { return strings.Count(p.Out.String(), what) }
	settle()
	if c, r := count("Changed:"), count("Reloaded in"); c != 1 || r != 1 {
		t.Fatalf("one burst of writes: %d changes seen and %d reloads, want 1 and 1:\n%s", c, r, p.Out.String())
	}

	// The new field is served, in OpenAPI and in objects.
	if out := mustK("", "explain", "widgets.spec.color"); !strings.Contains(out, "the widget's colour") {
		t.Errorf("explain after the reload:\n%s", out)
	}
	mustK(widget("after"), "create", "-f", "-")
	if got := mustK("", "get", "widget", "after", "-o", "jsonpath={.spec.replicas} [{.spec.color}]"); got != "2 [red]" {
		t.Errorf("after the reload: replicas and color = %q, want %q", got, "2 [red]")
	}
	// The object of before the reload is still there: etcd's data was kept.
	if got := mustK("", "get", "widget", "before", "-o", "jsonpath={.spec.replicas}"); got != "2" {
		t.Errorf("the object created before the reload: replicas = %q, want 2", got)
	}
	if after, _ := os.ReadFile(kubeconfig); string(after) != string(kubeconfigBefore) {
		t.Errorf("the kubeconfig changed across the reload")
	}

	// A syntax error: printed, and the running apiserver keeps serving.
	hooks := filepath.Join(dir, "pkg", "apis", "toys", "v1", "widget_hooks.go")
	good, err := os.ReadFile(hooks)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(hooks, append(append([]byte{}, good...), "\nfunc broken(\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, "Reload failed", 10*time.Minute)
	// What follows the "Changed: …widget_hooks.go" line: the compiler's
	// error at file:line, and that the running apiserver keeps serving.
	out := p.Out.String()
	failure := out[strings.LastIndex(out, "Changed:"):]
	failure = failure[strings.Index(failure, "\n"):]
	if !strings.Contains(failure, "widget_hooks.go:") || !strings.Contains(failure, "keeps serving the previous build") {
		t.Errorf("the failure does not name the file and line or say the apiserver keeps serving:\n%s", failure)
	}
	if got := mustK("", "get", "widgets", "-o", "name"); got != "widget.toys.example.com/after\nwidget.toys.example.com/before\n" {
		t.Errorf("after a failed reload: %q", got)
	}
	if out := mustK("", "explain", "widgets.spec.color"); !strings.Contains(out, "the widget's colour") {
		t.Errorf("explain after a failed reload:\n%s", out)
	}

	// A build that compiles but does not start: the build of before serves
	// again, and bin/ keeps it.
	if err := os.WriteFile(hooks, append(append([]byte{}, good...), "\nfunc init() { panic(\"does not start\") }\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, "The previous build serves again", 10*time.Minute)
	if got := mustK("", "get", "widget", "after", "-o", "jsonpath={.spec.color}"); got != "red" {
		t.Errorf("after a build that did not start: color = %q", got)
	}
	if r := count("Reloaded in"); r != 1 {
		t.Errorf("%d reloads after a build that did not start, want still 1", r)
	}

	// Fixed, it reloads again, once.
	if err := os.WriteFile(hooks, good, 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Minute)
	for count("Reloaded in") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no second reload after the fix:\n%s", p.Out.String())
		}
		select {
		case <-p.Done():
			t.Fatalf("run local --watch exited: %v\n%s", p.Err(), p.Out.String())
		case <-time.After(200 * time.Millisecond):
		}
	}
	settle()
	if r := count("Reloaded in"); r != 2 {
		t.Errorf("%d reloads after the fix, want 2 in all:\n%s", r, p.Out.String())
	}
	if got := mustK("", "get", "widget", "after", "-o", "jsonpath={.spec.color}"); got != "red" {
		t.Errorf("after the second reload: color = %q", got)
	}

	// Ctrl-C stops everything.
	p.Stop(t)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && strings.HasPrefix(exe, filepath.Join(dir, "bin")+"/") {
			t.Errorf("left running after Ctrl-C: %s %s", e.Name(), exe)
		}
	}
}

// widgetProject is a new project in a folder name of its own (module
// example.com/NAME): init repo, then kind Widget of toys/v1.
func widgetProject(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	for _, step := range [][]string{
		{"go", "mod", "init", "example.com/" + name},
		{cli, "init", "repo", "--domain", "example.com"},
		{cli, "create", "group", "version", "resource", "--group", "toys", "--version", "v1", "--kind", "Widget"},
	} {
		if out, err := harness.Sh(dir, step[0], step[1:]...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	return dir
}
