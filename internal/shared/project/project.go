// Package project reads and writes the PROJECT file, the record of a
// generated project that every apiserver-boot command reads, and holds the
// naming rules for domains, groups, versions and kinds.
package project

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"
)

// FileName is the name of the project record at the project root.
const FileName = "PROJECT"

// Project is the content of the PROJECT file.
type Project struct {
	Version string `json:"version"`
	Domain  string `json:"domain"`
	Module  string `json:"module"`
	// CLIVersion is the release of apiserver-boot that last wrote the
	// project (init or upgrade); empty for a CLI built from source.
	CLIVersion string `json:"cliVersion,omitempty"`
	// Groups are the groups not served as <group>.<domain>: by the folder
	// under pkg/apis (the Go package), their API group name (the domain
	// itself, or a group outside it, such as widgets.sh).
	Groups    map[string]string `json:"groups,omitempty"`
	Resources []*Resource       `json:"resources,omitempty"`
}

// Scope is where objects of a resource live.
type Scope string

const (
	Namespaced Scope = "Namespaced"
	Cluster    Scope = "Cluster"
)

// KindDescriptor is what a kind is, as every layer names it: the scaffold,
// PROJECT (Resource), the model read from the markers (model.Kind), the
// controller wiring (model.Controller) and the deploy configuration
// (deploy.Kind) embed it, rather than each copying its fields.
type KindDescriptor struct {
	// Group is the group's package name under pkg/apis (stable), or
	// k8s.io/api's for a built-in kind (apps, core); Project.FullGroup
	// names the API group.
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
	// Plural names the resource in URLs.
	Plural     string   `json:"plural,omitempty"`
	Singular   string   `json:"singular,omitempty"`
	ShortNames []string `json:"shortNames,omitempty"`
	Categories []string `json:"categories,omitempty"`
	Scope      Scope    `json:"scope,omitempty"`
}

// Namespaced tells whether objects of the kind live in namespaces (any
// scope but Cluster: a built-in kind PROJECT records without one is).
func (d KindDescriptor) Namespaced() bool { return d.Scope != Cluster }

// Resource is one kind served in one version, as PROJECT records it.
type Resource struct {
	// The names and scope are the markers' for a kind of the project
	// (filled in from them when the project is loaded, not written to
	// PROJECT); PROJECT keeps them for built-in kinds only.
	KindDescriptor
	Subresources []string `json:"subresources,omitempty"`
	// Scale holds the /scale paths when "scale" is among the subresources.
	Scale      *ScalePaths `json:"scale,omitempty"`
	Controller bool        `json:"controller"`
	// External marks a built-in Kubernetes kind (k8s.io/api) that only has a controller here.
	External bool `json:"external,omitempty"`
	// Package is the Go package of an external kind's types, e.g. k8s.io/api/apps/v1.
	Package string `json:"package,omitempty"`
}

// ScalePaths are the JSON paths /scale reads and writes.
type ScalePaths struct {
	SpecReplicasPath   string `json:"specReplicasPath"`
	StatusReplicasPath string `json:"statusReplicasPath"`
	LabelSelectorPath  string `json:"labelSelectorPath,omitempty"`
}

// DefaultScalePaths are the paths of the scaffolded types.
var DefaultScalePaths = ScalePaths{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas", LabelSelectorPath: ".status.labelSelector"}

// HasSubresource tells whether the resource serves the named subresource.
func (r *Resource) HasSubresource(name string) bool {
	for _, s := range r.Subresources {
		if s == name {
			return true
		}
	}
	return false
}

// Load reads the PROJECT file in dir.
func Load(dir string) (*Project, error) {
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("no %s file in %s: run `apiserver-boot init repo --domain <domain>` first", FileName, dir)
	}
	if err != nil {
		return nil, err
	}
	p := &Project{}
	if err := yaml.UnmarshalStrict(b, p); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileName), err)
	}
	for _, pkg := range slices.Sorted(maps.Keys(p.Groups)) {
		full := p.Groups[pkg]
		if err := ValidateAPIGroup("groups."+pkg, full); err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, FileName), err)
		}
	}
	return p, nil
}

