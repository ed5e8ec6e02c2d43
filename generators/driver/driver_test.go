package driver

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"
)

const loadMode = packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports | packages.NeedDeps | packages.NeedTypes | packages.NeedSyntax

// declarations maps "<package>.<name>" to the package-level object's type,
// for every package of the graph.
func declarations(t *testing.T, cfg *packages.Config, patterns ...string) (map[string]string, map[string]*packages.Package) {
	t.Helper()
	roots, err := packages.Load(cfg, patterns...)
	if err != nil {
		t.Fatal(err)
	}
	decls, all := map[string]string{}, map[string]*packages.Package{}
	packages.Visit(roots, nil, func(p *packages.Package) {
		// Bodyless or not, every package type-checks without an error.
		for _, e := range p.Errors {
			t.Errorf("%s: %v", p.PkgPath, e)
		}
		all[p.PkgPath] = p
		for _, name := range p.Types.Scope().Names() {
			decls[p.PkgPath+"."+name] = types.ObjectString(p.Types.Scope().Lookup(name), nil)
		}
	})
	return decls, all
}

var metav1 = []string{"k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/runtime"}

// TestBodylessDeclarationsUnchanged loads apimachinery's meta/v1 and all it
// imports (the standard library included) twice, from the files as they are
// and from their bodyless copies (bodies, literals and the imports only they
// used removed), and compares every package-level object and its type: what
// the generators read must not change.
func TestBodylessDeclarationsUnchanged(t *testing.T) {
	want, pkgs := declarations(t, &packages.Config{Mode: loadMode}, metav1...)
	names := map[string]map[string]string{} // file -> import path -> package name
	for _, p := range pkgs {
		for _, f := range append(p.GoFiles, p.CompiledGoFiles...) {
			names[f] = map[string]string{}
			for path, imp := range p.Imports {
				names[f][path] = imp.Name
			}
		}
	}
	got, _ := declarations(t, &packages.Config{Mode: loadMode, ParseFile: func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
		out, ok := blankFuncBodies(src)
		if ok {
			out, ok = dropUnusedImports(out, names[filename])
		}
		if !ok {
			t.Errorf("%s: not made bodyless", filename)
			out = src
		}
		return parser.ParseFile(fset, filename, out, parser.AllErrors|parser.ParseComments)
	}}, metav1...)
	if len(pkgs) < 100 {
		t.Fatalf("only %d packages loaded", len(pkgs))
	}
	compare(t, want, got, len(want))
	t.Logf("%d packages, %d package-level objects compared", len(pkgs), len(want))
}

// compare checks that every object of got is declared as in want, and that got has at least n.
func compare(t *testing.T, want, got map[string]string, n int) {
	t.Helper()
	for name, g := range got {
		if w, ok := want[name]; !ok {
			t.Errorf("%s: only in the bodyless load", name)
		} else if w != g {
			t.Errorf("%s: %s, bodyless %s", name, w, g)
		}
	}
	if len(got) < n {
		t.Errorf("%d objects, want at least %d", len(got), n)
	}
}

