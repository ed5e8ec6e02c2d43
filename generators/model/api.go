// Package model is the API a project declares, read from source: groups,
// versions and kinds from pkg/apis, with their markers (resource names,
// scope, subresources, storage version, field validation) parsed by one
// controller-tools registry. The CLI and every generator read it; it reads
// no generated code and type-checks nothing.
package model

import (
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/gobuffalo/flect"
	"k8s.io/client-go/util/jsonpath"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// API is the project's API as declared by the versioned types under
// pkg/apis/<group>/<version>: read from source, before anything is type-checked.
type API struct {
	Root      string // project directory
	Module    string
	Domain    string
	Framework string // import path of the apiserver-boot module
	Header    string // license header of generated files
	Groups    []*Group
	// Controllers are the controllers recorded in PROJECT.
	Controllers []*Controller
	// Warnings are things a run could not do, for the CLI to print.
	Warnings []string
}

// Group is one API group: pkg/apis/<group>.
type Group struct {
	Name     string // Go package name and first label, e.g. "stable"
	FullName string // e.g. "stable.example.com"
	Package  string // import path of the internal package
	Dir      string
	Versions []*Version // most preferred first: +versionPriority, then Kubernetes version order
	Kinds    []*Kind    // every kind of the group, once
	Requests []string   // request types of custom subresources, in the storage versions
	// StorageVersion is the most preferred version some kind is stored in;
	// each Kind has its own.
	StorageVersion string
}

// Version is one version of a group: pkg/apis/<group>/<version>.
type Version struct {
	Name    string
	Alias   string // import alias, e.g. "stablev1"
	Package string
	Dir     string
	Kinds   []*Kind
	// Requests are the request types of custom subresources (+subresource:request).
	Requests []string
	// Priority is the +versionPriority of the version's package (0 if unmarked).
	Priority int
	Fset     *token.FileSet
	Files    []*ast.File // hand-written files (no zz_generated)
	// Warnings are markers read and ignored, for the run's warnings.
	Warnings []string
	// Declared are the package-level identifiers of the hand-written files,
	// where each is declared: generated code must not declare them again.
	Declared map[string]token.Position
	Types    map[string]*TypeDecl
	// ModelPackage is the +k8s:openapi-model-package of the version, if any.
	ModelPackage string
	// otherTags are the comment tags of other generators on its types and
	// fields, for one warning per kind of tag across the API.
	otherTags []otherTag
	// patchWarnings are the patch strategy comment tags that disagree with
	// their struct tags.
	patchWarnings []posWarning
}

// Kind is a served resource.
type Kind struct {
	// KindDescriptor holds the kind's group (its package name), version,
	// names and scope, as its markers say; a group's kind (Group.Kinds),
	// served in Versions, has no Version.
	project.KindDescriptor
	Strategy          string
	StatusSubresource bool
	Scale             *ScaleSubresource
	Versions          []string // serving versions, most preferred first
	StorageVersion    string
	StorageAlias      string // import alias of the storage version package
	PrintColumns      []PrintColumn
	// ExactColumns: the columns are all of them (+kubebuilder:printcolumn,
	// a CRD's additionalPrinterColumns): no AGE is added.
	ExactColumns     bool
	SelectableFields []string
	Subresources     []RESTSubresource
	// Manifest is the path a +crd:manifest marker on the kind's type names
	// (relative to the project), at ManifestPos; empty without the marker.
	Manifest      string
	ManifestPos   token.Position
	storageMarked bool
}

// LoadAPI reads the API of the project at root.
func LoadAPI(root string, p *project.Project, framework, header string) (*API, error) {
	api := &API{Root: root, Module: p.Module, Domain: p.Domain, Framework: framework, Header: header}
	groupDirs, err := os.ReadDir(filepath.Join(root, project.APIs()))
	if err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	for _, gd := range groupDirs {
		if !gd.IsDir() {
			continue
		}
		if err := api.loadGroup(p, gd.Name()); err != nil {
			return nil, err
		}
	}
	var tags []otherTag
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			tags = append(tags, v.otherTags...)
			api.Warnings = append(api.Warnings, relWarnings(api.Root, v.patchWarnings)...)
		}
	}
	api.Warnings = append(api.Warnings, api.otherTagWarnings(tags)...)
	for _, r := range p.Resources {
		if !r.Controller {
			continue
		}
		c, err := api.controller(p, r)
		if err != nil {
			return nil, err
		}
		if c != nil {
			api.Controllers = append(api.Controllers, c)
		}
	}
	return api, nil
}

