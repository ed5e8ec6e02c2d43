package generators

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// Fields lost through the internal type. Every request is converted from its
// version to the internal type and back, so a field of a served version that
// conversion-gen cannot match in the internal type (only in that version,
// only in the storage version, renamed, another type) is dropped unless a
// hand-written Convert_ function carries it. Data a client sends must never
// vanish without an error at generate time: generate writes every file (the
// stubs of conversionstubs.go included, so the project stays consistent),
// then fails with a LostFieldsError while
//   - a Convert_ function still returns builders.UnconvertedFields (a stub
//     not filled in, or one no longer needed, which fails every conversion);
//   - a hand-written Convert_ function never reads a field conversion-gen
//     left to it (a field added after the conversion was written).

// LostFieldsError is what generate returns, after writing every file, while
// a field of a served version does not round-trip through the internal type.
type LostFieldsError struct {
	// Problems name, each, the group/version, kind, Go type, field (with its
	// JSON path) and the ways out.
	Problems []string
}

func (e *LostFieldsError) Error() string {
	var b strings.Builder
	what := "a field of a served version"
	if len(e.Problems) > 1 {
		what = fmt.Sprintf("%d fields of served versions", len(e.Problems))
	}
	fmt.Fprintf(&b, "conversions: %s would be lost converting through the internal type "+
		"(every file is written: fix the types or the conversions below, then run generate again):", what)
	for _, p := range e.Problems {
		b.WriteString("\n  - " + strings.ReplaceAll(p, "\n", "\n    "))
	}
	return b.String()
}

// conversionGap is an autoConvert function with fields conversion-gen skipped.
type conversionGap struct {
	Func   string // Convert_v2_CronTabSpec_To_stable_CronTabSpec
	In     string // type converted from, unqualified: CronTabSpec
	Out    string
	Fields []skippedField
	// ToInternal: from the version to the internal type.
	ToInternal bool
}

// conversionGaps reads the autoConvert functions of a generated
// zz_generated.conversion.go whose WARNING comments name skipped fields, by
// the name of their Convert_ function.
func conversionGaps(conv files.File) (map[string]*conversionGap, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, conv.Path, conv.Content, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	gaps := map[string]*conversionGap{}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || len(fd.Type.Params.List) < 2 {
			continue
		}
		m := autoConvertName.FindStringSubmatch(fd.Name.Name)
		if m == nil {
			continue
		}
		gap := &conversionGap{Func: "Convert_" + m[1]}
		for _, cg := range f.Comments {
			if cg.Pos() < fd.Body.Lbrace || cg.End() > fd.Body.Rbrace {
				continue
			}
			for _, c := range cg.List {
				if w := skippedWarning.FindStringSubmatch(c.Text); w != nil {
					gap.Fields = append(gap.Fields, skippedField{Name: w[1], Reason: strings.TrimPrefix(w[2], "requires manual conversion: ")})
				}
			}
		}
		if len(gap.Fields) == 0 {
			continue
		}
		in, inLocal := paramType(fd.Type.Params.List[0].Type)
		out, _ := paramType(fd.Type.Params.List[1].Type)
		gap.In, gap.Out, gap.ToInternal = in, out, inLocal
		gaps[gap.Func] = gap
	}
	return gaps, nil
}

// paramType is the type name of a *T or *pkg.T parameter, and whether it is
// of the package itself (the version's side of a conversion).
func paramType(e ast.Expr) (string, bool) {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name, true
	case *ast.SelectorExpr:
		return e.Sel.Name, false
	}
	return "", false
}

// handWritten parses the hand-written Go files of a version package as they
// are on disk now (the stubs generate just wrote included) and returns their
// top-level functions by name.
func handWritten(dir string) (*token.FileSet, map[string]*ast.FuncDecl, error) {
	fset := token.NewFileSet()
	funcs := map[string]*ast.FuncDecl{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && fd.Body != nil {
				funcs[fd.Name.Name] = fd
			}
		}
	}
	return fset, funcs, nil
}

