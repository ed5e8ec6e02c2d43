package generators

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/printer"
	"go/token"
	"maps"
	"os"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// internalTypes writes pkg/apis/<group>/zz_generated.types.go: the internal
// (unversioned) types, copied from the storage versions' *_types.go files
// and, from any other file, the types the kinds reach (a kind in widget.go).
// Users write only versioned types; the internal form is the hub every
// version converts through, so each kind mirrors the version it is kept in
// etcd in. Kinds of one group may be stored in different versions (as
// sample-apiserver's wardle does); see internalSources.
type internalTypes struct{}

func (internalTypes) Name() string { return "internal-types" }

func (internalTypes) Generate(api *State) ([]files.File, error) {
	var out []files.File
	for _, g := range api.Groups {
		src, err := internalTypesSource(g, api.Header)
		if err != nil {
			return nil, err
		}
		out = append(out, files.File{Path: path.Join(g.Dir, "zz_generated.types.go"), Content: src})
	}
	return out, nil
}

// markers that describe the versioned type only and must not be copied.
var versionOnlyMarkers = []string{"+resource", "+subresource", "+storageversion", "+k8s:openapi-gen", "+genclient"}

func stripVersionMarkers(text string) string {
	var keep []string
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "//"))
		drop := false
		for _, m := range versionOnlyMarkers {
			if strings.HasPrefix(t, m) {
				drop = true
			}
		}
		if !drop {
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

// typeSpecs calls fn for every type of the version's API: those declared in
// its *_types.go files, and those its kinds reach declared in any other
// (model.Version.Types). The helpers of other files stay versioned-only.
func typeSpecs(v *model.Version, fn func(ts *ast.TypeSpec)) {
	for _, f := range v.Files {
		typesFile := strings.HasSuffix(v.Fset.Position(f.Pos()).Filename, "_types.go")
		for _, d := range f.Decls {
			if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
				for _, s := range gd.Specs {
					if ts := s.(*ast.TypeSpec); typesFile || v.Types[ts.Name.Name] != nil {
						fn(ts)
					}
				}
			}
		}
	}
}

// typeRefs calls add with every identifier a type expression names in its
// own package (not field names, not other packages' types).
func typeRefs(e ast.Expr, add func(string)) {
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			return false
		case *ast.Field:
			typeRefs(n.Type, add)
			return false
		case *ast.Ident:
			add(n.Name)
		}
		return true
	})
}

// internalSources picks the storage version each internal type is copied
// from. A type reached from the kinds (and their lists and subresource
// requests) stored in a version comes from that version; a type reached from
// kinds stored in two versions must be declared alike in both, since the
// internal package holds one shape. A type no stored kind reaches (a helper
// of hand-written code) comes from the most preferred storage version that
// declares it. With one storage version this is every type it declares.
func internalSources(g *model.Group) (map[string]*model.Version, error) {
	stored := g.StorageVersions()
	sources := map[string]*model.Version{}
	shape := map[string]string{} // type -> its declaration, as the source has it
	reachedBy := map[string]string{}
	for _, v := range stored {
		declared := map[string]*ast.TypeSpec{}
		typeSpecs(v, func(ts *ast.TypeSpec) { declared[ts.Name.Name] = ts })
		var roots []string
		for _, k := range g.Kinds {
			if k.StorageVersion == v.Name {
				roots = append(roots, k.Kind, k.Kind+"List")
			}
		}
		roots = append(roots, v.Requests...)
		reached := map[string]bool{}
		var reach func(name string)
		reach = func(name string) {
			ts := declared[name]
			if ts == nil || reached[name] {
				return
			}
			reached[name] = true
			typeRefs(ts.Type, reach)
		}
		for _, r := range roots {
			reach(r)
		}
		for _, name := range slices.Sorted(maps.Keys(reached)) {
			var b strings.Builder
			if err := printer.Fprint(&b, v.Fset, declared[name].Type); err != nil {
				return nil, err
			}
			decl := b.String() // comments are not printed: only the shape counts
			if prev, ok := sources[name]; ok {
				if shape[name] != decl {
					return nil, fmt.Errorf("group %s: type %s is declared differently in %s (reached from %s) and %s (reached from %s), "+
						"and the internal package can hold one: declare it alike, or store those kinds in one version",
						g.FullName, name, prev.Name, reachedBy[name], v.Name, storedIn(g, v.Name))
				}
				continue
			}
			sources[name], shape[name], reachedBy[name] = v, decl, storedIn(g, v.Name)
		}
	}
	// Types no stored kind reaches.
	for _, v := range stored {
		typeSpecs(v, func(ts *ast.TypeSpec) {
			if _, ok := sources[ts.Name.Name]; !ok {
				sources[ts.Name.Name] = v
			}
		})
	}
	return sources, nil
}

// storedIn names the kinds stored in version.
func storedIn(g *model.Group, version string) string {
	var names []string
	for _, k := range g.Kinds {
		if k.StorageVersion == version {
			names = append(names, k.Kind)
		}
	}
	return strings.Join(names, ", ")
}