// loadGroup reads the group whose package is pkg/apis/<name>, its versions
// in the order discovery prefers them; a folder without versions is not a
// group.
func (api *API) loadGroup(p *project.Project, name string) error {
	g := &Group{
		Name:     name,
		FullName: p.FullGroup(name),
		Package:  project.APIsImport(p.Module, name),
		Dir:      filepath.Join(api.Root, project.APIs(name)),
	}
	versionDirs, err := os.ReadDir(g.Dir)
	if err != nil {
		return err
	}
	for _, vd := range versionDirs {
		if !vd.IsDir() || project.ValidateVersion(vd.Name()) != nil {
			continue
		}
		v := &Version{
			Name:    vd.Name(),
			Alias:   g.Name + vd.Name(),
			Package: path.Join(g.Package, vd.Name()),
			Dir:     filepath.Join(g.Dir, vd.Name()),
		}
		if err := v.load(); err != nil {
			return err
		}
		for _, k := range v.Kinds {
			k.Group, k.Version = g.Name, v.Name
		}
		api.Warnings = append(api.Warnings, v.Warnings...)
		g.Versions = append(g.Versions, v)
	}
	if len(g.Versions) == 0 {
		return nil
	}
	sort.Slice(g.Versions, func(i, j int) bool {
		if a, b := g.Versions[i].Priority, g.Versions[j].Priority; a != b {
			return a > b
		}
		return project.MorePreferred(g.Versions[i].Name, g.Versions[j].Name)
	})
	if err := g.mergeKinds(); err != nil {
		return err
	}
	api.Groups = append(api.Groups, g)
	api.Warnings = append(api.Warnings, g.unusedHooks(api.Root)...)
	api.Warnings = append(api.Warnings, g.unservedSubresources(api.Root)...)
	return nil
}

// controller is the controller PROJECT records for r: of a built-in kind,
// or of a kind of the project, named and scoped by its markers (nil, with a
// warning, when no such kind is declared any more).
func (api *API) controller(p *project.Project, r *project.Resource) (*Controller, error) {
	pkg := project.ControllerPackage(r.Kind)
	c := &Controller{
		KindDescriptor: r.KindDescriptor, PackageName: pkg,
		GroupGo: project.GoName(r.Group), VersionGo: project.GoName(r.Version),
		FullGroup:      p.FullGroup(r.Group),
		Package:        path.Join(p.Module, project.ControllerDir, pkg),
		VersionPackage: project.APIsImport(p.Module, r.Group, r.Version),
		VersionAlias:   r.Version,
	}
	if r.External {
		fullGroup, _, ok := project.BuiltinKind(r.Group, r.Version, r.Kind)
		if !ok {
			return nil, fmt.Errorf("PROJECT: %s/%s %s is not a built-in Kubernetes kind", r.Group, r.Version, r.Kind)
		}
		c.External, c.FullGroup, c.VersionPackage, c.VersionAlias = true, fullGroup, r.Package, project.ImportAlias(r.Package)
		c.PluralGo = project.ClientPlural(r.Kind, r.Plural)
		return c, nil
	}
	k := api.Kind(r.Group, r.Version, r.Kind)
	if k == nil {
		api.Warnings = append(api.Warnings, fmt.Sprintf("PROJECT lists a controller for %s/%s %s, but no type %s with a +resource marker is declared in pkg/apis/%s/%s: it is not wired; restore the type, or remove the controller (pkg/controller/%s and its PROJECT entry)",
			r.Group, r.Version, r.Kind, r.Kind, r.Group, r.Version, pkg))
		return nil, nil
	}
	c.KindDescriptor, c.PluralGo = k.KindDescriptor, project.ClientPlural(k.Kind, k.Plural)
	c.GroupGo = project.GroupGoName(c.FullGroup)
	return c, nil
}