// callsUnconvertedFields tells whether a Convert_ function still returns
// builders.UnconvertedFields: a stub written by generate, not filled in.
func callsUnconvertedFields(fd *ast.FuncDecl) bool {
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "UnconvertedFields" {
			found = true
		}
		return !found
	})
	return found
}

// stubFields returns the fields a Convert_ function hands to
// builders.UnconvertedFields.
func stubFields(fd *ast.FuncDecl) map[string]bool {
	fields := map[string]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "UnconvertedFields" {
			for _, a := range call.Args[min(1, len(call.Args)):] {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						fields[s] = true
					}
				}
			}
		}
		return true
	})
	return fields
}

// readFields returns the fields of its first parameter a hand-written
// conversion reads (in.Schedule), or all=true when it hands the parameter
// itself to a function other than the generated autoConvert_ (which then may
// read any field).
func readFields(fd *ast.FuncDecl) (read map[string]bool, all bool) {
	read = map[string]bool{}
	if len(fd.Type.Params.List) == 0 || len(fd.Type.Params.List[0].Names) == 0 {
		return read, true
	}
	in := fd.Type.Params.List[0].Names[0].Name
	selected := map[*ast.Ident]bool{}
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := n.X.(*ast.Ident); ok && id.Name == in {
				read[n.Sel.Name] = true
				selected[id] = true
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && strings.HasPrefix(id.Name, "autoConvert_") {
				for _, a := range n.Args {
					if id, ok := a.(*ast.Ident); ok {
						selected[id] = true
					}
				}
			}
		}
		return true
	})
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == in && !selected[id] {
			all = true
		}
		return !all
	})
	return read, all
}

// lostFields checks every version's conversions to and from the internal
// type, given the conversion files just generated.
func lostFields(api *State, generated []files.File) (*LostFieldsError, error) {
	var problems []string
	for _, g := range api.Groups {
		sources, err := internalSources(g)
		if err != nil {
			return nil, err
		}
		for _, v := range g.Versions {
			i := slices.IndexFunc(generated, func(f files.File) bool {
				return f.Path == filepath.Join(v.Dir, "zz_generated.conversion.go")
			})
			if i < 0 {
				continue
			}
			gaps, err := conversionGaps(generated[i])
			if err != nil {
				return nil, err
			}
			fset, funcs, err := handWritten(v.Dir)
			if err != nil {
				return nil, err
			}
			l := lossReporter{api: api, g: g, v: v, sources: sources}
			for _, name := range slices.Sorted(maps.Keys(funcs)) {
				fd := funcs[name]
				if !strings.HasPrefix(name, "Convert_") {
					continue
				}
				at := l.rel(fset.Position(fd.Pos()))
				stub := callsUnconvertedFields(fd)
				gap := gaps[name]
				if gap == nil {
					if stub {
						problems = append(problems, fmt.Sprintf("%s/%s: %s at %s is a stub that fails every conversion (it returns builders.UnconvertedFields), "+
							"and conversion-gen now converts every field of %s: delete the stub", g.FullName, v.Name, name, at, l.versioned(name)))
					}
					continue
				}
				read, all := readFields(fd)
				if all && !stub {
					continue
				}
				named := stubFields(fd)
				reported := false
				for _, f := range gap.Fields {
					switch {
					case stub && (named[f.Name] || !read[f.Name]):
						problems = append(problems, l.lost(gap, f, "", name, at, true))
						reported = true
					case !stub && !read[f.Name]:
						problems = append(problems, l.lost(gap, f, fmt.Sprintf("is never read by %s at %s, to which conversion-gen left it", name, at), name, at, false))
					}
				}
				if stub && !reported {
					problems = append(problems, fmt.Sprintf("%s/%s: %s at %s converts the fields conversion-gen left to it, but still returns builders.UnconvertedFields, failing every conversion: return nil instead", g.FullName, v.Name, name, at))
				}
			}
		}
	}
	for _, g := range api.Groups {
		problems = append(problems, retypedBuiltins(api, g)...)
	}
	if len(problems) == 0 {
		return nil, nil
	}
	return &LostFieldsError{Problems: problems}, nil
}

