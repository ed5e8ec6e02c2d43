package model

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"

	crdmarkers "sigs.k8s.io/controller-tools/pkg/crd/markers"
	"sigs.k8s.io/controller-tools/pkg/markers"
)

// ResourceMarker is `+resource:path=<plural>,strategy=<Kind>Strategy,scope=Namespaced|Cluster`
// on a kind: it makes the type a served REST resource.
type ResourceMarker struct {
	// Path is the plural resource name in URLs.
	Path string `marker:"path"`
	// Strategy names the generated hooks type; default <Kind>Strategy.
	Strategy string `marker:"strategy,optional"`
	// Scope is Namespaced (default) or Cluster.
	Scope string `marker:"scope,optional"`
	// Singular is the singular name; default the lowercased kind.
	Singular string `marker:"singular,optional"`
	// ShortNames are abbreviations kubectl accepts.
	ShortNames []string `marker:"shortNames,optional"`
	// Categories are groups of resources such as "all".
	Categories []string `marker:"categories,optional"`
	// crd: the kind is marked in kubebuilder's spelling, so names left out
	// default as controller-gen defaults them.
	crd bool
}

// StatusSubresource is `+subresource:status`: serve /status.
type StatusSubresource struct{}

// ScaleSubresource is `+subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.labelSelector`:
// serve /scale as autoscaling/v1 Scale, reading and writing the replica counts at these JSON paths.
type ScaleSubresource struct {
	SpecPath     string `marker:"specpath"`
	StatusPath   string `marker:"statuspath"`
	SelectorPath string `marker:"selectorpath,optional"`
}

// RESTSubresource is `+subresource:rest:path=restart,request=CronTabRestart[,handler=Restart]`:
// serve POST <plural>/<name>/<path>, calling the handler method declared on
// the kind's strategy with the object and the request.
type RESTSubresource struct {
	Path    string `marker:"path"`
	Request string `marker:"request"`
	Handler string `marker:"handler,optional"`
}

// SubresourceRequest is `+subresource:request` on the request type of a custom subresource.
type SubresourceRequest struct{}

// StorageVersion is `+storageversion`: this version is kept in etcd.
type StorageVersion struct{}

// ManifestMarker is `+crd:manifest=<project-relative path>` on a kind: the
// CustomResourceDefinition manifest its schema, printer columns, names,
// selectable fields and subresources are read from, where it is not at
// kubebuilder's path config/crd/bases/<group>_<plural>.yaml.
const ManifestMarker = "crd:manifest"

// versionPriority is `+versionPriority=<n>` in a version's doc.go: versions
// sort by it, highest first (discovery's preferred version is the first),
// before Kubernetes version order; unmarked versions count as 0.

// Registry knows every marker apiserver-boot reads: every marker
// controller-tools defines for CRDs (crdmarkers: +kubebuilder:resource,
// +kubebuilder:validation:*, +listType, +default, ...), with controller-gen's
// meaning, and apiserver-boot's own (+resource, +subresource:*,
// +storageversion, ...).
var Registry = func() *markers.Registry {
	reg := &markers.Registry{}
	if err := crdmarkers.Register(reg); err != nil {
		panic(err)
	}
	for _, d := range []struct {
		name   string
		target markers.TargetType
		obj    any
	}{
		{"resource", markers.DescribesType, ResourceMarker{}},
		{"subresource:status", markers.DescribesType, StatusSubresource{}},
		{"subresource:scale", markers.DescribesType, ScaleSubresource{}},
		{"subresource:rest", markers.DescribesType, RESTSubresource{}},
		{"subresource:request", markers.DescribesType, SubresourceRequest{}},
		{"storageversion", markers.DescribesType, StorageVersion{}},
		{ManifestMarker, markers.DescribesType, ""},
		{"kubebuilder:object:root", markers.DescribesType, false},
		{"kubebuilder:object:generate", markers.DescribesType, false},
		{"kubebuilder:object:generate", markers.DescribesPackage, false},
		{"versionPriority", markers.DescribesPackage, 0},
		{"domain", markers.DescribesPackage, ""},
		{AcceptMarker, markers.DescribesPackage, AcceptBreakingChange("")},
	} {
		if err := reg.Define(d.name, d.target, d.obj); err != nil {
			panic(err)
		}
	}
	return reg
}()

