package generators

import (
	"errors"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	gotypes "go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"k8s.io/gengo/v2/generator"
	gentypes "k8s.io/gengo/v2/types"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/hooks"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// Hooks are methods the user declares on the generated <Kind>Strategy and
// <Kind>SchemeFns (docs/hooks.md). One with another signature would compile
// and then stop the apiserver at start-up (pkg/internal/strategy binds the
// strategy hooks when it starts), or fail the build inside
// zz_generated.register.go (DefaultingFunction): checkHooks refuses it at
// generate time, from the types of the loaded packages. Which strategy hooks
// there are, with which signatures, is internal/shared/hooks' table, which
// the runtime binds from too.

// typeKey spells a type with full package paths, aliases resolved, so that
// two types are the same exactly when their keys are.
func typeKey(t gotypes.Type) string {
	return gotypes.TypeString(unalias(t), func(p *gotypes.Package) string { return p.Path() })
}

func unalias(t gotypes.Type) gotypes.Type {
	t = gotypes.Unalias(t)
	if p, ok := t.(*gotypes.Pointer); ok {
		return gotypes.NewPointer(gotypes.Unalias(p.Elem()))
	}
	return t
}

// invalid tells whether a signature names a type that did not type-check:
// the compile check reports the cause.
func invalid(sig *gotypes.Signature) bool {
	for _, tuple := range []*gotypes.Tuple{sig.Params(), sig.Results()} {
		for i := range tuple.Len() {
			if strings.Contains(gotypes.TypeString(tuple.At(i).Type(), nil), "invalid type") {
				return true
			}
		}
	}
	return false
}

// shortName spells a type with package names, as source does.
func shortName(t gotypes.Type) string {
	return gotypes.TypeString(t, func(p *gotypes.Package) string { return p.Name() })
}

// spell writes a method as declared: func (recv) Name(params) results.
func spell(recv, name string, params []hooks.Param, results []string, short func(string) string) string {
	var ps []string
	for i, p := range params {
		// Consecutive parameters of one type share it: obj, old *stable.CronTab.
		if i+1 < len(params) && params[i+1].Type == p.Type {
			ps = append(ps, p.Name)
			continue
		}
		ps = append(ps, p.Name+" "+short(p.Type))
	}
	s := fmt.Sprintf("func (%s) %s(%s)", recv, name, strings.Join(ps, ", "))
	var rs []string
	for _, r := range results {
		rs = append(rs, short(r))
	}
	switch len(rs) {
	case 0:
	case 1:
		s += " " + rs[0]
	default:
		s += " (" + strings.Join(rs, ", ") + ")"
	}
	return s
}

// declaredSignature spells a method as the user declared it.
func declaredSignature(recv, name string, sig *gotypes.Signature) string {
	var params []hooks.Param
	for i := range sig.Params().Len() {
		p := sig.Params().At(i)
		typ := shortName(p.Type())
		if sig.Variadic() && i == sig.Params().Len()-1 {
			typ = "..." + strings.TrimPrefix(typ, "[]")
		}
		name := p.Name()
		if name == "" {
			name = "_"
		}
		params = append(params, hooks.Param{Name: name, Type: typ})
	}
	var results []string
	for i := range sig.Results().Len() {
		results = append(results, shortName(sig.Results().At(i).Type()))
	}
	return spell(recv, name, params, results, func(s string) string { return s })
}

// methodPos finds where the version's hand-written files declare a method.
func methodPos(v *model.Version, typ, name string) token.Position {
	for _, f := range v.Files {
		for _, d := range f.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 && fd.Name.Name == name && receiverName(fd.Recv.List[0].Type) == typ {
				return v.Fset.Position(fd.Pos())
			}
		}
	}
	return token.Position{Filename: v.Dir}
}

