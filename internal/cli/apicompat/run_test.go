package apicompat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// git runs git in dir as a test author and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false", "-c", "tag.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// write writes files (path: content) under dir.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for path, content := range files {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fixtureRepo is a git repository holding the module example.com/fx:
// pkg/a (F and G) and pkg/a/internal/b (H) at the commit tagged v0.0.9 and
// v0.1.0 (and v0.2.0-rc.1, a pre-release); a branch off it tagged v0.5.0;
// then, on HEAD, F removed and H removed.
func fixtureRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	write(t, dir, map[string]string{
		"go.mod":                   "module example.com/fx\n\ngo 1.26\n",
		"pkg/a/a.go":               "// Package a is a fixture.\npackage a\n\n// F is removed later.\nfunc F() {}\n\n// G stays.\nfunc G(s string) string { return s }\n",
		"pkg/a/internal/b/b.go":    "// Package b is no promise.\npackage b\n\n// H is removed later.\nfunc H() {}\n",
		"pkg/a/internal/b/keep.go": "package b\n\n// K stays.\nfunc K() {}\n",
	})
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "v0.1.0")
	for _, tag := range []string{"v0.0.9", "v0.1.0", "v0.2.0-rc.1"} {
		git(t, dir, "tag", tag)
	}
	git(t, dir, "checkout", "-q", "-b", "side")
	write(t, dir, map[string]string{"side.txt": "not on main\n"})
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "side")
	git(t, dir, "tag", "v0.5.0")
	git(t, dir, "checkout", "-q", "main")
	write(t, dir, map[string]string{
		"pkg/a/a.go":            "// Package a is a fixture.\npackage a\n\n// G stays.\nfunc G(s string) string { return s }\n",
		"pkg/a/internal/b/b.go": "// Package b is no promise.\npackage b\n",
	})
	git(t, dir, "add", "-A")
	git(t, dir, "commit", "-q", "-m", "F and H removed")
	return dir
}

// TestLastRelease: the highest release tag reachable from HEAD, not on
// HEAD, below the version being released; pre-releases and tags of other
// branches are no releases to follow.
func TestLastRelease(t *testing.T) {
	dir := fixtureRepo(t)
	git(t, dir, "tag", "v0.1.1") // HEAD itself: the release being made
	for next, want := range map[string]string{"": "v0.1.0", "v0.1.1": "v0.1.0", "v0.2.0-rc.2": "v0.1.0", "v0.1.0": "v0.0.9", "v0.0.9": ""} {
		got, err := LastRelease(dir, next)
		if err != nil || got != want {
			t.Errorf("LastRelease(%q) = %q, %v; want %q", next, got, err, want)
		}
	}
}

// TestRun: the check as make release and CI run it on a repository: F
// removed from pkg/a since v0.1.0 refuses a patch and allows a new minor;
// H removed from an internal package is no change; without a release it
// says so.
func TestRun(t *testing.T) {
	dir := fixtureRepo(t)
	var out strings.Builder
	err := Run(dir, "example.com/fx", "v0.1.1", &out)
	if err == nil || !strings.Contains(err.Error(), "F: removed") || !strings.Contains(err.Error(), "v0.2.0 or later") {
		t.Errorf("v0.1.1 after F was removed: %v\n%s", err, out.String())
	}
	if err != nil && strings.Contains(out.String()+err.Error(), "internal/b") {
		t.Errorf("an internal package's change was reported:\n%s%v", out.String(), err)
	}
	out.Reset()
	if err := Run(dir, "example.com/fx", "v0.2.0", &out); err != nil || !strings.Contains(out.String(), "v0.2.0 may follow v0.1.0") {
		t.Errorf("v0.2.0: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := Run(dir, "example.com/fx", "", &out); err != nil || !strings.Contains(out.String(), "the next release may be v0.2.0 or later") {
		t.Errorf("CI: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := Run(dir, "example.com/fx", "v0.0.9", &out); err != nil || !strings.Contains(out.String(), "no release tag vX.Y.Z below v0.0.9") {
		t.Errorf("first release: %v\n%s", err, out.String())
	}
}