// MarkerValue is one known marker as written: its registered name, parsed
// value, text and place.
type MarkerValue struct {
	Name    string
	Value   any
	Text    string
	Pos     token.Position
	comment *ast.Comment
}

// MarkerValues are the known markers of comment groups by registered name,
// every one kept, in the order written (controller-tools' MarkerValues,
// with where each was written): markers such as +printcolumn repeat.
type MarkerValues map[string][]MarkerValue

// Get is the value of the first marker of a name, or nil.
func (m MarkerValues) Get(name string) any {
	if vs := m[name]; len(vs) > 0 {
		return vs[0].Value
	}
	return nil
}

// Has tells whether a marker of a name was written.
func (m MarkerValues) Has(name string) bool { return len(m[name]) > 0 }

// markerValues parses the known markers in comment groups; unknown markers are
// left to the other generators that read them (deepcopy-gen, openapi-gen...).
// A known marker that does not parse is an error at its line.
func markerValues(fset *token.FileSet, target markers.TargetType, groups ...*ast.CommentGroup) (MarkerValues, error) {
	out := MarkerValues{}
	for _, g := range groups {
		if g == nil {
			continue
		}
		for _, c := range g.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if !strings.HasPrefix(text, "+") {
				continue
			}
			def := Registry.Lookup(text, target)
			if def == nil && strings.HasPrefix(text, "+"+ownMarkers) {
				return nil, fmt.Errorf("%s: marker %s: apiserver-boot has no such marker here", fset.Position(c.Pos()), text)
			}
			if def == nil {
				continue
			}
			v, err := def.Parse(text)
			if err != nil {
				return nil, fmt.Errorf("%s: marker %s: %w", fset.Position(c.Pos()), text, err)
			}
			out[def.Name] = append(out[def.Name], MarkerValue{Name: def.Name, Value: v, Text: text, Pos: fset.Position(c.Pos()), comment: c})
		}
	}
	return out, nil
}

// ownMarkers is the prefix of apiserver-boot's namespaced markers: one of
// them that the registry does not know, for the place it is written, is a
// mistake rather than another generator's marker.
const ownMarkers = "apiserver-boot:"

// FileMarkers reads the known markers of target in every // comment of a Go
// file, not only in its doc comment: a group's doc.go may carry its
// +apiserver-boot:accept-breaking-change markers after the package clause.
// path names the file in errors and positions.
func FileMarkers(path string, src []byte, target markers.TargetType) (MarkerValues, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	return markerValues(fset, target, f.Comments...)
}

// KindFile is the hand-written file of a version package declaring a type,
// and the markers on that type, parsed as generate parses them.
type KindFile struct {
	Path    string
	Src     []byte
	Markers MarkerValues // by canonical marker name: "resource", "storageversion", ...
}

// FindKind finds the file of dir (a version package) declaring type kind,
// with the markers on its doc comment read through the marker registry, so
// the CLI accepts every spelling generate does (//+storageversion,
// // +storageversion).
func FindKind(dir, kind string) (*KindFile, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		path := filepath.Join(dir, n)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return nil, err
		}
		var found *KindFile
		err = eachTypeSpec(fset, f, func(ts *ast.TypeSpec, groups []*ast.CommentGroup) error {
			if ts.Name.Name != kind {
				return nil
			}
			vals, err := markerValues(fset, markers.DescribesType, groups...)
			if err != nil {
				return err
			}
			canonical, err := canonicalValues(vals)
			if err != nil {
				return fmt.Errorf("%s: type %s: %w", fset.Position(ts.Pos()), kind, err)
			}
			found = &KindFile{Path: path, Src: src, Markers: canonical}
			return nil
		})
		if err != nil || found != nil {
			return found, err
		}
	}
	return nil, fmt.Errorf("no file in %s declares type %s", dir, kind)
}