// lossReporter words the problems of one version.
type lossReporter struct {
	api     *State
	g       *model.Group
	v       *model.Version
	sources map[string]*model.Version // internal type -> the storage version it is copied from
}

func (l lossReporter) rel(pos token.Position) string {
	rel, err := filepath.Rel(l.api.Root, pos.Filename)
	if err != nil {
		rel = pos.Filename
	}
	if pos.Line > 0 {
		return fmt.Sprintf("%s:%d", filepath.ToSlash(rel), pos.Line)
	}
	return filepath.ToSlash(rel)
}

// versioned names the version's type of a Convert_ function:
// Convert_v2_CronTabSpec_To_stable_CronTabSpec -> v2.CronTabSpec.
func (l lossReporter) versioned(fn string) string {
	parts := strings.SplitN(strings.TrimPrefix(fn, "Convert_"), "_To_", 2)
	for _, p := range parts {
		if pkg, typ, ok := strings.Cut(p, "_"); ok && pkg == l.v.Name {
			return l.v.Name + "." + typ
		}
	}
	return fn
}

func (l lossReporter) versionedType(gap *conversionGap) string {
	if gap.ToInternal {
		return gap.In
	}
	return gap.Out
}

// lost words one field that does not round-trip: where it is, why, and the
// ways out: the types (so that conversion-gen converts it), or the Convert_
// function fn at at (a stub generate wrote, if stub).
func (l lossReporter) lost(gap *conversionGap, f skippedField, why, fn, at string, stub bool) string {
	typ := l.versionedType(gap)
	internal := l.g.Name + "." + typ
	storage := l.sources[typ]
	if storage == nil {
		storage = l.v
	}
	retyped := strings.HasPrefix(f.Reason, "inconvertible types")
	var b strings.Builder
	if gap.ToInternal {
		// A field of the served version.
		kinds, path := l.where(l.v, typ, f.Name)
		fmt.Fprintf(&b, "%s/%s %s: %s (field %s%s of %s.%s) ", l.g.FullName, l.v.Name, kinds, path, f.Name, fieldType(l.v.Types[typ], f.Name), l.v.Name, typ)
		if why == "" {
			why = l.because(f, fmt.Sprintf("the internal type %s (the storage version %s's %s)", internal, storage.Name, typ))
		}
		fmt.Fprintf(&b, "%s: what a client sends in it through %s would be lost.\n", why, l.v.Name)
		if retyped {
			fmt.Fprintf(&b, "Either give it the same type in %s and in the storage version %s (%s)", l.v.Name, storage.Name, l.declaredAt(storage, typ))
		} else {
			fmt.Fprintf(&b, "Either add the field to %s in the storage version %s (%s), so that the internal type has it", typ, storage.Name, l.declaredAt(storage, typ))
		}
	} else {
		// A field of the internal type, so of the storage version.
		kinds, path := l.where(storage, typ, f.Name)
		if served, _ := l.where(l.v, typ, ""); served != typ {
			kinds = served
		}
		fmt.Fprintf(&b, "%s/%s %s: %s (field %s%s of the internal type %s, from the storage version %s) ", l.g.FullName, l.v.Name, kinds, path, f.Name, fieldType(storage.Types[typ], f.Name), internal, storage.Name)
		if why == "" {
			why = l.because(f, l.v.Name+"."+typ)
		}
		fmt.Fprintf(&b, "%s: reading an object through %s would lose it, and an update through %s would erase it.\n", why, l.v.Name, l.v.Name)
		if retyped {
			fmt.Fprintf(&b, "Either give it the same type in %s (%s) and in the storage version %s", l.v.Name, l.declaredAt(l.v, typ), storage.Name)
		} else {
			fmt.Fprintf(&b, "Either add the field to %s in %s (%s)", typ, l.v.Name, l.declaredAt(l.v, typ))
		}
	}
	if stub {
		fmt.Fprintf(&b, ", and delete the stub below;\nor convert it in %s, the stub generate wrote at %s (it returns builders.UnconvertedFields, failing every conversion, until you do).", fn, at)
	} else {
		fmt.Fprintf(&b, ";\nor convert it in %s at %s.", fn, at)
	}
	return b.String()
}