// TestPackagesDriver loads through the driver, served by this test binary
// (TestMain), as generate does through apiserver-boot.
func TestPackagesDriver(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	patterns := append([]string{"github.com/apiserver-boot/apiserver-boot/pkg/builders"}, metav1...)
	want, all := declarations(t, &packages.Config{Mode: loadMode}, patterns...)
	cfg := &packages.Config{Mode: loadMode, Env: append(os.Environ(), "GOPACKAGESDRIVER="+exe, packagesDriverEnv+"=1", "XDG_CACHE_HOME="+cache)}
	got, loaded := declarations(t, cfg, patterns...)
	// The roots' declarations are all there and the same; what only function
	// bodies imported (net/http, for one) is not loaded.
	rootObjects := 0
	for name := range want {
		for _, r := range patterns {
			if strings.HasPrefix(name, r+".") {
				rootObjects++
			}
		}
	}
	compare(t, want, got, rootObjects)
	if _, ok := loaded["net/http"]; ok || len(loaded) >= len(all) {
		t.Errorf("the driver loaded %d packages (net/http among them: %v), a full load %d", len(loaded), ok, len(all))
	}
	t.Logf("%d packages through the driver, %d in a full load", len(loaded), len(all))

	meta := loaded[metav1[0]]
	// Dependencies are read from bodyless copies named as the original...
	for i, f := range meta.CompiledGoFiles {
		if !strings.HasPrefix(f, cache) || filepath.Base(f) != filepath.Base(meta.GoFiles[i]) {
			t.Fatalf("meta/v1 file %s is not a copy in the cache %s", f, cache)
		}
		for _, d := range meta.Syntax[i].Decls {
			// No body, but init's (empty) and generic functions' (a panic),
			// which go/types requires.
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil && len(fd.Body.List) > 0 && !(generic(fd) && len(fd.Body.List) == 1) {
				t.Fatalf("%s: %s has a body", f, fd.Name.Name)
			}
		}
	}
	// ...and the main module's packages as they are.
	for _, f := range loaded[patterns[0]].CompiledGoFiles {
		if strings.HasPrefix(f, cache) {
			t.Fatalf("main module file %s was copied", f)
		}
	}
}

// TestBodylessShapes: declaration shapes the real packages may not all have.
func TestBodylessShapes(t *testing.T) {
	const src = `package shapes

import (
	"fmt"
	str "strings"
	_ "embed"
	"sort"
	"bytes"
)

type List[T any] struct{ items []T }

type pair struct{ a, b int }

const (
	zero = iota
	one
)

var (
	generic  = List[int]{items: []int{1}}
	ptr      = &pair{a: 1}
	anon     = struct{ X int }{X: 1}
	arr      = [...]string{"a", "b", "c"}
	keyed    = [...]string{2: "c"}
	m        = map[string]pair{"x": {1, 2}}
	typed    fmt.Stringer = nil
	a, b     = pair{}, 2
	fn       = func() string { return str.ToUpper("x") }
	_        = sort.Ints
	buf      bytes.Buffer
)

func (l *List[T]) Len() int { fmt.Println(len(l.items)); return len(l.items) }

func Sum[T ~int](xs ...T) (s T) {
	for _, x := range xs {
		s += x
	}
	return
}
`
	check := func(src []byte) map[string]string {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "shapes.go", src, parser.ParseComments)
		if err != nil {
			t.Fatalf("%v\n%s", err, src)
		}
		conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Error: func(error) {}}
		pkg, _ := conf.Check("shapes", fset, []*ast.File{f}, nil)
		out := map[string]string{}
		for _, name := range pkg.Scope().Names() {
			out[name] = types.ObjectString(pkg.Scope().Lookup(name), nil)
		}
		if l, ok := pkg.Scope().Lookup("List").Type().(*types.Named); ok {
			for i := range l.NumMethods() {
				out["List."+l.Method(i).Name()] = types.ObjectString(l.Method(i), nil)
			}
		}
		return out
	}
	blank, ok := blankFuncBodies([]byte(src))
	if !ok {
		t.Fatal("not blanked")
	}
	names := map[string]string{"fmt": "fmt", "strings": "strings", "embed": "embed", "sort": "sort", "bytes": "bytes"}
	out, ok := dropUnusedImports(blank, names)
	if !ok {
		t.Fatal("imports not dropped")
	}
	want, got := check([]byte(src)), check(out)
	if len(got) != len(want) {
		t.Errorf("%d objects, want %d:\n%s", len(got), len(want), out)
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s: %s, bodyless %s", name, w, got[name])
		}
	}
	if n := len(src); len(out) >= n {
		t.Errorf("nothing removed:\n%s", out)
	}
}

func TestMain(m *testing.M) {
	ServePackagesDriver()
	os.Exit(m.Run())
}