// AcceptMarker accepts, in a group's doc.go, a breaking change generate
// found against the latest recorded release.
const AcceptMarker = "apiserver-boot:accept-breaking-change"

// AcceptBreakingChange is `+apiserver-boot:accept-breaking-change=<id>` in a
// group's doc.go: the breaking change generate reported under that id is
// made on purpose.
type AcceptBreakingChange string

// kubebuilderSpelling maps the kubebuilder spelling of a kind marker to
// apiserver-boot's: the two mean the same, and commands that look for a
// marker (create version's +storageversion, create subresource's
// +subresource:status) find either.
var kubebuilderSpelling = map[string]string{
	"kubebuilder:resource":           "resource",
	"kubebuilder:subresource:status": "subresource:status",
	"kubebuilder:subresource:scale":  "subresource:scale",
	"kubebuilder:storageversion":     "storageversion",
	"kubebuilder:printcolumn":        "printcolumn",
	"kubebuilder:selectablefield":    "selectablefield",
}

// canonicalName is a marker's name in apiserver-boot's spelling.
func canonicalName(name string) string {
	if own, ok := kubebuilderSpelling[name]; ok {
		return own
	}
	return name
}

// resourceOf tells whether a type is a served kind, and with which names:
// +resource, or, with controller-gen's meaning, +kubebuilder:resource or
// +kubebuilder:object:root=true on a type that is not a list. Markers are
// keyed by canonical name.
func resourceOf(name string, vals MarkerValues) (ResourceMarker, bool) {
	switch r := vals.Get("resource").(type) {
	case ResourceMarker:
		return r, true
	case crdmarkers.Resource:
		return ResourceMarker{Path: r.Path, Scope: r.Scope, Singular: r.Singular, ShortNames: r.ShortName, Categories: r.Categories, crd: true}, true
	}
	if root, _ := vals.Get("kubebuilder:object:root").(bool); root && !strings.HasSuffix(name, "List") {
		return ResourceMarker{crd: true}, true
	}
	return ResourceMarker{}, false
}

// canonicalValues keys parsed type markers by canonical name; a marker
// given in both spellings on one type is an error (which one would win is
// not for a map to decide).
func canonicalValues(vals MarkerValues) (MarkerValues, error) {
	out := make(MarkerValues, len(vals))
	for n, vs := range vals {
		c := canonicalName(n)
		if _, dup := out[c]; dup {
			return nil, fmt.Errorf("+%s and +kubebuilder:%s are the same marker: keep one", c, c)
		}
		out[c] = vs
	}
	return out, nil
}

// scaleOf reads either spelling of the scale subresource marker.
func scaleOf(v any) (*ScaleSubresource, bool) {
	switch s := v.(type) {
	case ScaleSubresource:
		return &s, true
	case crdmarkers.SubresourceScale:
		out := &ScaleSubresource{SpecPath: s.SpecPath, StatusPath: s.StatusPath}
		if s.SelectorPath != nil {
			out.SelectorPath = *s.SelectorPath
		}
		return out, true
	}
	return nil, false
}

// printColumnOf reads either spelling of a printer column marker;
// kubebuilder tells it was +kubebuilder:printcolumn.
func printColumnOf(v any) (c PrintColumn, kubebuilder, ok bool) {
	switch c := v.(type) {
	case PrintColumn:
		return c, false, true
	case crdmarkers.PrintColumn:
		return PrintColumn{Name: c.Name, Type: c.Type, JSONPath: c.JSONPath, Description: c.Description, Format: c.Format, Priority: c.Priority}, true, true
	}
	return PrintColumn{}, false, false
}

// selectableFieldOf reads either spelling of a selectable field marker.
func selectableFieldOf(v any) (SelectableField, bool) {
	switch f := v.(type) {
	case SelectableField:
		return f, true
	case crdmarkers.SelectableField:
		return SelectableField{JSONPath: f.JSONPath}, true
	}
	return SelectableField{}, false
}