// Kind is the kind of group (its package name) served in version, as its
// markers declare it, or nil.
func (api *API) Kind(group, version, kind string) *Kind {
	for _, g := range api.Groups {
		if g.Name != group {
			continue
		}
		if v := g.Version(version); v != nil {
			for _, k := range v.Kinds {
				if k.Kind == kind {
					return k
				}
			}
		}
	}
	return nil
}

// load parses the hand-written files of a version and finds its kinds.
func (v *Version) load() error {
	v.Fset = token.NewFileSet()
	v.Types = map[string]*TypeDecl{}
	all := map[string]*TypeDecl{}
	if err := v.parseFiles(); err != nil {
		return err
	}
	v.Declared = map[string]token.Position{}
	for _, f := range v.Files {
		for name, pos := range declared(f) {
			v.Declared[name] = v.Fset.Position(pos)
		}
	}
	for _, f := range v.Files {
		if err := v.packageMarkers(f); err != nil {
			return err
		}
		if err := v.collectTypes(f, strings.HasSuffix(v.Fset.Position(f.Pos()).Filename, "_types.go"), all); err != nil {
			return err
		}
		v.otherTags = append(v.otherTags, valueTags(v.Fset, f)...)
		if err := eachTypeSpec(v.Fset, f, v.typeMarkers); err != nil {
			return err
		}
	}
	sort.Slice(v.Kinds, func(i, j int) bool { return v.Kinds[i].Kind < v.Kinds[j].Kind })
	sort.Strings(v.Requests)
	v.reachTypes(all)
	v.Warnings = append(v.Warnings, v.defaultWarnings()...)
	for _, k := range v.Kinds {
		for _, sub := range k.Subresources {
			if !slices.Contains(v.Requests, sub.Request) {
				return fmt.Errorf("%s: subresource %s of %s: request type %s has no +subresource:request marker in %s", v.Dir, sub.Path, k.Kind, sub.Request, v.Name)
			}
		}
	}
	return nil
}

// parseFiles parses the hand-written Go files of the version's package.
// Every file of the package counts, whatever its name; a file the build
// leaves out (_x.go, a //go:build constraint) is not of the package, and a
// kind declared there could not be served.
func (v *Version) parseFiles() error {
	entries, err := os.ReadDir(v.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") || strings.HasPrefix(n, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(v.Fset, filepath.Join(v.Dir, n), nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if match, err := build.Default.MatchFile(v.Dir, n); err != nil {
			return err
		} else if !match {
			if pos, kind := kindMarkerIn(v.Fset, f); kind != "" {
				return fmt.Errorf("%s: type %s is marked as a kind, but the Go build leaves %s out of package %s (its name or a //go:build constraint), so it cannot be served: declare it in a file of the package", pos, kind, n, v.Name)
			}
			continue
		}
		v.Files = append(v.Files, f)
	}
	return nil
}

// packageMarkers reads the version's package markers in a file's doc.
func (v *Version) packageMarkers(f *ast.File) error {
	for _, l := range commentLines(v.Fset, f.Doc) {
		if strings.HasPrefix(l.text, "+k8s:openapi-model-package=") {
			v.ModelPackage = strings.TrimPrefix(l.text, "+k8s:openapi-model-package=")
		}
	}
	vals, err := markerValues(v.Fset, markers.DescribesPackage, f.Doc)
	if err != nil {
		return err
	}
	if p, ok := vals.Get("versionPriority").(int); ok {
		v.Priority = p
	}
	return nil
}

