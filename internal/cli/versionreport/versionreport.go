// Package versionreport is what apiserver-boot version reports: this
// build's version, its Go and platform, and the Kubernetes libraries, etcd
// and kine versions a project it scaffolds requires (the framework's
// go.mod), as text, JSON or YAML.
package versionreport

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"text/tabwriter"

	"golang.org/x/mod/semver"
	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/gomod"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// Report is what `apiserver-boot version` prints.
type Report struct {
	// Version is the release (vX.Y.Z), or "devel" for a build from source.
	Version string `json:"version"`
	Release bool   `json:"release"`
	// Build is a devel build's stamp: (devel), or Go's VCS pseudo-version.
	Build string `json:"build,omitempty"`
	// Source is the checkout a devel build's projects are pointed at.
	Source string `json:"source,omitempty"`
	Module string `json:"module"`
	// Sum is the release's module checksum, written to projects' go.sum.
	Sum      string `json:"sum,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
	// ProjectGo is the go directive of the framework's go.mod, which
	// projects get.
	ProjectGo string `json:"projectGo"`
	// Kubernetes is the minor of the k8s.io libraries pinned (1.37).
	Kubernetes string      `json:"kubernetes"`
	Pins       []gomod.Pin `json:"pins"`
}

// New is the report of the build info, whose framework go.mod is
// framework.
func New(info version.Info, framework []byte) (*Report, error) {
	pins, err := gomod.Pins(framework)
	if err != nil {
		return nil, fmt.Errorf("the framework's go.mod: %w", err)
	}
	r := &Report{
		Version: info.String(), Release: info.Version != "", Build: info.Build, Source: info.SourceDir,
		Module: version.Module, Sum: info.Sum, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH,
		ProjectGo: gomod.GoDirective(framework), Pins: pins,
	}
	// k8s.io/* v0.37.2 is Kubernetes 1.37.2.
	r.Kubernetes = "1." + strings.TrimPrefix(semver.MajorMinor(r.Pin("k8s.io/apiserver")), "v0.")
	return r, nil
}

// Write writes the report as output says: text (or ""), json or yaml.
func (r *Report) Write(w io.Writer, output string) error {
	switch output {
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "yaml":
		b, err := yaml.Marshal(r)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	case "text", "":
		return r.writeText(w)
	}
	return fmt.Errorf("--output %q: want text, json or yaml", output)
}

func (r *Report) writeText(w io.Writer) error {
	fmt.Fprintf(w, "apiserver-boot %s\n", r.Version)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if r.Release {
		fmt.Fprintf(tw, "  module\t%s %s %s\n", r.Module, r.Version, r.Sum)
	} else {
		source := r.Source
		if source == "" {
			source = "unknown (set APISERVER_BOOT_SOURCE to the checkout it was built from)"
		}
		fmt.Fprintf(tw, "  build\t%s, from source: %s\n", r.Build, source)
	}
	fmt.Fprintf(tw, "  go\t%s %s (projects: go %s)\n", r.Go, r.Platform, r.ProjectGo)
	fmt.Fprintf(tw, "  kubernetes\t%s (k8s.io/apiserver %s)\n", r.Kubernetes, r.Pin("k8s.io/apiserver"))
	fmt.Fprintln(tw, "  pins (the framework's go.mod, which a project requires):")
	for _, p := range r.Pins {
		fmt.Fprintf(tw, "    %s\t%s\n", p.Path, p.Version)
	}
	return tw.Flush()
}

// Pin is the version of a pinned module, "" when not pinned.
func (r *Report) Pin(path string) string {
	for _, p := range r.Pins {
		if p.Path == path {
			return p.Version
		}
	}
	return ""
}