// checkHooks checks the signature of every hook the versions declare.
func checkHooks(api *State, c *generator.Context) error {
	var errs []string
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			pkg := c.Universe.Package(v.Package)
			if pkg == nil {
				continue
			}
			for _, k := range v.Kinds {
				internal := "*" + g.Package + "." + k.Kind
				versioned := "*" + v.Package + "." + k.Kind
				if t := pkg.Types[k.Strategy]; t != nil {
					named, ok := t.GoType.(*gotypes.Named)
					if !ok {
						continue
					}
					for i := range named.NumMethods() {
						m := named.Method(i)
						hook, ok := hooks.Find(m.Name())
						sig := m.Type().(*gotypes.Signature)
						if !ok || invalid(sig) || strategyHookMatches(sig, hook, internal) {
							continue
						}
						recv := recvSpelling(sig, k.Strategy)
						pos := methodPos(v, k.Strategy, m.Name())
						msg := fmt.Sprintf("%s: %s.%s has the wrong signature for the %s hook:\n\tfound:    %s\n\texpected: %s",
							relPos(api.Root, pos), k.Strategy, m.Name(), m.Name(), declaredSignature(recv, m.Name(), sig),
							spell(recv, m.Name(), hook.With(internal, ""), hook.Results, hooks.Short))
						if hook.UsesT() {
							msg += fmt.Sprintf("\n\tthe strategy hooks of %s take the internal type %s (import %q) or runtime.Object, not the versioned *%s.%s",
								k.Kind, hooks.Short(internal), g.Package, v.Name, k.Kind)
						}
						errs = append(errs, msg)
					}
				}
				if gk := g.Kind(k.Kind); gk != nil && v.Name == gk.StorageVersion {
					errs = append(errs, checkHandlers(api, g, v, pkg.Types[k.Strategy], gk)...)
				}
				fns := k.Kind + "SchemeFns"
				if t := pkg.Types[fns]; t != nil {
					named, ok := t.GoType.(*gotypes.Named)
					if !ok {
						continue
					}
					for i := range named.NumMethods() {
						m := named.Method(i)
						sig := m.Type().(*gotypes.Signature)
						if m.Name() != "DefaultingFunction" || invalid(sig) || defaultingMatches(sig, versioned) {
							continue
						}
						recv := recvSpelling(sig, fns)
						pos := methodPos(v, fns, m.Name())
						errs = append(errs, fmt.Sprintf("%s: %s.DefaultingFunction has the wrong signature:\n\tfound:    %s\n\texpected: %s\n\tit is called with the versioned object (generated SetDefaults_%s); obj interface{} or runtime.Object works too, nothing is returned",
							relPos(api.Root, pos), fns, declaredSignature(recv, m.Name(), sig),
							spell(recv, "DefaultingFunction", []hooks.Param{{Name: "obj", Type: "*" + k.Kind}}, nil, func(s string) string { return s }), k.Kind))
					}
				}
			}
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// checkHandlers checks the handlers of the custom subresources of kind k,
// methods of its strategy t in its storage version v. The generated
// registration binds each with builders.NewSubresource, which infers the
// object and request types from the handler and asserts the internal
// object and the internal request to them when a request comes: a handler
// taking the versioned types would compile and then panic. One that is not
// declared there, checkSubresources reports.
func checkHandlers(api *State, g *model.Group, v *model.Version, t *gentypes.Type, k *model.Kind) []string {
	if t == nil {
		return nil
	}
	named, ok := t.GoType.(*gotypes.Named)
	if !ok {
		return nil
	}
	var errs []string
	for _, sub := range k.Subresources {
		for i := range named.NumMethods() {
			m := named.Method(i)
			sig := m.Type().(*gotypes.Signature)
			if m.Name() != sub.Handler || invalid(sig) {
				continue
			}
			internal, request := "*"+g.Package+"."+k.Kind, "*"+g.Package+"."+sub.Request
			params, results := handlerMatches(sig, internal, request)
			if params && results {
				continue
			}
			recv := recvSpelling(sig, k.Strategy)
			pos := methodPos(v, k.Strategy, m.Name())
			msg := fmt.Sprintf("%s: %s.%s has the wrong signature for the handler of the %s subresource of %s:\n\tfound:    %s\n\texpected: %s",
				relPos(api.Root, pos), k.Strategy, m.Name(), sub.Path, k.Kind, declaredSignature(recv, m.Name(), sig),
				spell(recv, m.Name(), hooks.Handler.With(internal, request), hooks.Handler.Results, hooks.Short))
			if !params {
				msg += fmt.Sprintf("\n\tthe handler takes the internal types %s and %s (import %q), or runtime.Object for either, not the versioned *%s.%s and *%s.%s",
					hooks.Short(internal), hooks.Short(request), g.Package, v.Name, k.Kind, v.Name, sub.Request)
			}
			errs = append(errs, msg)
		}
	}
	return errs
}

// handlerMatches tells whether the parameters and the results of sig are a
// custom subresource's handler's (hooks.Handler) as
// builders.NewSubresource binds it: T the internal object type or
// runtime.Object, R the internal request type or runtime.Object (the types
// the internal object and request are asserted to).
func handlerMatches(sig *gotypes.Signature, internal, request string) (params, results bool) {
	h := hooks.Handler
	results = sig.Results().Len() == len(h.Results)
	for i := 0; results && i < len(h.Results); i++ {
		results = typeKey(sig.Results().At(i).Type()) == h.Results[i]
	}
	if sig.Variadic() || sig.Params().Len() != len(h.Params) {
		return false, results
	}
	params = true
	for i, p := range h.Params {
		key := typeKey(sig.Params().At(i).Type())
		switch p.Type {
		case hooks.T:
			params = params && (key == internal || key == hooks.Object)
		case hooks.R:
			params = params && (key == request || key == hooks.Object)
		default:
			params = params && key == p.Type
		}
	}
	return params, results
}

// recvSpelling is the receiver as declared: T or *T.
func recvSpelling(sig *gotypes.Signature, typ string) string {
	if sig.Recv() != nil {
		if _, ptr := sig.Recv().Type().(*gotypes.Pointer); ptr {
			return "*" + typ
		}
	}
	return typ
}

// strategyHookMatches tells whether sig is the hook's, with T the internal
// type or runtime.Object.
func strategyHookMatches(sig *gotypes.Signature, hook hooks.Hook, internal string) bool {
	if sig.Variadic() || sig.Params().Len() != len(hook.Params) || sig.Results().Len() != len(hook.Results) {
		return false
	}
	for i, r := range hook.Results {
		if typeKey(sig.Results().At(i).Type()) != r {
			return false
		}
	}
	for _, t := range []string{internal, hooks.Object} {
		ok := true
		for i, p := range hook.With(t, "") {
			ok = ok && typeKey(sig.Params().At(i).Type()) == p.Type
		}
		if ok {
			return true
		}
	}
	return false
}

// defaultingMatches tells whether DefaultingFunction takes one argument the
// versioned object can be passed as, and returns nothing.
func defaultingMatches(sig *gotypes.Signature, versioned string) bool {
	if sig.Variadic() || sig.Params().Len() != 1 || sig.Results().Len() != 0 {
		return false
	}
	t := sig.Params().At(0).Type()
	if iface, ok := t.Underlying().(*gotypes.Interface); ok && iface.Empty() {
		return true
	}
	key := typeKey(t)
	return key == versioned || key == hooks.Object
}

// checkCompiles type-checks the API packages as the build will, with every
// file generate just wrote, and refuses errors in hand-written files (a
// hooks file that does not compile) with the compiler's file:line message.
// The packages they import come from the universe the generators loaded.
// Errors inside generated files are not reported here: the checks before
// name their causes, and the build names them too. If a package cannot be
// checked faithfully (an import missing from the universe, or a package of
// the project importing the API packages itself), nothing is reported.
func checkCompiles(api *State, c *generator.Context) error {
	cc := newCompileChecker(api, c)
	var paths []string
	for p := range cc.dirs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if _, err := cc.check(p); err != nil {
			// What cannot be read or parsed here, the build reports.
			return nil
		}
	}
	if cc.unfaithful || len(cc.errs) == 0 {
		return nil
	}
	// As go build: the first ten, in file order.
	errs := dedupe(cc.errs)
	if len(errs) > 10 {
		errs = append(errs[:10], "too many errors")
	}
	return fmt.Errorf("the API packages do not compile:\n%s", strings.Join(errs, "\n"))
}

