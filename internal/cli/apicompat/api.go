// Package apicompat keeps pkg/'s exported API a contract: it lists that
// API in a stable text form (the golden file pkg/api.txt), compares it with
// the last release's with golang.org/x/exp/apidiff, and says whether the
// version being released may carry the changes (docs/releasing.md). Run by
// hack/apicompat, from make release and from CI.
package apicompat

import (
	"errors"
	"fmt"
	"go/types"
	"os"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// Load type-checks the packages under pkg/ of the Go module in dir, from
// their sources as they are in dir, leaving out pkg/**/internal/** (not
// importable by users) and tests. The packages come back sorted by import
// path; a package that fails to load or type-check is an error.
func Load(dir string) ([]*types.Package, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes,
		Dir:  dir,
		// The module in dir alone, whatever go.work is around it.
		Env: append(os.Environ(), "GOWORK=off"),
	}
	loaded, err := packages.Load(cfg, "./pkg/...")
	if err != nil {
		return nil, fmt.Errorf("loading %s/pkg/...: %w", dir, err)
	}
	var errs []error
	var out []*types.Package
	for _, p := range loaded {
		for _, e := range p.Errors {
			errs = append(errs, fmt.Errorf("%s: %s", p.PkgPath, e))
		}
		if internal(p.PkgPath) || p.Types == nil {
			continue
		}
		out = append(out, p.Types)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no package under pkg/", dir)
	}
	slices.SortFunc(out, func(a, b *types.Package) int { return strings.Compare(a.Path(), b.Path()) })
	return out, nil
}

// internal reports whether path has an "internal" element: only its own
// module may import it, so it is no promise to users.
func internal(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "internal")
}

// goldenHeader opens the golden file: what it is and how to regenerate it.
const goldenHeader = `# The exported API of pkg/ (not pkg/**/internal): what generated projects
# and users' hooks may call, a contract reviewed like one (docs/releasing.md).
# One line per exported declaration, struct field, interface method and
# method; types of other packages are written with their import path.
# TestPkgAPI (repository root) fails when pkg/ differs from this file;
# after an intended change: go test -run TestPkgAPI . -update
`

// Golden is the golden file of pkgs, packages of the module modulePath:
// goldenHeader, then API's lines.
func Golden(modulePath string, pkgs []*types.Package) []byte {
	return []byte(goldenHeader + strings.Join(API(modulePath, pkgs), "\n") + "\n")
}

// API lists the exported declarations of pkgs, packages of the module
// modulePath, one line each, sorted: the package's path in the module, then
// the declaration with its type and without parameter names, e.g.
//
//	pkg/apiserver, func Main(Config) int
//	pkg/apiserver, type Config struct
//	pkg/apiserver, type Config struct, Name string
//	pkg/builders, method (DefaultStrategy) Canonicalize(k8s.io/apimachinery/pkg/runtime.Object)
//
// Methods are those declared on exported types (not those promoted from
// embedded fields: an embedded field is listed as "embedded T").
func API(modulePath string, pkgs []*types.Package) []string {
	var lines []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.Path(), modulePath), "/")
		q := func(other *types.Package) string {
			if other == p {
				return ""
			}
			return other.Path()
		}
		scope := p.Scope()
		for _, name := range scope.Names() {
			obj := scope.Lookup(name)
			if !obj.Exported() {
				continue
			}
			for _, d := range declaration(obj, q) {
				lines = append(lines, rel+", "+d)
			}
		}
	}
	slices.Sort(lines)
	return slices.Compact(lines)
}

// declaration is the lines of one package-level object.
func declaration(obj types.Object, q types.Qualifier) []string {
	switch obj := obj.(type) {
	case *types.Const:
		return []string{fmt.Sprintf("const %s %s = %s", obj.Name(), typeString(obj.Type(), q), obj.Val().ExactString())}
	case *types.Var:
		return []string{fmt.Sprintf("var %s %s", obj.Name(), typeString(obj.Type(), q))}
	case *types.Func:
		return []string{"func " + obj.Name() + signature(obj.Type().(*types.Signature), q)}
	case *types.TypeName:
		return typeDeclaration(obj, q)
	}
	return nil
}