// TestPackagesDriverReadsLocalFoldersAsTheyAre: a module replaced by a local
// folder (which its owner edits) is not copied, only module cache and GOROOT
// packages are.
func TestPackagesDriverReadsLocalFoldersAsTheyAre(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	app, lib := filepath.Join(root, "app"), filepath.Join(root, "lib")
	os.MkdirAll(app, 0o755)
	os.MkdirAll(lib, 0o755)
	os.WriteFile(filepath.Join(lib, "go.mod"), []byte("module example.com/lib\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(lib, "lib.go"), []byte("package lib\n\nimport \"strings\"\n\n// Upper upper-cases.\nfunc Upper(s string) string { return strings.ToUpper(s) }\n"), 0o644)
	os.WriteFile(filepath.Join(app, "go.mod"), []byte("module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v0.0.0\n\nreplace example.com/lib => ../lib\n"), 0o644)
	os.WriteFile(filepath.Join(app, "app.go"), []byte("package app\n\nimport \"example.com/lib\"\n\nvar X = lib.Upper(\"x\")\n"), 0o644)
	cache := t.TempDir()
	cfg := &packages.Config{Mode: loadMode, Dir: app, Env: append(os.Environ(), "GOPACKAGESDRIVER="+exe, packagesDriverEnv+"=1", "XDG_CACHE_HOME="+cache, "GOFLAGS=-mod=mod")}
	_, loaded := declarations(t, cfg, "example.com/app")
	l := loaded["example.com/lib"]
	if l == nil {
		t.Fatalf("example.com/lib not loaded: %v", keys(loaded))
	}
	for _, f := range l.CompiledGoFiles {
		if strings.HasPrefix(f, cache) {
			t.Errorf("the replaced local module's %s was copied", f)
		}
	}
	if s := loaded["strings"]; s == nil || !strings.HasPrefix(s.CompiledGoFiles[0], cache) {
		t.Errorf("GOROOT's strings should be read from a bodyless copy")
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestPruneCache: entries unused for a month go, at most once a day.
func TestPruneCache(t *testing.T) {
	dir := t.TempDir()
	old, recent := filepath.Join(dir, "ab", "abold"), filepath.Join(dir, "cd", "cdrecent")
	for _, d := range []string{old, recent} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "x.go"), []byte("package x\n"), 0o644)
	}
	now := time.Now()
	monthsAgo := now.Add(-40 * 24 * time.Hour)
	os.Chtimes(old, monthsAgo, monthsAgo)
	pruneCache(dir, now)
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("an entry unused for 40 days survived: %v", err)
	}
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("a recent entry was pruned: %v", err)
	}
	// Within a day of the last pruning, nothing is walked.
	os.Chtimes(recent, monthsAgo, monthsAgo)
	pruneCache(dir, now.Add(time.Hour))
	if _, err := os.Stat(recent); err != nil {
		t.Errorf("pruned again within a day: %v", err)
	}
}

// goListLog puts on PATH a go command that records the arguments of every
// run (in the returned file) and runs the real one.
func goListLog(t *testing.T) (path, log string) {
	t.Helper()
	real, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	bin := t.TempDir()
	log = filepath.Join(bin, "go.log")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\nexec " + real + " \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "go"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin + string(os.PathListSeparator) + os.Getenv("PATH"), log
}

