//go:build e2e

package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/release"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// TestRelease: a release of this checkout, written by make release's
// script into a folder served as a module proxy (GOPROXY=file://), installs
// with go install and says its version; a project it scaffolds requires
// the release, with no replace and nothing naming this checkout; copied to
// another folder, the project builds, and so does its container image,
// with only that proxy and the module cache (offline).
func TestRelease(t *testing.T) {
	tmp := t.TempDir()
	// The version names the checkout's content, so a module cache holding
	// an earlier run's release never stands in for this one.
	v := "v0.99.0-e2e." + contentHash(t)
	dist := filepath.Join(tmp, "dist")
	if _, err := runEnv(repoRoot, []string{"VERSION=" + v, "DIST=" + dist, "ALLOW_DIRTY=1", "PLATFORMS="}, "bash", "hack/release.sh"); err != nil {
		t.Fatal(err)
	}
	defer removeFromModCache(t, v)
	proxy := "file://" + filepath.ToSlash(filepath.Join(dist, "proxy"))
	usual, err := runEnv(repoRoot, nil, "go", "env", "GOPROXY")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "bin")
	// The checkout's own settings are no part of a user's environment.
	env := []string{"APISERVER_BOOT_SOURCE=", "GOWORK=off", "GONOSUMDB=" + version.Module, "GOFLAGS=-modcacherw", "GOBIN=" + bin,
		"GOPROXY=" + proxy + "," + strings.TrimSpace(usual)}
	if err := timed("release: go install", func() error {
		_, err := runEnv(tmp, env, "go", "install", version.Module+"/cmd/apiserver-boot@"+v)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	released := filepath.Join(bin, "apiserver-boot")
	out, err := runEnv(tmp, env, released, "version")
	if err != nil || !strings.HasPrefix(out, "apiserver-boot "+v+"\n") || !strings.Contains(out, "k8s.io/apiserver") {
		t.Fatalf("version of the installed release: %v\n%s", err, out)
	}

	proj := filepath.Join(tmp, "shop")
	os.MkdirAll(proj, 0o755)
	for _, args := range [][]string{
		{"go", "mod", "init", "example.com/shop"},
		{released, "init", "repo", "--domain", "example.com"},
		{released, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"},
	} {
		if err := timed("release: "+args[1]+" "+args[2], func() error { _, err := runEnv(proj, env, args[0], args[1:]...); return err }); err != nil {
			t.Fatal(err)
		}
	}
	checkReleaseProject(t, proj, v)

	// Another folder, with the proxy of the release and the module cache
	// only: what a clone on another machine resolves.
	clone := filepath.Join(tmp, "clone", "shop")
	os.MkdirAll(filepath.Dir(clone), 0o755)
	if _, err := runEnv(tmp, nil, "cp", "-a", proj, clone); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(proj)
	offline := append(env[:len(env)-1:len(env)-1], "GOPROXY="+proxy)
	if err := timed("release: go build ./... (clone)", func() error { _, err := runEnv(clone, offline, "go", "build", "./..."); return err }); err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(tmp, "shop.tar")
	if err := timed("release: build container (clone)", func() error {
		_, err := runEnv(clone, offline, released, "build", "container", "--image", "registry.example.com/shop:v0.1.0", "--output", tarPath)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(tarPath); err != nil || fi.Size() < 1<<20 {
		t.Errorf("image tarball: %v", err)
	}
}

// checkReleaseProject: go.mod requires the release and replaces nothing,
// neither go.mod nor go.sum names this checkout, and PROJECT records the
// release.
func checkReleaseProject(t *testing.T, proj, v string) {
	t.Helper()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(proj, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	mod, sum := read("go.mod"), read("go.sum")
	if !strings.Contains(mod, "\nrequire "+version.Module+" "+v+"\n") || strings.Contains(mod, "replace") {
		t.Errorf("go.mod should require %s %s and replace nothing:\n%s", version.Module, v, mod)
	}
	for name, content := range map[string]string{"go.mod": mod, "go.sum": sum} {
		if strings.Contains(content, repoRoot) {
			t.Errorf("%s names the checkout %s", name, repoRoot)
		}
	}
	if !strings.Contains(sum, version.Module+" "+v+" h1:") {
		t.Errorf("go.sum has no checksum of the release")
	}
	if p := read("PROJECT"); !strings.Contains(p, "\ncliVersion: "+v+"\n") {
		t.Errorf("PROJECT does not record cliVersion %s:\n%s", v, p)
	}
}

// contentHash is a short hash of the files a release of the checkout holds.
func contentHash(t *testing.T) string {
	files, err := release.Files(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, f := range files {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(h, f.Path()+"\x00")
		io.Copy(h, r)
		r.Close()
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// removeFromModCache removes the test's release from the module cache.
func removeFromModCache(t *testing.T, v string) {
	out, err := runEnv(repoRoot, nil, "go", "env", "GOMODCACHE")
	if err != nil {
		t.Log(err)
		return
	}
	cache := strings.TrimSpace(out)
	dirs := []string{filepath.Join(cache, filepath.FromSlash(version.Module)+"@"+v)}
	downloads, _ := filepath.Glob(filepath.Join(cache, "cache", "download", filepath.FromSlash(version.Module), "@v", v+".*"))
	for _, d := range append(dirs, downloads...) {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(d)
	}
}

// runEnv runs name in dir with env added to the test's environment.
func runEnv(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}