// compileChecker type-checks the API packages from their folders, with the
// rest of the program from the universe.
type compileChecker struct {
	root       string
	dirs       map[string]string           // API package path: its folder
	loaded     map[string]*gotypes.Package // every package the universe holds
	memo       map[string]bool             // dependsOnAPI's answers
	fset       *token.FileSet
	sizes      gotypes.Sizes
	checked    map[string]*gotypes.Package
	checking   map[string]bool
	unfaithful bool     // a package cannot be checked faithfully: report nothing
	errs       []string // errors in hand-written files, file:line first
}

func newCompileChecker(api *State, c *generator.Context) *compileChecker {
	cc := &compileChecker{root: api.Root, dirs: map[string]string{}, loaded: map[string]*gotypes.Package{}, memo: map[string]bool{},
		fset: token.NewFileSet(), sizes: gotypes.SizesFor("gc", runtime.GOARCH), checked: map[string]*gotypes.Package{}, checking: map[string]bool{}}
	for _, g := range api.Groups {
		cc.dirs[g.Package] = g.Dir
		for _, v := range g.Versions {
			cc.dirs[v.Package] = v.Dir
		}
	}
	for _, pkg := range c.Universe {
		for _, t := range pkg.Types {
			if n, ok := t.GoType.(*gotypes.Named); ok {
				cc.collect(n.Obj().Pkg())
			}
		}
	}
	return cc
}

