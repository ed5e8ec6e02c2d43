package version

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// TestGet: only what a module proxy can serve is a release: go install
// @version (build information with a checksum) or hack/release.sh's -X
// values; Go's VCS stamps of a checkout (pseudo-versions, +dirty, even a
// tag) and (devel) are devel builds.
func TestGet(t *testing.T) {
	checkout := t.TempDir()
	os.WriteFile(filepath.Join(checkout, "go.mod"), []byte("module "+Module+"\n"), 0o644)
	file := filepath.Join(checkout, "internal", "shared", "version", "version.go")
	main := func(v, sum string) *debug.BuildInfo {
		return &debug.BuildInfo{Main: debug.Module{Path: Module, Version: v, Sum: sum}}
	}
	for _, tc := range []struct {
		name           string
		bi             *debug.BuildInfo
		xVersion, xSum string
		file, env      string
		want           Info
	}{
		{"go install @version", main("v0.3.0", "h1:abc="), "", "", "/root/go/pkg/mod/" + Module + "@v0.3.0/internal/shared/version/version.go", "",
			Info{Version: "v0.3.0", Sum: "h1:abc="}},
		{"go install @latest before any tag (a pseudo-version the proxy serves)", main("v0.0.0-20261125231500-abcdef123456", "h1:abc="), "", "", "/root/go/pkg/mod/" + Module + "@v0.0.0-20261125231500-abcdef123456/internal/shared/version/version.go", "",
			Info{Version: "v0.0.0-20261125231500-abcdef123456", Sum: "h1:abc="}},
		{"go install @prerelease", main("v0.4.0-rc.1", "h1:abc="), "", "", "", "", Info{Version: "v0.4.0-rc.1", Sum: "h1:abc="}},
		{"make release (-X, -trimpath)", main("(devel)", ""), "v0.3.0", "h1:zip=", Module + "/internal/shared/version/version.go", "",
			Info{Version: "v0.3.0", Sum: "h1:zip="}},
		{"-X version that is no release", main("(devel)", ""), "0.3", "", file, "", Info{Build: "0.3", SourceDir: checkout}},
		{"go build in a checkout, Go >= 1.24 VCS stamp", main("v0.0.0-20261125231500-abcdef123456+dirty", ""), "", "", file, "",
			Info{Build: "v0.0.0-20261125231500-abcdef123456+dirty", SourceDir: checkout}},
		{"go build at a tag after it", main("v0.3.1-0.20261125231500-abcdef123456", ""), "", "", file, "",
			Info{Build: "v0.3.1-0.20261125231500-abcdef123456", SourceDir: checkout}},
		{"go build in a checkout at a tag (no proxy checksum)", main("v0.3.0", ""), "", "", file, "", Info{Build: "v0.3.0", SourceDir: checkout}},
		{"go build -buildvcs=false", main("(devel)", ""), "", "", file, "", Info{Build: "(devel)", SourceDir: checkout}},
		{"-trimpath devel build", main("(devel)", ""), "", "", Module + "/internal/shared/version/version.go", "", Info{Build: "(devel)"}},
		{"-trimpath devel build, APISERVER_BOOT_SOURCE", main("(devel)", ""), "", "", Module + "/internal/shared/version/version.go", "/src/abc",
			Info{Build: "(devel)", SourceDir: "/src/abc"}},
		{"no build information", nil, "", "", "", "", Info{Build: "(devel)"}},
	} {
		if got := get(tc.bi, tc.xVersion, tc.xSum, tc.file, tc.env); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestIsRelease(t *testing.T) {
	for v, want := range map[string]bool{
		"v0.3.0": true, "v1.0.0-rc.1": true, "v0.99.0-e2e.0123abcd": true,
		"v0.3": false, "0.3.0": false, "v0.3.0+dirty": false, "(devel)": false, "": false,
		"v0.0.0-20261125231500-abcdef123456": false, "v0.3.1-0.20261125231500-abcdef123456": false,
	} {
		if got := IsRelease(v); got != want {
			t.Errorf("IsRelease(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestString(t *testing.T) {
	if s := (Info{Version: "v0.3.0"}).String(); s != "v0.3.0" {
		t.Errorf("release: %q", s)
	}
	if s := (Info{Build: "(devel)", SourceDir: "/src"}).String(); s != "devel" {
		t.Errorf("devel: %q", s)
	}
}