// typeMarkers reads the markers of a type: a subresource request, or a
// kind with its names, columns, subresources and storage marker.
func (v *Version) typeMarkers(ts *ast.TypeSpec, groups []*ast.CommentGroup) error {
	vals, err := markerValues(v.Fset, markers.DescribesType, groups...)
	if err != nil {
		return err
	}
	if vals, err = canonicalValues(vals); err != nil {
		return fmt.Errorf("%s: type %s: %w", v.Fset.Position(ts.Pos()), ts.Name.Name, err)
	}
	if vals.Has("subresource:request") {
		v.Requests = append(v.Requests, ts.Name.Name)
	}
	rm, ok := resourceOf(ts.Name.Name, vals)
	if !ok || (rm.crd && !isObject(ts)) {
		// As controller-gen finds kinds: a root type that embeds
		// TypeMeta and ObjectMeta.
		return nil
	}
	k, err := newKind(ts.Name.Name, rm, v.Fset.Position(ts.Pos()))
	if err != nil {
		return err
	}
	if err := k.readMarkers(vals); err != nil {
		return err
	}
	if scale, ok := scaleOf(vals.Get("subresource:scale")); ok {
		if err := scale.validate(); err != nil {
			return fmt.Errorf("%s: +subresource:scale on %s: %w", v.Fset.Position(ts.Pos()), ts.Name.Name, err)
		}
		k.Scale = scale
	}
	v.Kinds = append(v.Kinds, k)
	return nil
}

// readMarkers sets what a kind's markers say beyond its names.
func (k *Kind) readMarkers(vals MarkerValues) error {
	k.StatusSubresource = vals.Has("subresource:status")
	k.storageMarked = vals.Has("storageversion")
	if mv := vals[ManifestMarker]; len(mv) > 0 {
		k.Manifest, k.ManifestPos = strings.TrimSpace(mv[0].Value.(string)), mv[0].Pos
		if k.Manifest == "" {
			return fmt.Errorf("%s: %s: want +%s=<path of the CRD manifest, relative to the project>", mv[0].Pos, mv[0].Text, ManifestMarker)
		}
	}
	for _, mv := range vals["printcolumn"] {
		pc, kubebuilder, _ := printColumnOf(mv.Value)
		// As in a CRD, +kubebuilder:printcolumn columns are all the
		// columns; +printcolumn ones come before AGE.
		k.ExactColumns = k.ExactColumns || kubebuilder
		if err := pc.validate(); err != nil {
			return fmt.Errorf("%s: %s: %w", mv.Pos, mv.Text, err)
		}
		k.PrintColumns = append(k.PrintColumns, pc)
	}
	for _, mv := range vals["subresource:rest"] {
		sub := mv.Value.(RESTSubresource)
		if sub.Handler == "" {
			sub.Handler = project.GoName(sub.Path)
		}
		k.Subresources = append(k.Subresources, sub)
	}
	for _, mv := range vals["selectablefield"] {
		sf, _ := selectableFieldOf(mv.Value)
		if err := project.ValidateFieldPath(sf.JSONPath); err != nil {
			return fmt.Errorf("%s: %s: %w", mv.Pos, mv.Text, err)
		}
		k.SelectableFields = append(k.SelectableFields, sf.JSONPath)
	}
	return nil
}

// kindMarkerIn finds a type of f marked as a kind (+resource,
// +kubebuilder:object:root=true on a type embedding ObjectMeta), for the
// error that names it.
func kindMarkerIn(fset *token.FileSet, f *ast.File) (token.Position, string) {
	var pos token.Position
	var kind string
	eachTypeSpec(fset, f, func(ts *ast.TypeSpec, groups []*ast.CommentGroup) error {
		vals, err := markerValues(fset, markers.DescribesType, groups...)
		if err != nil || kind != "" {
			return nil // a marker that does not parse is reported where the file is read
		}
		if canonical, err := canonicalValues(vals); err == nil {
			if rm, ok := resourceOf(ts.Name.Name, canonical); ok && (!rm.crd || isObject(ts)) {
				pos, kind = fset.Position(ts.Pos()), ts.Name.Name
			}
		}
		return nil
	})
	return pos, kind
}

