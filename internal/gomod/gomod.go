// Package gomod merges the framework's module requirements into a project's
// go.mod and go.sum.
package gomod

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"

	"github.com/apiserver-boot/apiserver-boot/internal/version"
)

// Merge adds the framework (whose go.mod is framework) and every module it
// was tested with to the go.mod of the project at root (existing; nil for a
// new project named module), never lowering a version the project already
// requires. A CLI built from a source checkout adds a replace to that
// checkout.
func Merge(existing, framework []byte, module, root string, info version.Info) ([]byte, error) {
	fw, err := modfile.Parse("go.mod", framework, nil)
	if err != nil {
		return nil, err
	}
	f := &modfile.File{}
	if existing != nil {
		if f, err = modfile.Parse("go.mod", existing, nil); err != nil {
			return nil, fmt.Errorf("go.mod: %w", err)
		}
	} else if err := f.AddModuleStmt(module); err != nil {
		return nil, err
	}
	if f.Go == nil || semver.Compare("v"+f.Go.Version, "v"+fw.Go.Version) < 0 {
		if err := f.AddGoStmt(fw.Go.Version); err != nil {
			return nil, err
		}
	}
	have := map[string]string{}
	for _, r := range f.Require {
		have[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range fw.Require {
		if v, ok := have[r.Mod.Path]; !ok || semver.Compare(v, r.Mod.Version) < 0 {
			f.AddNewRequire(r.Mod.Path, r.Mod.Version, true)
		}
	}
	fwVersion := info.Version
	if fwVersion == "" {
		if info.SourceDir == "" {
			return nil, errors.New("this apiserver-boot was built without a module version or source checkout; install a released version or set APISERVER_BOOT_SOURCE to its checkout")
		}
		fwVersion = "v0.0.0-00010101000000-000000000000"
		target := info.SourceDir
		if rel, err := filepath.Rel(root, info.SourceDir); err == nil && !strings.HasPrefix(filepath.ToSlash(rel), "../../") {
			target = rel // a project inside the checkout (example/) stays relocatable
		}
		if !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, ".") {
			target = "./" + target
		}
		if err := f.AddReplace(version.Module, "", target, ""); err != nil {
			return nil, err
		}
	}
	if err := f.AddRequire(version.Module, fwVersion); err != nil {
		return nil, err
	}
	f.SetRequireSeparateIndirect(f.Require)
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}

// GoMinor is the Go release a go.mod requires (1.26 for go 1.26.0): for the
// framework's, the Dockerfile's builder image.
func GoMinor(gomod []byte) string {
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil || f.Go == nil {
		return "1"
	}
	v := f.Go.Version
	if parts := strings.SplitN(v, ".", 3); len(parts) == 3 {
		v = parts[0] + "." + parts[1]
	}
	return v
}

// MergeSum returns the sorted union of two go.sum files.
func MergeSum(a, b []byte) []byte {
	lines := map[string]bool{}
	for _, src := range [][]byte{a, b} {
		for _, l := range bytes.Split(src, []byte("\n")) {
			if s := strings.TrimSpace(string(l)); s != "" {
				lines[s] = true
			}
		}
	}
	out := make([]string, 0, len(lines))
	for l := range lines {
		out = append(out, l)
	}
	sort.Strings(out)
	return []byte(strings.Join(out, "\n") + "\n")
}

// FrameworkSkew says, when the project at root requires a released
// framework at another version than this apiserver-boot's (whose generated
// code is for its own framework), what to run; "" when they match, when
// the framework is replaced by a local folder, or for a CLI built from
// source. go.mod is the user's: generate does not edit it.
func FrameworkSkew(root string, info version.Info) string {
	if info.Version == "" {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return ""
	}
	f, err := modfile.Parse("go.mod", b, nil)
	if err != nil {
		return ""
	}
	for _, r := range f.Replace {
		if r.Old.Path == version.Module {
			return ""
		}
	}
	for _, r := range f.Require {
		if r.Mod.Path == version.Module && r.Mod.Version != info.Version {
			return fmt.Sprintf("go.mod requires %s %s, and this apiserver-boot generates code for %s: run `go get %s@%s` (then `go mod tidy`)", version.Module, r.Mod.Version, info.Version, version.Module, info.Version)
		}
	}
	return ""
}
