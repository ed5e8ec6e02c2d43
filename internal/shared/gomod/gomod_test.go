package gomod

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

const framework = `module github.com/apiserver-boot/apiserver-boot

go 1.26.0

require (
	k8s.io/api v0.37.2
	k8s.io/apimachinery v0.37.2
)
`

func requires(t *testing.T, b []byte) map[string]string {
	t.Helper()
	f, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	out := map[string]string{}
	for _, r := range f.Require {
		out[r.Mod.Path] = r.Mod.Version
	}
	if f.Go != nil {
		out["go"] = f.Go.Version
	}
	for _, r := range f.Replace {
		out["replace "+r.Old.Path] = r.New.Path
	}
	return out
}

func TestMergeNewProject(t *testing.T) {
	out, err := Merge(nil, []byte(framework), "example.com/shop", "/src/shop", version.Info{Version: "v0.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	got := requires(t, out)
	if !strings.HasPrefix(string(out), "module example.com/shop\n") || got["go"] != "1.26.0" || got["k8s.io/api"] != "v0.37.2" || got[version.Module] != "v0.3.0" {
		t.Errorf("got %v:\n%s", got, out)
	}
	if _, ok := got["replace "+version.Module]; ok {
		t.Errorf("a released CLI adds no replace:\n%s", out)
	}
}

// TestMergeNeverLowers: a project's newer requirements and go version stay;
// older ones are raised to what the framework was tested with.
func TestMergeNeverLowers(t *testing.T) {
	existing := "module example.com/shop\n\ngo 1.27.1\n\nrequire (\n\tk8s.io/api v0.38.0\n\tk8s.io/apimachinery v0.36.0\n\texample.com/other v1.2.3\n)\n"
	out, err := Merge([]byte(existing), []byte(framework), "ignored", "/src/shop", version.Info{Version: "v0.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	got := requires(t, out)
	want := map[string]string{"go": "1.27.1", "k8s.io/api": "v0.38.0", "k8s.io/apimachinery": "v0.37.2", "example.com/other": "v1.2.3", version.Module: "v0.3.0"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: got %q, want %q\n%s", k, got[k], v, out)
		}
	}
}

// TestMergeRelease: a released CLI on a project a devel build tied to its
// checkout drops that replace; one whose project requires a newer
// framework is refused; a requirement of the project's own that is raised
// stays direct.
func TestMergeRelease(t *testing.T) {
	existing := "module example.com/shop\n\ngo 1.26.0\n\nrequire (\n\t" + version.Module + " v0.0.0-00010101000000-000000000000\n\tk8s.io/apimachinery v0.36.0\n)\n\nreplace " + version.Module + " => /src/apiserver-boot\n"
	out, err := Merge([]byte(existing), []byte(framework), "ignored", "/src/shop", version.Info{Version: "v0.3.0"})
	if err != nil {
		t.Fatal(err)
	}
	got := requires(t, out)
	if _, ok := got["replace "+version.Module]; ok || got[version.Module] != "v0.3.0" {
		t.Errorf("want the release required with no replace:\n%s", out)
	}
	f, err := modfile.Parse("go.mod", out, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == "k8s.io/apimachinery" && (r.Indirect || r.Mod.Version != "v0.37.2") {
			t.Errorf("the project's own k8s.io/apimachinery: %s indirect %v, want v0.37.2 direct\n%s", r.Mod.Version, r.Indirect, out)
		}
	}
	newer := "module example.com/shop\n\ngo 1.26.0\n\nrequire " + version.Module + " v0.5.0\n"
	if _, err := Merge([]byte(newer), []byte(framework), "ignored", "/src/shop", version.Info{Version: "v0.3.0"}); err == nil || !strings.Contains(err.Error(), "requires "+version.Module+" v0.5.0, newer than this apiserver-boot (v0.3.0)") {
		t.Errorf("a project on a newer framework: %v, want a refusal naming both versions", err)
	}
}

// TestMergeSourceCheckout: a CLI built from a checkout points the project at
// it, relative when the project is inside (example/), absolute otherwise.
func TestMergeSourceCheckout(t *testing.T) {
	for _, tc := range []struct{ root, want string }{
		{"/src/apiserver-boot/example", ".."},
		{"/home/me/shop", "/src/apiserver-boot"},
	} {
		out, err := Merge(nil, []byte(framework), "example.com/shop", tc.root, version.Info{SourceDir: "/src/apiserver-boot"})
		if err != nil {
			t.Fatal(err)
		}
		if got := requires(t, out)["replace "+version.Module]; got != tc.want {
			t.Errorf("root %s: replace to %q, want %q\n%s", tc.root, got, tc.want, out)
		}
	}
	if _, err := Merge(nil, []byte(framework), "example.com/shop", "/x", version.Info{}); err == nil || !strings.Contains(err.Error(), "APISERVER_BOOT_SOURCE") {
		t.Errorf("a CLI with neither version nor checkout: want an error saying what to do, got %v", err)
	}
	if _, err := Merge([]byte("module\n"), []byte(framework), "example.com/shop", "/x", version.Info{Version: "v1.0.0"}); err == nil || !strings.HasPrefix(err.Error(), "go.mod:") {
		t.Errorf("an unparsable go.mod: want an error naming it, got %v", err)
	}
}

func TestGoMinor(t *testing.T) {
	for in, want := range map[string]string{"module m\n\ngo 1.26.0\n": "1.26", "module m\n\ngo 1.25\n": "1.25", "module m\n": "1"} {
		if got := GoMinor([]byte(in)); got != want {
			t.Errorf("%q: got %s, want %s", in, got, want)
		}
	}
}

func TestMergeSum(t *testing.T) {
	a := "b v1 h1:x=\na v1 h1:y=\n"
	b := "a v1 h1:y=\n\nc v1 h1:z=\n"
	if got, want := string(MergeSum([]byte(a), []byte(b))), "a v1 h1:y=\nb v1 h1:x=\nc v1 h1:z=\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestFrameworkSkew: a released apiserver-boot names the go get to run when
// the project requires another framework version; a replace or a CLI built
// from source is left alone.
func TestFrameworkSkew(t *testing.T) {
	root := t.TempDir()
	write := func(s string) { os.WriteFile(filepath.Join(root, "go.mod"), []byte(s), 0o644) }
	write("module example.com/shop\n\ngo 1.26.0\n\nrequire " + version.Module + " v0.3.0\n")
	if w := FrameworkSkew(root, version.Info{Version: "v0.4.0"}); !strings.Contains(w, "go get "+version.Module+"@v0.4.0") {
		t.Errorf("skew: %q", w)
	}
	for _, tc := range []struct {
		mod  string
		info version.Info
	}{
		{"module example.com/shop\n\nrequire " + version.Module + " v0.4.0\n", version.Info{Version: "v0.4.0"}},
		{"module example.com/shop\n\nrequire " + version.Module + " v0.3.0\n\nreplace " + version.Module + " => ../apiserver-boot\n", version.Info{Version: "v0.4.0"}},
		{"module example.com/shop\n\nrequire " + version.Module + " v0.3.0\n", version.Info{SourceDir: "/src"}},
	} {
		write(tc.mod)
		if w := FrameworkSkew(root, tc.info); w != "" {
			t.Errorf("%q with %+v: want no warning, got %q", tc.mod, tc.info, w)
		}
	}
}

// TestCheckoutNote: a devel CLI says when it ties a project outside its
// checkout to it, and how to move to a release; a release, and example/
// inside the checkout, say nothing.
func TestCheckoutNote(t *testing.T) {
	devel := version.Info{Build: "(devel)", SourceDir: "/src/apiserver-boot"}
	for root, want := range map[string]bool{"/src/apiserver-boot/example": false, "/src/shop": true, "/home/me/shop": true} {
		note := CheckoutNote(root, devel)
		if (note != "") != want {
			t.Errorf("root %s: note %q, want one: %v", root, note, want)
		}
		if want && !strings.Contains(note, "go mod edit -dropreplace="+version.Module) || want && !strings.Contains(note, "/cmd/apiserver-boot@") {
			t.Errorf("root %s: the note should say how to depend on a release: %q", root, note)
		}
	}
	if note := CheckoutNote("/home/me/shop", version.Info{Version: "v0.3.0", SourceDir: "/src/apiserver-boot"}); note != "" {
		t.Errorf("a release: %q", note)
	}
	out, err := Merge(nil, []byte(framework), "example.com/shop", "/home/me/shop", version.Info{Version: "v0.3.0", SourceDir: "/src/apiserver-boot"})
	if err != nil || strings.Contains(string(out), "replace") {
		t.Errorf("a release writes no replace, even knowing a checkout: %v\n%s", err, out)
	}
}

// TestReleaseSums: the go.sum lines of a release; the go.mod checksum is
// computed as the go command does (checked against a go.sum line of this
// repository and the module cache's copy of that go.mod).
func TestReleaseSums(t *testing.T) {
	if b, err := ReleaseSums(t.Context(), version.Info{Build: "(devel)"}, []byte(framework)); b != nil || err != nil {
		t.Errorf("devel: %q %v", b, err)
	}
	b, err := ReleaseSums(t.Context(), version.Info{Version: "v0.3.0", Sum: "h1:zip="}, []byte(framework))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || lines[0] != version.Module+" v0.3.0 h1:zip=" || !strings.HasPrefix(lines[1], version.Module+" v0.3.0/go.mod h1:") {
		t.Fatalf("got %q", b)
	}

	const cobra = "github.com/spf13/cobra v1.10.2/go.mod "
	sum, _ := os.ReadFile("../../../go.sum")
	var want string
	for _, l := range strings.Split(string(sum), "\n") {
		if strings.HasPrefix(l, cobra) {
			want = strings.TrimPrefix(l, cobra)
		}
	}
	modcache, _ := exec.Command("go", "env", "GOMODCACHE").Output()
	mod, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(modcache)), "cache", "download", "github.com", "spf13", "cobra", "@v", "v1.10.2.mod"))
	if want == "" || err != nil {
		t.Skipf("no cobra v1.10.2 go.mod to check against: %v", err)
	}
	b, err = ReleaseSums(t.Context(), version.Info{Version: "v1.10.2", Sum: "h1:x="}, mod)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(strings.Split(string(b), "\n")[1])[2]; got != want {
		t.Errorf("go.mod checksum %s, the go command's %s", got, want)
	}
}

// TestPins: the Kubernetes libraries, etcd and kine the framework's go.mod
// requires, read from it.
func TestPins(t *testing.T) {
	b, err := os.ReadFile("../../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	pins, err := Pins(b)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range pins {
		got[p.Path] = p.Version
	}
	f, _ := modfile.Parse("go.mod", b, nil)
	for _, r := range f.Require {
		switch r.Mod.Path {
		case "k8s.io/apiserver", "k8s.io/client-go", "k8s.io/apimachinery", "k8s.io/code-generator", "go.etcd.io/etcd/server/v3", "github.com/k3s-io/kine":
			if got[r.Mod.Path] != r.Mod.Version {
				t.Errorf("%s: got %q, want %s", r.Mod.Path, got[r.Mod.Path], r.Mod.Version)
			}
		case "github.com/spf13/cobra", "golang.org/x/mod":
			if _, ok := got[r.Mod.Path]; ok {
				t.Errorf("%s is no Kubernetes library", r.Mod.Path)
			}
		}
	}
	if GoDirective(b) != f.Go.Version {
		t.Errorf("GoDirective %q", GoDirective(b))
	}
}
