// Package version tells which apiserver-boot this is, and therefore which
// framework module version a generated project should depend on.
//
// An apiserver-boot is a release when a module proxy can serve its module
// at its version: installed with `go install <module>/cmd/apiserver-boot@vX.Y.Z`
// (the build information then carries the version and the module's
// checksum; also @latest or @<commit>, whose pseudo-version the proxy
// serves too), or built by `make release VERSION=vX.Y.Z` (hack/release.sh
// sets the version and checksum with -ldflags -X). Anything else is a devel
// build: `go build` in a checkout, even one Go stamps with a pseudo-version
// (v0.0.0-20261125...-abcdef123456+dirty) or a tag it finds there, which
// no proxy need hold.
package version

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"

	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"
)

// Module is the framework's module path.
const Module = "github.com/apiserver-boot/apiserver-boot"

// release and releaseSum are set by hack/release.sh:
//
//	-ldflags "-X github.com/apiserver-boot/apiserver-boot/internal/shared/version.release=vX.Y.Z
//	          -X github.com/apiserver-boot/apiserver-boot/internal/shared/version.releaseSum=h1:..."
var release, releaseSum string

// Info describes the running CLI.
type Info struct {
	// Version is the release this CLI is (vX.Y.Z, served by a module
	// proxy), or "" for a devel build.
	Version string
	// Sum is the go.sum checksum (h1:...) of the release's module zip, when
	// known.
	Sum string
	// Build is what a devel build's information says of it: a VCS stamp
	// (v0.0.0-...-abcdef123456+dirty), "(devel)", or a -X version that is
	// not a release; "" for a release.
	Build string
	// SourceDir is the checkout the CLI was built from, when known.
	SourceDir string
}

// Get reads the build information of the running binary.
func Get() Info {
	bi, _ := debug.ReadBuildInfo()
	_, file, _, _ := runtime.Caller(0)
	return get(bi, release, releaseSum, file, os.Getenv("APISERVER_BOOT_SOURCE"))
}

// get is Get for a build information (nil when there is none), -X values,
// the path of this file as compiled and $APISERVER_BOOT_SOURCE.
func get(bi *debug.BuildInfo, xVersion, xSum, file, sourceEnv string) Info {
	var info Info
	var main debug.Module
	if bi != nil && bi.Main.Path == Module {
		main = bi.Main
	}
	switch {
	case xVersion != "" && IsRelease(xVersion):
		info.Version, info.Sum = xVersion, xSum
	case xVersion != "":
		info.Build = xVersion
	case main.Sum != "" && servable(main.Version):
		// Downloaded from a module proxy: go install <module>@version. A
		// pseudo-version (go install <module>@latest before any tag, or
		// @<commit>) is served by the proxy as well: projects require it,
		// with no replace into the module cache.
		info.Version, info.Sum = main.Version, main.Sum
	default:
		info.Build = main.Version
		if info.Build == "" {
			info.Build = "(devel)"
		}
	}
	if sourceEnv != "" {
		info.SourceDir = sourceEnv
	} else if info.Version == "" && file != "" && filepath.IsAbs(file) {
		// internal/shared/version/version.go -> the checkout root; a relative path
		// with -trimpath.
		dir := filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(file))))
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			info.SourceDir = dir
		}
	}
	return info
}

// IsRelease tells whether v is a version a module proxy serves as a
// release of this module: valid semver (vX.Y.Z or vX.Y.Z-pre), without
// build metadata such as +dirty, and not a pseudo-version.
func IsRelease(v string) bool {
	return semver.IsValid(v) && semver.Canonical(v) == v && !module.IsPseudoVersion(v)
}

// servable tells whether a module proxy serves v: canonical semver,
// pseudo-versions included, without build metadata such as +dirty.
func servable(v string) bool {
	return semver.IsValid(v) && semver.Canonical(v) == v
}

// String is the version `apiserver-boot version` prints on its first line:
// the release, or "devel".
func (i Info) String() string {
	if i.Version != "" {
		return i.Version
	}
	return "devel"
}