// typeDeclaration is the lines of a type: the type, its exported fields or
// interface methods, and its exported methods.
func typeDeclaration(obj *types.TypeName, q types.Qualifier) []string {
	if obj.IsAlias() {
		return []string{fmt.Sprintf("type %s = %s", obj.Name(), typeString(types.Unalias(obj.Type()), q))}
	}
	named, ok := obj.Type().(*types.Named)
	if !ok {
		return []string{fmt.Sprintf("type %s %s", obj.Name(), typeString(obj.Type().Underlying(), q))}
	}
	head := "type " + obj.Name() + typeParams(named.TypeParams(), q)
	var lines []string
	switch u := named.Underlying().(type) {
	case *types.Struct:
		head += " struct"
		lines = append(lines, head)
		for f := range u.Fields() {
			if !f.Exported() {
				continue
			}
			if f.Embedded() {
				lines = append(lines, head+", embedded "+typeString(f.Type(), q))
			} else {
				lines = append(lines, head+", "+f.Name()+" "+typeString(f.Type(), q))
			}
		}
	case *types.Interface:
		lines = append(lines, interfaceLines(head+" interface", u, q)...)
	default:
		lines = append(lines, head+" "+typeString(u, q))
	}
	for m := range named.Methods() {
		if !m.Exported() {
			continue
		}
		sig := m.Type().(*types.Signature)
		recv := obj.Name() + typeParamNames(named.TypeParams())
		if _, ptr := sig.Recv().Type().(*types.Pointer); ptr {
			recv = "*" + recv
		}
		lines = append(lines, fmt.Sprintf("method (%s) %s%s", recv, m.Name(), signature(sig, q)))
	}
	return lines
}

// interfaceLines is an interface type's line, then one per exported
// method and embedded type; "unexported methods" when it has some (then
// only its own package can implement it).
func interfaceLines(head string, iface *types.Interface, q types.Qualifier) []string {
	lines := []string{head}
	for m := range iface.ExplicitMethods() {
		if m.Exported() {
			lines = append(lines, head+", "+m.Name()+signature(m.Type().(*types.Signature), q))
		} else {
			lines = append(lines, head+", unexported methods") // once: API compacts
		}
	}
	for t := range iface.EmbeddedTypes() {
		lines = append(lines, head+", embedded "+typeString(t, q))
	}
	return lines
}

// signature is a function's type parameters, parameters and results,
// without names: "[T any](string, ...int) (T, error)".
func signature(sig *types.Signature, q types.Qualifier) string {
	s := typeParams(sig.TypeParams(), q) + "(" + tuple(sig.Params(), sig.Variadic(), q) + ")"
	switch r := sig.Results(); r.Len() {
	case 0:
	case 1:
		s += " " + typeString(r.At(0).Type(), q)
	default:
		s += " (" + tuple(r, false, q) + ")"
	}
	return s
}

// tuple is the types of t, comma-separated; the last as ...T when variadic.
func tuple(t *types.Tuple, variadic bool, q types.Qualifier) string {
	parts := make([]string, t.Len())
	for i := range t.Len() {
		typ := t.At(i).Type()
		if variadic && i == t.Len()-1 {
			parts[i] = "..." + typeString(typ.(*types.Slice).Elem(), q)
			continue
		}
		parts[i] = typeString(typ, q)
	}
	return strings.Join(parts, ", ")
}

// typeParams is "[K comparable, V any]", "" without type parameters.
func typeParams(tps *types.TypeParamList, q types.Qualifier) string {
	if tps.Len() == 0 {
		return ""
	}
	parts := make([]string, tps.Len())
	for i := range tps.Len() {
		parts[i] = tps.At(i).Obj().Name() + " " + typeString(tps.At(i).Constraint(), q)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// typeParamNames is "[K, V]", "" without type parameters.
func typeParamNames(tps *types.TypeParamList) string {
	if tps.Len() == 0 {
		return ""
	}
	parts := make([]string, tps.Len())
	for i := range tps.Len() {
		parts[i] = tps.At(i).Obj().Name()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// typeString is types.TypeString without the parameter names of function
// types (in pointers, slices, arrays and maps too): names are no part of
// the API, and a renamed parameter changes no line.
func typeString(t types.Type, q types.Qualifier) string {
	switch t := t.(type) {
	case *types.Signature:
		return "func" + signature(t, q)
	case *types.Pointer:
		return "*" + typeString(t.Elem(), q)
	case *types.Slice:
		return "[]" + typeString(t.Elem(), q)
	case *types.Array:
		return fmt.Sprintf("[%d]%s", t.Len(), typeString(t.Elem(), q))
	case *types.Map:
		return "map[" + typeString(t.Key(), q) + "]" + typeString(t.Elem(), q)
	}
	return types.TypeString(t, q)
}