func newKind(name string, rm ResourceMarker, pos token.Position) (*Kind, error) {
	k := &Kind{KindDescriptor: project.KindDescriptor{
		Kind: name, Plural: rm.Path, Singular: rm.Singular,
		ShortNames: rm.ShortNames, Categories: rm.Categories, Scope: project.Namespaced,
	}, Strategy: rm.Strategy}
	if k.Plural == "" && rm.crd {
		k.Plural = strings.ToLower(flect.Pluralize(name)) // as controller-gen names a CRD
	}
	if k.Singular == "" {
		k.Singular = project.Singular(name)
	}
	if k.Strategy == "" {
		k.Strategy = name + "Strategy"
	}
	switch project.Scope(rm.Scope) {
	case "", project.Namespaced:
	case project.Cluster:
		k.Scope = project.Cluster
	default:
		return nil, fmt.Errorf("%s: +resource scope=%q on %s: want Namespaced or Cluster", pos, rm.Scope, name)
	}
	return k, nil
}

func (s ScaleSubresource) validate() error {
	for name, p := range map[string]string{"specpath": s.SpecPath, "statuspath": s.StatusPath, "selectorpath": s.SelectorPath} {
		if p != "" {
			if err := project.ValidateFieldPath(p); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return nil
}

func (c PrintColumn) validate() error {
	switch c.Type {
	case "integer", "number", "string", "boolean", "date":
	default:
		return fmt.Errorf("type=%q: want integer, number, string, boolean or date", c.Type)
	}
	if err := jsonpath.New(c.Name).Parse("{" + c.JSONPath + "}"); err != nil {
		return fmt.Errorf("JSONPath=%s: %w", c.JSONPath, err)
	}
	return nil
}

// HasScale tells whether any kind of the API serves /scale.
func (api *API) HasScale() bool {
	for _, g := range api.Groups {
		for _, k := range g.Kinds {
			if k.Scale != nil {
				return true
			}
		}
	}
	return false
}

// mergeKinds collects the group's kinds across versions and picks each kind's
// storage version: the one marked +storageversion, or the only one.
func (g *Group) mergeKinds() error {
	byName := map[string]*Kind{}
	for _, v := range g.Versions {
		for _, k := range v.Kinds {
			merged, ok := byName[k.Kind]
			if !ok {
				merged = &Kind{}
				*merged = *k
				merged.Version, merged.Versions, merged.storageMarked = "", nil, false
				byName[k.Kind] = merged
				g.Kinds = append(g.Kinds, merged)
			}
			merged.Versions = append(merged.Versions, v.Name)
			if k.Manifest != "" {
				if merged.Manifest != "" && filepath.Clean(merged.Manifest) != filepath.Clean(k.Manifest) {
					return fmt.Errorf("%s: +%s=%s on %s, and %s names %s: a kind has one CRD manifest, name it once (or the same path)", k.ManifestPos, ManifestMarker, k.Manifest, k.Kind, merged.ManifestPos, merged.Manifest)
				}
				merged.Manifest, merged.ManifestPos = k.Manifest, k.ManifestPos
			}
			if k.storageMarked {
				if merged.StorageVersion != "" {
					return fmt.Errorf("kind %s of group %s has +storageversion in both %s and %s: mark exactly one", k.Kind, g.FullName, merged.StorageVersion, v.Name)
				}
				merged.StorageVersion = v.Name
			}
		}
	}
	sort.Slice(g.Kinds, func(i, j int) bool { return g.Kinds[i].Kind < g.Kinds[j].Kind })
	for _, k := range g.Kinds {
		if k.StorageVersion == "" {
			if len(k.Versions) > 1 {
				return fmt.Errorf("kind %s of group %s is served in %s: mark exactly one version's type with +storageversion", k.Kind, g.FullName, strings.Join(k.Versions, ", "))
			}
			k.StorageVersion = k.Versions[0]
		}
		k.StorageAlias = g.Name + k.StorageVersion
		// Columns, selectable fields and scale paths are JSONPaths the server
		// evaluates on the internal object, which has the storage version's
		// field names: take them from there.
		for _, sk := range g.Version(k.StorageVersion).Kinds {
			if sk.Kind == k.Kind {
				k.PrintColumns, k.SelectableFields, k.Scale, k.Subresources = sk.PrintColumns, sk.SelectableFields, sk.Scale, sk.Subresources
			}
		}
	}
	// Kinds may be stored in different versions; the group's storage version
	// is the most preferred of them, and its requests are all of theirs.
	for _, v := range g.StorageVersions() {
		if g.StorageVersion == "" {
			g.StorageVersion = v.Name
		}
		g.Requests = append(g.Requests, v.Requests...)
	}
	return nil
}

// unusedHooks finds methods declared on <Kind>Strategy outside the kind's
// storage version: the server only uses the storage version's strategy (its
// hooks work on the internal type), so after +storageversion moves, hooks
// left behind would silently stop running.
func (g *Group) unusedHooks(root string) []string {
	var out []string
	for _, k := range g.Kinds {
		stored := g.Version(k.StorageVersion).Methods(k.Strategy)
		for _, v := range g.Versions {
			if v.Name == k.StorageVersion {
				continue
			}
			methods := v.Methods(k.Strategy)
			for _, name := range slices.Sorted(maps.Keys(methods)) {
				pos := methods[name]
				rel, _ := filepath.Rel(root, pos.Filename)
				fix := fmt.Sprintf("move it to pkg/apis/%s/%s", g.Name, k.StorageVersion)
				if _, ok := stored[name]; ok {
					// A copy, such as the handler of a custom subresource
					// an earlier release scaffolded in every version.
					fix = fmt.Sprintf("pkg/apis/%s/%s declares it too, and that one serves every version: delete this one", g.Name, k.StorageVersion)
				}
				out = append(out, fmt.Sprintf("%s:%d: %s.%s is not used: the REST hooks of %s run from its storage version %s; %s",
					rel, pos.Line, k.Strategy, name, k.Kind, k.StorageVersion, fix))
			}
		}
	}
	return out
}

// unservedSubresources finds +subresource:rest markers on a kind's type in a
// version other than its storage version that the storage version lacks:
// the custom subresources of a kind are those marked on its storage version
// (served in every version), so these are not served.
func (g *Group) unservedSubresources(root string) []string {
	var out []string
	for _, k := range g.Kinds {
		for _, v := range g.Versions {
			if v.Name == k.StorageVersion {
				continue
			}
			for _, vk := range v.Kinds {
				if vk.Kind != k.Kind {
					continue
				}
				for _, sub := range vk.Subresources {
					if _, ok := k.Subresource(sub.Path); ok {
						continue
					}
					rel, _ := filepath.Rel(root, v.Dir)
					out = append(out, fmt.Sprintf("%s: +subresource:rest:path=%s on %s is not served: a kind's custom subresources are those marked on its storage version %s, and served in every version; run `apiserver-boot create subresource --subresource %s --group %s --version %s --kind %s` to add it there",
						rel, sub.Path, k.Kind, k.StorageVersion, sub.Path, g.Name, k.StorageVersion, k.Kind))
				}
			}
		}
	}
	return out
}

// Subresource returns the kind's custom subresource served at path.
func (k *Kind) Subresource(path string) (RESTSubresource, bool) {
	for _, s := range k.Subresources {
		if s.Path == path {
			return s, true
		}
	}
	return RESTSubresource{}, false
}

// Methods returns the methods the version's hand-written files declare on
// typ (or *typ), with where each is declared.
func (v *Version) Methods(typ string) map[string]token.Position {
	out := map[string]token.Position{}
	if v == nil {
		return out
	}
	for _, f := range v.Files {
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			recv := fd.Recv.List[0].Type
			if star, ok := recv.(*ast.StarExpr); ok {
				recv = star.X
			}
			if id, ok := recv.(*ast.Ident); ok && id.Name == typ {
				out[fd.Name.Name] = v.Fset.Position(fd.Pos())
			}
		}
	}
	return out
}

// Group returns the group named name (its package name), or nil.
func (api *API) Group(name string) *Group {
	for _, g := range api.Groups {
		if g.Name == name {
			return g
		}
	}
	return nil
}

// Kind returns the kind named name, as served by every version of the group
// (its storage version's markers), or nil.
func (g *Group) Kind(name string) *Kind {
	for _, k := range g.Kinds {
		if k.Kind == name {
			return k
		}
	}
	return nil
}

// Version returns the version named name.
func (g *Group) Version(name string) *Version {
	for _, v := range g.Versions {
		if v.Name == name {
			return v
		}
	}
	return nil
}

// Controller is a controller recorded in PROJECT, with what its generated wiring needs.
type Controller struct {
	// KindDescriptor is the reconciled kind's: its markers' for a kind of
	// the project, PROJECT's for a built-in one.
	project.KindDescriptor
	PackageName    string // pkg/controller/<PackageName>
	Package        string
	VersionPackage string
	// GroupGo, VersionGo and PluralGo are the informer factory's accessor names.
	GroupGo, VersionGo, PluralGo string
	// External kinds (k8s.io/api) come from client-go's informers, by resource.
	External  bool
	FullGroup string
	// VersionAlias imports VersionPackage (v1, or appsv1 for an external kind).
	VersionAlias string
}

// StorageVersions lists the versions some kind of the group is stored in,
// most preferred first.
func (g *Group) StorageVersions() []*Version {
	var out []*Version
	for _, v := range g.Versions {
		for _, k := range g.Kinds {
			if k.StorageVersion == v.Name {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// Describe fills in the names, scope and subresources of p's kinds from
// their markers, so that every command sees what generate serves: a marker
// edited by hand is the record.
func (api *API) Describe(p *project.Project) {
	for _, r := range p.Resources {
		if r.External {
			continue
		}
		k := api.Kind(r.Group, r.Version, r.Kind)
		if k == nil {
			continue // its types are gone; generate says what to do
		}
		r.KindDescriptor, r.Subresources, r.Scale = k.KindDescriptor, nil, nil
		if k.StatusSubresource {
			r.Subresources = append(r.Subresources, "status")
		}
		if k.Scale != nil {
			r.Subresources = append(r.Subresources, "scale")
			r.Scale = &project.ScalePaths{SpecReplicasPath: k.Scale.SpecPath, StatusReplicasPath: k.Scale.StatusPath, LabelSelectorPath: k.Scale.SelectorPath}
		}
		for _, sub := range k.Subresources {
			r.Subresources = append(r.Subresources, sub.Path)
		}
	}
}

// declared returns the package-level identifiers a file declares (methods
// and init functions are not package-level names).
func declared(f *ast.File) map[string]token.Pos {
	out := map[string]token.Pos{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "init" {
				out[d.Name.Name] = d.Name.Pos()
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					out[s.Name.Name] = s.Name.Pos()
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							out[n.Name] = n.Pos()
						}
					}
				}
			}
		}
	}
	return out
}

// isObject tells whether a type is a struct embedding TypeMeta and
// ObjectMeta, as a kind's type does.
func isObject(ts *ast.TypeSpec) bool {
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return false
	}
	has := map[string]bool{}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			has[EmbeddedName(f.Type)] = true
		}
	}
	return has["TypeMeta"] && has["ObjectMeta"]
}

// Validate checks a printer column as +printcolumn's is checked: its type
// and JSONPath (a CRD manifest's additionalPrinterColumns).
func (c PrintColumn) Validate() error { return c.validate() }

// Validate checks the JSON paths of a scale subresource (a CRD manifest's).
func (s ScaleSubresource) Validate() error { return s.validate() }

// Validate checks a selectable field's JSON path (a CRD manifest's).
func (f SelectableField) Validate() error { return project.ValidateFieldPath(f.JSONPath) }
