// Package version tells which apiserver-boot this is, and therefore which
// framework module version a generated project should depend on.
package version

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
)

// Module is the framework's module path.
const Module = "github.com/apiserver-boot/apiserver-boot"

// Info describes the running CLI.
type Info struct {
	// Version is the module version, or "" when built from a source checkout.
	Version string
	// SourceDir is the checkout the CLI was built from, when known.
	SourceDir string
}

// Get reads the build information of the running binary.
func Get() Info {
	var info Info
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path == Module && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		info.Version = bi.Main.Version
	}
	if dir := os.Getenv("APISERVER_BOOT_SOURCE"); dir != "" {
		info.SourceDir = dir
	} else if _, file, _, ok := runtime.Caller(0); ok {
		// internal/version/version.go -> the checkout root; absent with -trimpath.
		dir := filepath.Dir(filepath.Dir(filepath.Dir(file)))
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			info.SourceDir = dir
		}
	}
	return info
}

// String is what `apiserver-boot version` prints.
func (i Info) String() string {
	if i.Version != "" {
		return i.Version
	}
	return "devel (source: " + i.SourceDir + ")"
}