// TestPackagesDriverCompiledFilesOnlyForCgo: go list -compiled (the build's
// cache keys, cgo's processing) is asked for only when a package the load
// keeps has cgo files; without them the Go files are the compiled files, and
// the load is what it was (TestPackagesDriver compares the declarations).
// With a cgo package, its compiled files are cgo's output, as before.
func TestPackagesDriverCompiledFilesOnlyForCgo(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path, log := goListLog(t)
	env := append(os.Environ(), "PATH="+path, "GOPACKAGESDRIVER="+exe, packagesDriverEnv+"=1", "XDG_CACHE_HOME="+t.TempDir())
	lists := func() (compiled, plain int) {
		b, _ := os.ReadFile(log)
		os.Remove(log)
		for _, l := range strings.Split(string(b), "\n") {
			compiled += strings.Count(l, "list") * strings.Count(l, "-compiled=true")
			plain += strings.Count(l, "list") * strings.Count(l, "-compiled=false")
		}
		return compiled, plain
	}
	_, loaded := declarations(t, &packages.Config{Mode: loadMode, Env: env}, metav1...)
	if compiled, plain := lists(); compiled != 0 || plain == 0 {
		t.Errorf("loading meta/v1 ran go list -compiled=true %d times, -compiled=false %d times; want only -compiled=false", compiled, plain)
	}
	if meta := loaded[metav1[0]]; meta == nil || len(meta.CompiledGoFiles) != len(meta.GoFiles) || len(meta.Syntax) != len(meta.GoFiles) {
		t.Fatalf("meta/v1 not loaded from its Go files: %+v", meta)
	}

	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler for the cgo package")
	}
	app := t.TempDir()
	os.WriteFile(filepath.Join(app, "go.mod"), []byte("module example.com/app\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(app, "app.go"), []byte("package app\n\n// Size is a C int's.\nvar Size = size\n"), 0o644)
	os.WriteFile(filepath.Join(app, "c.go"), []byte("package app\n\n// #define N 4\nimport \"C\"\n\nconst size = C.N\n"), 0o644)
	cfg := &packages.Config{Mode: loadMode, Dir: app, Env: append(env, "CGO_ENABLED=1")}
	_, loaded = declarations(t, cfg, "example.com/app")
	if compiled, _ := lists(); compiled == 0 {
		t.Errorf("a cgo package was loaded without go list -compiled=true")
	}
	a := loaded["example.com/app"]
	if a == nil || len(a.CompiledGoFiles) <= len(a.GoFiles) && !strings.Contains(strings.Join(a.CompiledGoFiles, " "), "go-build") {
		t.Fatalf("the cgo package's compiled files are not cgo's output: %+v", a)
	}
}

// TestImportsRecord: what the driver read of a package's bodyless copies
// (the imports they keep, whether it uses cgo) is kept beside them, and a
// later load reads that record instead of parsing every copy.
func TestImportsRecord(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	xdg := t.TempDir()
	env := append(os.Environ(), "GOPACKAGESDRIVER="+exe, packagesDriverEnv+"=1", "XDG_CACHE_HOME="+xdg)
	cacheDir := filepath.Join(xdg, "apiserver-boot", "bodyless-go")
	_, loaded := declarations(t, &packages.Config{Mode: loadMode, Env: env}, metav1...)
	meta := loaded[metav1[0]]
	path, ok := importsRecordPath(cacheDir, meta.CompiledGoFiles)
	if !ok {
		t.Fatalf("meta/v1's files %v are not copies in %s", meta.CompiledGoFiles, cacheDir)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no imports record for meta/v1: %v", err)
	}
	imports := keys(meta.Imports)
	slices.Sort(imports)
	if want := "no cgo\n" + strings.Join(imports, "\n") + "\n"; string(b) != want {
		t.Fatalf("meta/v1's record:\n%s\nwant:\n%s", b, want)
	}
	// The record is what the next load goes by: one import left out of it
	// is left out of the package.
	dropped := imports[0]
	if err := os.WriteFile(path, []byte("no cgo\n"+strings.Join(imports[1:], "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	roots, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports, Env: env}, metav1[0])
	if err != nil || len(roots) != 1 {
		t.Fatalf("load: %v %v", roots, err)
	}
	if _, ok := roots[0].Imports[dropped]; ok || len(roots[0].Imports) != len(imports)-1 {
		t.Errorf("after the record left out %s, meta/v1 imports %v", dropped, keys(roots[0].Imports))
	}
}