func internalTypesSource(g *model.Group, header string) ([]byte, error) {
	sources, err := internalSources(g)
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	imports := map[string]string{} // path -> name used
	copied := map[string]bool{}    // declarations, by text: const blocks both versions have
	var names []string
	for _, v := range g.StorageVersions() {
		names = append(names, v.Name)
		for _, f := range v.Files {
			// Other files than *_types.go give the types the kinds reach
			// (and the const blocks of their values): sources says which.
			filename := v.Fset.Position(f.Pos()).Filename
			src, err := os.ReadFile(filename)
			if err != nil {
				return nil, err
			}
			fileImports := importNames(f)
			prevEnd := f.Name.End()
			for _, d := range f.Decls {
				after := prevEnd
				prevEnd = d.End()
				gd, ok := d.(*ast.GenDecl)
				if !ok {
					continue
				}
				out, nodes := internalDecl(v, f, src, gd, after, func(name string) bool { return sources[name] == v })
				if out == "" || copied[out] {
					continue
				}
				copied[out] = true
				body.WriteString(out)
				body.WriteString("\n\n")
				for _, node := range nodes {
					ast.Inspect(node, func(n ast.Node) bool {
						if sel, ok := n.(*ast.SelectorExpr); ok {
							if id, ok := sel.X.(*ast.Ident); ok {
								if p, ok := fileImports[id.Name]; ok {
									if prev, dup := imports[p]; dup && prev != id.Name {
										return true
									}
									imports[p] = id.Name
								}
							}
						}
						return true
					})
				}
			}
		}
	}
	var buf bytes.Buffer
	buf.WriteString(header)
	buf.WriteString("\n")
	fmt.Fprintf(&buf, "// Code generated by apiserver-boot from the %s types. DO NOT EDIT.\n\n", strings.Join(names, " and "))
	fmt.Fprintf(&buf, "package %s\n\n", g.Name)
	if len(imports) > 0 {
		paths := make([]string, 0, len(imports))
		for p := range imports {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		buf.WriteString("import (\n")
		for _, p := range paths {
			fmt.Fprintf(&buf, "\t%s %s\n", imports[p], strconv.Quote(p))
		}
		buf.WriteString(")\n\n")
	}
	buf.Write(body.Bytes())
	return buf.Bytes(), nil
}

// internalDecl returns the text the internal package copies of a declaration
// of the version (markers of the version stripped), and the nodes it holds;
// "" when it copies none. Types come when taken from this version, const
// blocks when they hold values of such a type. after is where the previous
// declaration ends.
func internalDecl(v *model.Version, f *ast.File, src []byte, gd *ast.GenDecl, after token.Pos, taken func(string) bool) (string, []ast.Node) {
	text := func(start, end token.Pos) string {
		return stripVersionMarkers(string(src[v.Fset.Position(start).Offset:v.Fset.Position(end).Offset]))
	}
	switch gd.Tok {
	case token.TYPE:
		var picked []*ast.TypeSpec
		for _, s := range gd.Specs {
			if ts := s.(*ast.TypeSpec); taken(ts.Name.Name) {
				picked = append(picked, ts)
			}
		}
		if len(picked) == 0 {
			return "", nil
		}
		if len(picked) < len(gd.Specs) {
			// Part of a type ( ... ) block: those specs alone.
			var parts []string
			var nodes []ast.Node
			for _, ts := range picked {
				start := ts.Pos()
				if ts.Doc != nil {
					start = ts.Doc.Pos()
				}
				parts = append(parts, "type "+text(start, ts.End()))
				nodes = append(nodes, ts)
			}
			return strings.Join(parts, "\n\n"), nodes
		}
	case token.CONST:
		if !valuesOf(gd, taken) {
			return "", nil
		}
	default:
		return "", nil
	}
	start := gd.Pos()
	if gd.Doc != nil {
		start = gd.Doc.Pos()
	}
	// Markers may sit in a block of their own, a blank line above the doc
	// comment, where gengo finds them too (its "second closest" comment
	// lines): copy that block with the type.
	if c := model.DetachedComment(v.Fset, f, after, start); c != nil {
		start = c.Pos()
	}
	return text(start, gd.End()), []ast.Node{gd}
}

// valuesOf reports whether a const block declares values of a type the
// internal package takes from this version: enum values such as
// `PhaseRunning Phase = "Running"` or `PhaseRunning = Phase("Running")`.
func valuesOf(gd *ast.GenDecl, local func(string) bool) bool {
	for _, s := range gd.Specs {
		vs, ok := s.(*ast.ValueSpec)
		if !ok {
			continue
		}
		if id, ok := vs.Type.(*ast.Ident); ok && local(id.Name) {
			return true
		}
		for _, val := range vs.Values {
			if call, ok := val.(*ast.CallExpr); ok && len(call.Args) == 1 {
				if id, ok := call.Fun.(*ast.Ident); ok && local(id.Name) {
					return true
				}
			}
		}
	}
	return false
}

// importNames maps the names a file uses for its imports to their paths.
func importNames(f *ast.File) map[string]string {
	out := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		out[name] = p
	}
	return out
}