// because words conversion-gen's reason for skipping a field.
func (l lossReporter) because(f skippedField, peer string) string {
	switch {
	case f.Reason == "does not exist in peer-type":
		return "is not in " + peer
	case strings.HasPrefix(f.Reason, "inconvertible types"):
		return fmt.Sprintf("has another type in %s: %s", peer, f.Reason)
	}
	return fmt.Sprintf("cannot be converted to %s: %s", peer, f.Reason)
}

// declaredAt is where a version declares a type, or its folder.
func (l lossReporter) declaredAt(v *model.Version, typ string) string {
	if td, ok := v.Types[typ]; ok {
		return l.rel(td.Pos)
	}
	return l.rel(token.Position{Filename: v.Dir})
}

// where names the kinds of a version that reach a type, and the JSON path of
// its field (empty goName: the type's own path) from the first of them.
func (l lossReporter) where(v *model.Version, typ, goName string) (kinds, path string) {
	paths := typePaths(v)
	var names []string
	for _, p := range paths[typ] {
		if !slices.Contains(names, p.kind) {
			names = append(names, p.kind)
		}
	}
	prefix := typ
	if len(paths[typ]) > 0 {
		prefix = paths[typ][0].path
	} else {
		names = []string{typ}
	}
	path = prefix
	if goName != "" {
		j := goName
		if td := v.Types[typ]; td != nil {
			for _, f := range td.Fields {
				if f.GoName == goName && f.JSONName != "" {
					j = f.JSONName
				}
			}
		}
		if path != "" {
			path += "."
		}
		path += j
	}
	return strings.Join(names, ", "), path
}

// kindPath is where a kind holds a type: "spec", "spec.jobs[]".
type kindPath struct{ kind, path string }

// typePaths maps every struct type a version's kinds reach to the JSON paths
// they hold it at (the plainest first), walking the declared fields.
func typePaths(v *model.Version) map[string][]kindPath {
	out := map[string][]kindPath{}
	for _, k := range v.Kinds {
		seen := map[string]bool{}
		var walk func(typ, path string)
		walk = func(typ, path string) {
			td := v.Types[typ]
			if td == nil || seen[typ] {
				return
			}
			seen[typ] = true
			defer delete(seen, typ)
			out[typ] = append(out[typ], kindPath{k.Kind, path})
			for _, f := range td.Fields {
				p := path
				if !f.Inline {
					if p != "" {
						p += "."
					}
					p += f.JSONName
				}
				suffix, name := localType(f.Type)
				if name == "" {
					continue
				}
				// A named slice or map (type Jobs []Job) adds its own suffix.
				for n := v.Types[name]; n != nil && n.Struct == nil && n.Underlying != nil; n = v.Types[name] {
					s, next := localType(n.Underlying)
					if next == "" || next == name {
						break
					}
					suffix, name = suffix+s, next
				}
				walk(name, p+suffix)
			}
		}
		walk(k.Kind, "")
	}
	for typ := range out {
		// Plain paths first (spec.template before spec.jobs[]), then shorter.
		hops := func(p string) int { return strings.Count(p, "[]") + strings.Count(p, "{}") }
		slices.SortStableFunc(out[typ], func(a, b kindPath) int {
			if d := hops(a.path) - hops(b.path); d != 0 {
				return d
			}
			return len(a.path) - len(b.path)
		})
	}
	return out
}