// Marshal renders the PROJECT file, resources in a stable order.
func (p *Project) Marshal() ([]byte, error) {
	sort.SliceStable(p.Resources, func(i, j int) bool {
		a, b := p.Resources[i], p.Resources[j]
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		return a.Version < b.Version
	})
	// The names, scope and subresources of the project's own kinds are their
	// markers' (the types are their only record): PROJECT keeps which kinds
	// and controllers there are. Built-in kinds keep theirs: no marker says them.
	out := *p
	out.Resources = nil
	for _, r := range p.Resources {
		w := *r
		if !w.External {
			w.KindDescriptor = KindDescriptor{Group: w.Group, Version: w.Version, Kind: w.Kind}
			w.Subresources, w.Scale = nil, nil
		}
		out.Resources = append(out.Resources, &w)
	}
	b, err := yaml.Marshal(&out)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	buf.WriteString("# Written by apiserver-boot: which kinds and controllers the project has. Their names, scope\n")
	buf.WriteString("# and subresources are the +resource and +subresource markers on the types.\n")
	buf.Write(b)
	return buf.Bytes(), nil
}

// FullGroup is the API group name of the group whose package is
// pkg/apis/<group>: <group>.<domain>, or the name PROJECT records for it.
func (p *Project) FullGroup(group string) string {
	if full, ok := p.Groups[group]; ok {
		return full
	}
	return group + "." + p.Domain
}

// ResolveGroup reads a --group flag naming a group of the project: its
// package name (stable), or the full name of a group PROJECT records
// (widgets.sh), or that name without the domain (cert-manager for
// cert-manager.<domain>). It returns the package name.
func (p *Project) ResolveGroup(group string) (string, error) {
	if dir, ok := p.recordedGroup(group); ok {
		return dir, nil
	}
	return group, CheckGroupWithoutDomain(group, p.Domain)
}

// Suggest names the project's kinds closest to a --group, --version and
// --kind that match none: the kind in another case, or by its plural or
// singular name, preferring those of the group and version given. version
// "" leaves --version out of the suggestion. It returns "" when no kind is
// close, else "; did you mean ...?".
func (p *Project) Suggest(group, version, kind string) string {
	group = strings.TrimSuffix(group, "."+p.Domain)
	var close []*Resource
	for _, r := range p.Resources {
		if !r.External && (strings.EqualFold(r.Kind, kind) || strings.EqualFold(r.Plural, kind) || strings.EqualFold(r.Singular, kind)) {
			close = append(close, r)
		}
	}
	prefer := func(same func(r *Resource) bool) {
		var better []*Resource
		for _, r := range close {
			if same(r) {
				better = append(better, r)
			}
		}
		if len(better) > 0 {
			close = better
		}
	}
	prefer(func(r *Resource) bool { return strings.EqualFold(r.Group, group) })
	prefer(func(r *Resource) bool { return strings.EqualFold(r.Version, version) })
	var out []string
	for _, r := range close {
		s := "--group " + r.Group + " --version " + r.Version + " --kind " + r.Kind
		if version == "" {
			s = "--group " + r.Group + " --kind " + r.Kind
		}
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return ""
	}
	return "; did you mean " + strings.Join(out, " or ") + "?"
}

// ControllerOf returns the resource other than r that has the controller
// of r's kind, or nil: controllers live in pkg/controller/<kind>, one per
// kind name.
func (p *Project) ControllerOf(r *Resource) *Resource {
	for _, other := range p.Resources {
		if other != r && other.Controller && other.Kind == r.Kind {
			return other
		}
	}
	return nil
}

// Find returns the resource with the given group, version and kind, or nil.
func (p *Project) Find(group, version, kind string) *Resource {
	for _, r := range p.Resources {
		if r.Group == group && r.Version == version && r.Kind == kind {
			return r
		}
	}
	return nil
}
