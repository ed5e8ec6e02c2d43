package release

import (
	"archive/zip"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@example.com", "-c", "user.name=t"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestWrite: a release holds the checkout's files as they are (tracked,
// and untracked but not ignored), not ignored ones nor nested modules; the
// go command downloads it from the folder as from a module proxy, with the
// checksum Write returned.
func TestWrite(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	const mod = "example.com/fw"
	for name, content := range map[string]string{
		"go.mod": "module " + mod + "\n\ngo 1.22\n", "fw.go": "package fw\n", ".gitignore": "/bin/\n",
		"bin/tool": "binary", "example/go.mod": "module example.com/x\n", "example/x.go": "package x\n", "new.go": "package fw\n\nconst New = 1\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644)
	}
	git(t, dir, "init", "-q")
	git(t, dir, "add", "go.mod", "fw.go", ".gitignore", "example")
	git(t, dir, "commit", "-qm", "x")
	os.WriteFile(filepath.Join(dir, "fw.go"), []byte("package fw\n\n// edited\n"), 0o644)

	out := t.TempDir()
	sum, err := Write(dir, out, mod, "v0.1.0", time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	vdir := filepath.Join(out, "example.com", "fw", "@v")
	z, err := zip.OpenReader(filepath.Join(vdir, "v0.1.0.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	var names []string
	for _, f := range z.File {
		names = append(names, strings.TrimPrefix(f.Name, mod+"@v0.1.0/"))
	}
	slices.Sort(names)
	if want := []string{".gitignore", "fw.go", "go.mod", "new.go"}; !slices.Equal(names, want) {
		t.Errorf("zip holds %v, want %v", names, want)
	}
	if b, _ := os.ReadFile(filepath.Join(vdir, "list")); string(b) != "v0.1.0\n" {
		t.Errorf("list %q", b)
	}

	// The go command reads it as a proxy's.
	gomod := t.TempDir()
	cmd := exec.Command("go", "mod", "download", "-json", mod+"@v0.1.0")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "GOPROXY=file://"+filepath.ToSlash(out), "GONOSUMDB="+mod, "GOFLAGS=-modcacherw", "GOMODCACHE="+gomod)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download: %v\n%s", err, b)
	}
	var got struct{ Sum string }
	json.Unmarshal(b, &got)
	if got.Sum != sum {
		t.Errorf("the go command's checksum %q, Write's %q", got.Sum, sum)
	}
	if _, err := Write(dir, out, mod, "v0.1", time.Now()); err == nil {
		t.Error("a version that is not semver should be refused")
	}
}
