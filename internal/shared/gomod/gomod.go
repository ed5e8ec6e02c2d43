// Package gomod merges the framework's module requirements into a project's
// go.mod and go.sum.
package gomod

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
	"golang.org/x/mod/sumdb/dirhash"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// Merge adds the framework (whose go.mod is framework) and every module it
// was tested with to the go.mod of the project at root (existing; nil for a
// new project named module), never lowering a version the project already
// requires. A released CLI requires the framework at its release, with no
// replace: the project builds wherever its go.mod resolves. A devel CLI
// (built from a source checkout) adds a replace to that checkout (see
// CheckoutNote).
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
		switch v, ok := have[r.Mod.Path]; {
		case !ok:
			f.AddNewRequire(r.Mod.Path, r.Mod.Version, true)
		case semver.Compare(v, r.Mod.Version) < 0:
			// Raised in place: a requirement of the project's own stays
			// direct.
			if err := f.AddRequire(r.Mod.Path, r.Mod.Version); err != nil {
				return nil, err
			}
		}
	}
	fwVersion := info.Version
	if fwVersion != "" {
		if v := have[version.Module]; v != "" && semver.Compare(v, fwVersion) > 0 {
			return nil, fmt.Errorf("go.mod requires %s %s, newer than this apiserver-boot (%s): use apiserver-boot %s or newer (go install %s/cmd/apiserver-boot@%s)", version.Module, v, fwVersion, v, version.Module, v)
		}
		// A release is required as it is, from the module proxy: a replace
		// of the framework (to a checkout a devel build wrote) would keep
		// the project tied to that folder.
		if err := f.DropReplace(version.Module, ""); err != nil {
			return nil, err
		}
	} else {
		target, err := checkoutReplace(root, info)
		if err != nil {
			return nil, err
		}
		fwVersion = develVersion
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

// develVersion is the framework requirement beside a replace to a checkout.
const develVersion = "v0.0.0-00010101000000-000000000000"

// checkoutReplace is the replace target of a devel CLI's checkout: relative
// for a project inside it (example/) or beside it, so that the pair moves
// together; absolute otherwise.
func checkoutReplace(root string, info version.Info) (string, error) {
	if info.SourceDir == "" {
		return "", errors.New("this apiserver-boot is a devel build without its source checkout (built with -trimpath, or moved): " +
			"set APISERVER_BOOT_SOURCE to the apiserver-boot checkout it was built from, or install a release: " +
			"go install " + version.Module + "/cmd/apiserver-boot@latest")
	}
	target := info.SourceDir
	if rel, err := filepath.Rel(root, info.SourceDir); err == nil && !strings.HasPrefix(filepath.ToSlash(rel), "../../") {
		target = rel
	}
	if !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, ".") {
		target = "./" + target
	}
	return target, nil
}

// CheckoutNote is what a devel CLI says when it ties the project at root to
// its checkout with a replace: "" for a release, and for a project inside
// the checkout (example/, which moves with it).
func CheckoutNote(root string, info version.Info) string {
	if info.Version != "" || info.SourceDir == "" {
		return ""
	}
	target, err := checkoutReplace(root, info)
	if err != nil || strings.Trim(filepath.ToSlash(target), "./") == "" {
		return ""
	}
	return fmt.Sprintf("Note: this apiserver-boot is a devel build (%s), so go.mod replaces %s with its checkout %s: "+
		"the project builds only where that folder exists (not in a clone on another machine, nor with its Dockerfile). "+
		"To depend on a release instead: go mod edit -dropreplace=%s && go get %s@<vX.Y.Z>; "+
		"or init with a released apiserver-boot (go install %s/cmd/apiserver-boot@<vX.Y.Z>).",
		info.Build, version.Module, target, version.Module, version.Module, version.Module)
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

// ReleaseSums are the go.sum lines of the framework module at the release
// info names, whose go.mod is framework: a project that requires the
// release (without a replace) needs them to load its packages. The
// go.mod's checksum is computed here; the module zip's comes from the
// build (go install records it; hack/release.sh sets it), else from
// `go mod download` through the environment's GOPROXY. nil for a devel CLI.
func ReleaseSums(ctx context.Context, info version.Info, framework []byte) ([]byte, error) {
	if info.Version == "" {
		return nil, nil
	}
	modSum, err := dirhash.Hash1([]string{"go.mod"}, func(string) (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(framework)), nil
	})
	if err != nil {
		return nil, err
	}
	sum := info.Sum
	if sum == "" {
		if sum, err = downloadSum(ctx, info.Version); err != nil {
			return nil, err
		}
	}
	return fmt.Appendf(nil, "%s %s %s\n%s %s/go.mod %s\n", version.Module, info.Version, sum, version.Module, info.Version, modSum), nil
}

// downloadSum asks the go command for the checksum of the framework's
// module zip at v, from an empty folder (no project's go.mod is touched).
func downloadSum(ctx context.Context, v string) (string, error) {
	dir, err := os.MkdirTemp("", "apiserver-boot-sum-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", version.Module+"@"+v)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var m struct{ Sum, Error string }
	if jerr := json.Unmarshal(out, &m); jerr == nil && m.Error != "" {
		err = errors.New(m.Error)
	}
	if err != nil || m.Sum == "" {
		return "", fmt.Errorf("the project requires %s %s, and its checksum for go.sum could not be found (go mod download %s@%s: %v %s): check GOPROXY, or set GOFLAGS=-mod=mod and run `go mod download` in the project",
			version.Module, v, version.Module, v, err, strings.TrimSpace(stderr.String()))
	}
	return m.Sum, nil
}

// Pin is a module the framework requires, at the version it was tested
// with.
type Pin struct {
	Path    string `json:"path"`
	Version string `json:"version"`
}

// pinned are the modules `apiserver-boot version` lists: Kubernetes' own
// libraries, etcd, kine and the code generators' tools.
var pinned = []string{"k8s.io/", "go.etcd.io/etcd/", "github.com/k3s-io/kine", "sigs.k8s.io/controller-tools", "sigs.k8s.io/structured-merge-diff/"}

// Pins are the Kubernetes libraries, etcd and kine the framework's go.mod
// requires directly, which a generated project is pinned to.
func Pins(framework []byte) ([]Pin, error) {
	f, err := modfile.ParseLax("go.mod", framework, nil)
	if err != nil {
		return nil, err
	}
	var out []Pin
	for _, r := range f.Require {
		if r.Indirect {
			continue
		}
		for _, p := range pinned {
			if strings.HasPrefix(r.Mod.Path, p) {
				out = append(out, Pin{r.Mod.Path, r.Mod.Version})
				break
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// GoDirective is the go line of a go.mod (1.26.5), "" without one.
func GoDirective(gomod []byte) string {
	f, err := modfile.ParseLax("go.mod", gomod, nil)
	if err != nil || f.Go == nil {
		return ""
	}
	return f.Go.Version
}
