// Package image assembles the container image of a generated project without
// a Docker daemon (github.com/google/go-containerregistry): the project's
// statically linked binaries on a minimal root filesystem (a nonroot user and
// CA certificates), one image per platform, an image index for several, and
// writes it as a `docker load` tarball or an OCI layout, or pushes it.
package image

import (
	"fmt"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Platform is an operating system and CPU architecture an image is built for.
type Platform struct {
	OS, Arch, Variant string
}

// String is the os/arch[/variant] form used by --platform, Docker and OCI.
func (p Platform) String() string {
	s := p.OS + "/" + p.Arch
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// Dir names the folder of the platform's binaries under bin/: linux_amd64, linux_arm_v7.
func (p Platform) Dir() string { return strings.ReplaceAll(p.String(), "/", "_") }

// GoEnv is the environment that makes `go build` compile for the platform:
// statically linked (no cgo), for its OS and architecture.
func (p Platform) GoEnv() []string {
	env := []string{"CGO_ENABLED=0", "GOOS=" + p.OS, "GOARCH=" + p.Arch}
	if p.Arch == "arm" {
		env = append(env, "GOARM="+strings.TrimPrefix(p.Variant, "v"))
	}
	return env
}

// OCI is the platform as an image index records it.
func (p Platform) OCI() *v1.Platform {
	return &v1.Platform{OS: p.OS, Architecture: p.Arch, Variant: p.Variant}
}

// supported are the Linux platforms Go compiles static binaries for and
// container runtimes run, keyed by every spelling accepted for them.
var supported = map[string]Platform{
	"linux/amd64":    {OS: "linux", Arch: "amd64"},
	"linux/arm64":    {OS: "linux", Arch: "arm64"},
	"linux/arm64/v8": {OS: "linux", Arch: "arm64"},
	"linux/arm":      {OS: "linux", Arch: "arm", Variant: "v7"},
	"linux/arm/v7":   {OS: "linux", Arch: "arm", Variant: "v7"},
	"linux/arm/v6":   {OS: "linux", Arch: "arm", Variant: "v6"},
	"linux/386":      {OS: "linux", Arch: "386"},
	"linux/ppc64le":  {OS: "linux", Arch: "ppc64le"},
	"linux/s390x":    {OS: "linux", Arch: "s390x"},
	"linux/riscv64":  {OS: "linux", Arch: "riscv64"},
}

// SupportedPlatforms lists the accepted --platform values.
func SupportedPlatforms() []string {
	var out []string
	for k, p := range supported {
		if k == p.String() {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ParsePlatforms reads --platform values (repeated or comma separated),
// dropping duplicates and keeping the order given.
func ParsePlatforms(values []string) ([]Platform, error) {
	var out []Platform
	seen := map[Platform]bool{}
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			p, ok := supported[strings.ToLower(s)]
			if !ok {
				return nil, fmt.Errorf("--platform %q is not supported: valid platforms are %s", s, strings.Join(SupportedPlatforms(), ", "))
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--platform is empty: give one or more of %s", strings.Join(SupportedPlatforms(), ", "))
	}
	return out, nil
}