// localType reads a field's type expression: the package's own type it
// holds, and "[]" or "{}" per slice or map on the way.
func localType(e ast.Expr) (suffix, name string) {
	switch e := e.(type) {
	case *ast.StarExpr:
		return localType(e.X)
	case *ast.ArrayType:
		s, n := localType(e.Elt)
		return "[]" + s, n
	case *ast.MapType:
		s, n := localType(e.Value)
		return "{}" + s, n
	case *ast.Ident:
		return "", e.Name
	}
	return "", ""
}

// fieldType is " <type>" of a Go field of a declared type, for messages.
func fieldType(td *model.TypeDecl, goName string) string {
	if td == nil {
		return ""
	}
	for _, f := range td.Fields {
		if f.GoName == goName {
			return " " + types.ExprString(f.Type)
		}
	}
	return ""
}

// retypedBuiltins finds fields whose Go name a version shares with the
// internal type but whose basic type differs (int32 and int64, string and
// int32): conversion-gen converts those with a Go conversion, which drops
// what the narrower type cannot hold (or, string and a number, does not
// compile), without a warning.
func retypedBuiltins(api *State, g *model.Group) []string {
	sources, err := internalSources(g)
	if err != nil {
		return nil // reported by the internal types generator
	}
	var problems []string
	for _, v := range g.Versions {
		l := lossReporter{api: api, g: g, v: v, sources: sources}
		for _, typ := range slices.Sorted(maps.Keys(v.Types)) {
			storage := sources[typ]
			if storage == nil || storage == v || storage.Types[typ] == nil {
				continue
			}
			for _, f := range v.Types[typ].Fields {
				i := slices.IndexFunc(storage.Types[typ].Fields, func(sf *model.Field) bool { return sf.GoName == f.GoName })
				if i < 0 {
					continue
				}
				mine, theirs := basicShape(v, f.Type), basicShape(storage, storage.Types[typ].Fields[i].Type)
				if mine == "" || theirs == "" || mine == theirs || basicName.ReplaceAllString(mine, "_") != basicName.ReplaceAllString(theirs, "_") {
					continue // a pointer for a value, say: conversion-gen leaves it to a stub
				}
				kinds, path := l.where(v, typ, f.GoName)
				problems = append(problems, fmt.Sprintf("%s/%s %s: %s (field %s %s of %s.%s) is %s in the internal type %s.%s (the storage version %s's): "+
					"conversion-gen converts it with a Go conversion, which loses what %s cannot hold (or does not compile).\n"+
					"Either give it the same type in %s and in the storage version %s (%s);\n"+
					"or give it another Go name in %s (the JSON name may stay): generate then writes a Convert_ function for you to fill in.",
					g.FullName, v.Name, kinds, path, f.GoName, types.ExprString(f.Type), v.Name, typ, theirs, g.Name, typ, storage.Name,
					theirs, v.Name, storage.Name, l.rel(storage.Types[typ].Fields[i].Pos), v.Name))
			}
		}
	}
	return problems
}

// basicName matches the basic type names of a basicShape.
var basicName = regexp.MustCompile(`\w+`)

// basicShape is a field type made of basic types only (int32, *string,
// []int64, map[string]int32), with the version's named basic types
// (type Phase string) resolved; "" for any other type.
func basicShape(v *model.Version, e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		if s := basicShape(v, e.X); s != "" {
			return "*" + s
		}
	case *ast.ArrayType:
		if e.Len == nil {
			if s := basicShape(v, e.Elt); s != "" {
				return "[]" + s
			}
		}
	case *ast.MapType:
		k, val := basicShape(v, e.Key), basicShape(v, e.Value)
		if k != "" && val != "" {
			return "map[" + k + "]" + val
		}
	case *ast.Ident:
		if td := v.Types[e.Name]; td != nil {
			if td.Underlying != nil && td.Struct == nil {
				return basicShape(v, td.Underlying)
			}
			return ""
		}
		if types.Universe.Lookup(e.Name) != nil {
			if _, ok := types.Universe.Lookup(e.Name).(*types.TypeName); ok {
				return e.Name
			}
		}
	}
	return ""
}