// collect records p and what it imports, transitively.
func (cc *compileChecker) collect(p *gotypes.Package) {
	if p == nil || cc.loaded[p.Path()] != nil {
		return
	}
	cc.loaded[p.Path()] = p
	for _, i := range p.Imports() {
		cc.collect(i)
	}
}

// dependsOnAPI tells whether a loaded package imports an API package: it
// holds the universe's view of it, not the one checked here.
func (cc *compileChecker) dependsOnAPI(p *gotypes.Package) bool {
	if v, ok := cc.memo[p.Path()]; ok {
		return v
	}
	cc.memo[p.Path()] = false
	for _, i := range p.Imports() {
		if _, api := cc.dirs[i.Path()]; api || cc.dependsOnAPI(i) {
			cc.memo[p.Path()] = true
			return true
		}
	}
	return false
}

// Import gives the type-checker an API package checked here, or the
// universe's package.
func (cc *compileChecker) Import(path string) (*gotypes.Package, error) {
	if _, ok := cc.dirs[path]; ok {
		return cc.check(path)
	}
	if path == "unsafe" {
		return gotypes.Unsafe, nil
	}
	p := cc.loaded[path]
	if p == nil {
		// Only generated code imports it (protowire): an empty package
		// fails generated code only, which is not reported.
		p = gotypes.NewPackage(path, filepath.Base(path))
		p.MarkComplete()
		return p, nil
	}
	if cc.dependsOnAPI(p) {
		cc.unfaithful = true
	}
	return p, nil
}

