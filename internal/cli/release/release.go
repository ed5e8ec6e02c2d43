// Package release writes a release of the framework module as a module
// proxy serves it (GOPROXY's layout: <module>/@v/list, <version>.info,
// .mod and .zip), from a git checkout: what `make release` publishes, and
// what the end-to-end tests serve through a file:// GOPROXY.
package release

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/sumdb/dirhash"
	"golang.org/x/mod/zip"
)

// file is a file of the checkout, as golang.org/x/mod/zip reads it.
type file struct{ dir, path string }

func (f file) Path() string { return f.path }
func (f file) Lstat() (os.FileInfo, error) {
	return os.Lstat(filepath.Join(f.dir, filepath.FromSlash(f.path)))
}
func (f file) Open() (io.ReadCloser, error) {
	return os.Open(filepath.Join(f.dir, filepath.FromSlash(f.path)))
}

// Files are the files of the checkout at dir that a release holds: those
// git tracks or would track (not ignored: no bin/, .cache/ or dist/), as
// they are in the working tree. zip.Create leaves out the nested modules
// (example/, test/tools/).
func Files(dir string) ([]zip.File, error) {
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			err = fmt.Errorf("%w: %s", err, ee.Stderr)
		}
		return nil, fmt.Errorf("listing the files of %s (a git checkout of the module): %w", dir, err)
	}
	var files []zip.File
	seen := map[string]bool{}
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err != nil || !fi.Mode().IsRegular() {
			continue // deleted in the working tree, or a symlink
		}
		files = append(files, file{dir, p})
	}
	slices.SortFunc(files, func(a, b zip.File) int { return strings.Compare(a.Path(), b.Path()) })
	return files, nil
}

// Write writes the module of the checkout at dir, at version, into the
// proxy folder out, and returns the module zip's go.sum checksum (h1:).
// when is the version's time in its .info file (the tagged commit's).
func Write(dir, out, modulePath, version string, when time.Time) (string, error) {
	m := module.Version{Path: modulePath, Version: version}
	if err := module.Check(m.Path, m.Version); err != nil {
		return "", err
	}
	goMod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", err
	}
	escaped, err := module.EscapePath(m.Path)
	if err != nil {
		return "", err
	}
	vdir := filepath.Join(out, filepath.FromSlash(escaped), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return "", err
	}
	files, err := Files(dir)
	if err != nil {
		return "", err
	}
	var z bytes.Buffer
	if err := zip.Create(&z, m, files); err != nil {
		return "", fmt.Errorf("module zip: %w", err)
	}
	zipPath := filepath.Join(vdir, version+".zip")
	info, _ := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, when.UTC()})
	for name, content := range map[string][]byte{version + ".mod": goMod, version + ".info": info, version + ".zip": z.Bytes()} {
		if err := os.WriteFile(filepath.Join(vdir, name), content, 0o644); err != nil {
			return "", err
		}
	}
	if err := addToList(filepath.Join(vdir, "list"), version); err != nil {
		return "", err
	}
	return dirhash.HashZip(zipPath, dirhash.Hash1)
}

// addToList adds version to the proxy's list of versions.
func addToList(path, version string) error {
	b, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	var versions []string
	for _, v := range strings.Fields(string(b)) {
		if v != version {
			versions = append(versions, v)
		}
	}
	versions = append(versions, version)
	return os.WriteFile(path, []byte(strings.Join(versions, "\n")+"\n"), 0o644)
}
