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

// TestReloadServesAsFreshRunLocal: what run local --watch serves after a
// reload (a field added to the types, a defaulting hook added beside them)
// is what a fresh run local of the same project serves after a clean
// generate and build (bin/ and the generate cache removed): the same
// requests get the same answers. The reload's dev build (linked without
// DWARF), the apiserver's quick stop and the generate cache must change
// nothing the server serves, validates, defaults or publishes.
func TestReloadServesAsFreshRunLocal(t *testing.T) {
	dir := widgetProject(t, "reloaded")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	port := fmt.Sprint(harness.FreePort(t))
	p := harness.Start(t, dir, cli, "run", "local", "--watch", "--controller-manager=false", "--secure-port", port)
	p.WaitFor(t, "Watching pkg/apis", 10*time.Minute)

	// The edit: a field, and a hook that defaults it.
	v1 := filepath.Join(dir, "pkg", "apis", "toys", "v1")
	defaults := "package v1\n\n// DefaultingFunction colours a widget blue unless it has a colour.\n" +
		"func (WidgetSchemeFns) DefaultingFunction(o interface{}) {\n\tobj := o.(*Widget)\n\tif obj.Spec.Color == \"\" {\n\t\tobj.Spec.Color = \"blue\"\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(v1, "widget_defaults.go"), []byte(defaults), 0o644); err != nil {
		t.Fatal(err)
	}
	types := filepath.Join(v1, "widget_types.go")
	src, err := os.ReadFile(types)
	if err != nil {
		t.Fatal(err)
	}
	const replicas = "\tReplicas int32 `json:\"replicas,omitempty\"`\n}\n"
	if !strings.Contains(string(src), replicas) {
		t.Fatalf("scaffolded types changed: %q not found", replicas)
	}
	edited := strings.Replace(string(src), replicas, "\tReplicas int32 `json:\"replicas,omitempty\"`\n\t// Color is the widget's colour.\n\t// +optional\n\tColor string `json:\"color,omitempty\"`\n}\n", 1)
	if err := os.WriteFile(types, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	p.WaitFor(t, "Reloaded in", 10*time.Minute)
	if strings.Contains(p.Out.String(), "Reload failed") {
		t.Fatalf("the reload failed:\n%s", p.Out.String())
	}
	reloaded := servedAnswers(t, kubeconfig, "edit-loop-reloaded")
	p.Stop(t)

	// A fresh run local after a clean generate and build.
	for _, gone := range []string{"bin", filepath.Join(".apiserver-boot", "generate-cache.json")} {
		if err := os.RemoveAll(filepath.Join(dir, gone)); err != nil {
			t.Fatal(err)
		}
	}
	fresh := harness.Start(t, dir, cli, "run", "local", "--controller-manager=false", "--secure-port", port)
	fresh.WaitFor(t, "\nReady.", 10*time.Minute)
	again := servedAnswers(t, kubeconfig, "edit-loop-fresh")
	fresh.Stop(t)

	for i := range reloaded {
		if reloaded[i].answer != again[i].answer {
			t.Errorf("%s: after the reload\n%s\nfrom a fresh run local\n%s", reloaded[i].request, reloaded[i].answer, again[i].answer)
		}
	}
	// The answers are those of the edit (the test compares something).
	for _, want := range []struct{ request, holds string }{
		{"explain widgets.spec.color", "the widget's colour"},
		{"a widget created without a colour, its spec", `"color":"blue"`},
		{"a widget with a colour, its spec", `"color":"red"`},
		{"a widget with replicas -1", "must be greater than or equal to 0"},
		{"the OpenAPI v3 of toys.example.com/v1", `"color"`},
	} {
		found := false
		for _, a := range reloaded {
			if a.request == want.request {
				found = true
				if !strings.Contains(a.answer, want.holds) {
					t.Errorf("%s after the reload: want %q in\n%s", want.request, want.holds, a.answer)
				}
			}
		}
		if !found {
			t.Errorf("no request %q", want.request)
		}
	}
}

type servedAnswer struct{ request, answer string }

// servedAnswers asks the apiserver of kubeconfig the same requests each
// time, writing in namespace ns (made here), with ns replaced by NS in the
// answers.
func servedAnswers(t *testing.T, kubeconfig, ns string) []servedAnswer {
	t.Helper()
	k := func(stdin string, args ...string) string {
		r := kubectlWith(kubeconfig, stdin, args...)
		out := r.stdout + r.stderr
		if r.err != nil {
			out += "\nexit: " + r.err.Error()
		}
		return strings.ReplaceAll(out, ns, "NS")
	}
	widget := func(name, spec string) string {
		return "apiVersion: toys.example.com/v1\nkind: Widget\nmetadata:\n  name: " + name + "\n  namespace: " + ns + "\nspec:\n" + spec
	}
	var out []servedAnswer
	ask := func(request, answer string) { out = append(out, servedAnswer{request, answer}) }
	ask("create namespace", k("", "create", "namespace", ns))
	ask("explain widgets.spec.color", k("", "explain", "widgets.spec.color"))
	ask("explain widgets.spec", k("", "explain", "widgets.spec"))
	ask("the OpenAPI v3 of toys.example.com/v1", k("", "get", "--raw", "/openapi/v3/apis/toys.example.com/v1"))
	ask("create a widget without a colour", k(widget("plain", "  replicas: 2\n"), "create", "-f", "-"))
	ask("a widget created without a colour, its spec", k("", "get", "widget", "plain", "-n", ns, "-o", "jsonpath={.spec}"))
	ask("create a widget with a colour", k(widget("red", "  replicas: 1\n  color: red\n"), "create", "-f", "-"))
	ask("a widget with a colour, its spec", k("", "get", "widget", "red", "-n", ns, "-o", "jsonpath={.spec}"))
	ask("a widget with replicas -1", k(widget("bad", "  replicas: -1\n"), "create", "-f", "-"))
	ask("a widget with an unknown field", k(widget("odd", "  size: 3\n"), "create", "-f", "-"))
	ask("server-side apply of a widget", k(widget("applied", "  replicas: 3\n"), "apply", "--server-side", "-f", "-"))
	ask("the applied widget, its spec", k("", "get", "widget", "applied", "-n", ns, "-o", "jsonpath={.spec}"))
	ask("the widgets of the namespace", k("", "get", "widgets", "-n", ns, "-o", "name"))
	return out
}