// check type-checks the API package path from its folder, once.
func (cc *compileChecker) check(path string) (*gotypes.Package, error) {
	if p, ok := cc.checked[path]; ok {
		return p, nil
	}
	if cc.checking[path] {
		return nil, fmt.Errorf("import cycle through %s", path)
	}
	cc.checking[path] = true
	dir := cc.dirs[path]
	syntax, handWritten, err := cc.parse(dir)
	if err != nil {
		return nil, err
	}
	// The files an undefined name or a missing import in generated code
	// would otherwise hide behind are hand-written: collect all errors.
	conf := gotypes.Config{
		Importer: cc,
		Sizes:    cc.sizes,
		Error: func(err error) {
			if te, ok := err.(gotypes.Error); ok {
				if pos := te.Fset.Position(te.Pos); handWritten[pos.Filename] {
					cc.errs = append(cc.errs, fmt.Sprintf("%s: %s", relPos(cc.root, pos), te.Msg))
				}
			}
		},
	}
	name := filepath.Base(dir)
	if len(syntax) > 0 {
		name = syntax[0].Name.Name
	}
	p, _ := conf.Check(path, cc.fset, syntax, nil)
	if p == nil {
		p = gotypes.NewPackage(path, name)
	}
	cc.checked[path] = p
	return p, nil
}

// parse reads the package's files the build would compile, and says which
// are hand-written. A hand-written import the universe lacks makes the
// check unfaithful.
func (cc *compileChecker) parse(dir string) ([]*ast.File, map[string]bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	var syntax []*ast.File
	handWritten := map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		if match, err := build.Default.MatchFile(dir, name); err != nil || !match {
			continue
		}
		file := filepath.Join(dir, name)
		f, err := parser.ParseFile(cc.fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, nil, err
		}
		syntax = append(syntax, f)
		handWritten[file] = !strings.HasPrefix(name, "zz_generated")
		for _, imp := range f.Imports {
			ip := strings.Trim(imp.Path.Value, "`\"")
			if _, api := cc.dirs[ip]; handWritten[file] && !api && ip != "unsafe" && cc.loaded[ip] == nil {
				cc.unfaithful = true
			}
		}
	}
	return syntax, handWritten, nil
}

// checkShadowedMethods refuses a field of a kind or list type named like a
// method the type gets from an embedded field (GetObjectKind from
// metav1.TypeMeta, GetName... from metav1.ObjectMeta, GetContinue... from
// metav1.ListMeta): the field hides the method, and the type no longer is a
// runtime.Object or a metav1.Object, which the generated registration and
// the apiserver need it to be.
func checkShadowedMethods(api *State, c *generator.Context) error {
	var errs []string
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			pkg := c.Universe.Package(v.Package)
			if pkg == nil {
				continue
			}
			fields, _ := userDecls(v)
			for _, k := range v.Kinds {
				for _, name := range []string{k.Kind, k.Kind + "List"} {
					t := pkg.Types[name]
					if t == nil || t.GoType == nil {
						continue
					}
					st, ok := t.GoType.Underlying().(*gotypes.Struct)
					if !ok {
						continue
					}
					// The methods each embedded field brings.
					from := map[string]string{}
					for i := range st.NumFields() {
						f := st.Field(i)
						if !f.Embedded() {
							continue
						}
						ms := gotypes.NewMethodSet(gotypes.NewPointer(f.Type()))
						for j := range ms.Len() {
							from[ms.At(j).Obj().Name()] = gotypes.TypeString(f.Type(), func(p *gotypes.Package) string { return project.ImportAlias(p.Path()) })
						}
					}
					for i := range st.NumFields() {
						f := st.Field(i)
						embedded, ok := from[f.Name()]
						if f.Embedded() || !ok {
							continue
						}
						pos := token.Position{Filename: v.Dir}
						for _, uf := range fields {
							if uf.typ == name && uf.name == f.Name() {
								pos = uf.pos
							}
						}
						errs = append(errs, fmt.Sprintf("%s: field %s.%s hides the method %s that %s gets from its embedded %s, which makes it a runtime.Object and a metav1.Object for the registration and the apiserver: rename the Go field and keep its json tag (the wire name is unchanged)",
							relPos(api.Root, pos), name, f.Name(), f.Name(), name, embedded))
					}
				}
			}
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}
func dedupe(list []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
