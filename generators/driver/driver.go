// Package driver is the go/packages driver through which generate loads
// packages with the function bodies of immutable dependencies left out.
package driver

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"golang.org/x/tools/go/packages"
)

// Generate's package load is dominated by parsing and type-checking every
// dependency from source (k8s.io/apimachinery, the standard library...):
// gengo loads with NeedDeps|NeedSyntax, and its parser offers no hook into
// that load. Generators read declarations, their comments and types, never
// function bodies. So the load goes through a go/packages driver (the
// GOPACKAGESDRIVER protocol) served by this same binary: it asks `go list`
// as usual, and points the compiled files of every package of the module
// cache and GOROOT (trees that never change under a path; the main module,
// replaced local folders and vendor/ are read as they are) at copies whose
// function bodies (and package-level literals) are
// blanked, without the imports only those used: the packages that only
// bodies imported are then not loaded at all. Line numbers and file names are
// kept, so comments attach to declarations as before (gengo reads markers by
// line, and package tags from files named doc.go). The copies are cached by
// path, size and modification time; module and GOROOT files do not change
// under a path, and anything else that does gets a new key. docs/design.md
// has the measurements.

// packagesDriverEnv marks a process started as the packages driver.
const packagesDriverEnv = "APISERVER_BOOT_PACKAGES_DRIVER"

// driverExecutable is the binary serving the driver; empty loads without it.
var driverExecutable string

// EnablePackagesDriver makes generate load dependencies through this
// executable (see ServePackagesDriver), which must call ServePackagesDriver
// first thing in main.
func EnablePackagesDriver() {
	if exe, err := os.Executable(); err == nil {
		driverExecutable = exe
	}
}

// LoadEnv is the environment of the universe load.
func LoadEnv() []string {
	if driverExecutable == "" {
		return nil // os.Environ(), the go list driver
	}
	if d := os.Getenv("GOPACKAGESDRIVER"); d != "" && d != "off" {
		return nil // the user's own driver (Bazel's, say) knows their build
	}
	return append(os.Environ(), "GOPACKAGESDRIVER="+driverExecutable, packagesDriverEnv+"=1")
}

// ServePackagesDriver answers one go/packages driver request and exits when
// this process was started as the driver; otherwise it returns at once.
func ServePackagesDriver() {
	if os.Getenv(packagesDriverEnv) != "1" {
		return
	}
	resp, err := servePackagesDriver(os.Args[1:])
	if err != nil {
		// go/packages then runs go list itself: slower, never wrong.
		fmt.Fprintln(os.Stderr, "apiserver-boot packages driver:", err)
		resp = &packages.DriverResponse{NotHandled: true}
	}
	if err := json.NewEncoder(os.Stdout).Encode(resp); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

func servePackagesDriver(patterns []string) (*packages.DriverResponse, error) {
	var req packages.DriverRequest
	if err := json.NewDecoder(os.Stdin).Decode(&req); err != nil {
		return nil, fmt.Errorf("reading the request: %w", err)
	}
	if resp := answerFromPreload(&req, patterns); resp != nil {
		return resp, nil
	}
	return answer(&req, "", patterns, nil)
}

// answer runs a driver request in dir ("" for the working directory). With
// imports non-nil, it records there every listed package's imports (by ID)
// as go list gave them, before those only function bodies used are dropped.
func answer(req *packages.DriverRequest, dir string, patterns []string, imports map[string][]string) (*packages.DriverResponse, error) {
	cacheDir, err := os.UserCacheDir()
	if err != nil {
		return nil, err
	}
	cacheDir = filepath.Join(cacheDir, "apiserver-boot", "bodyless-go")
	pruneCache(cacheDir, time.Now())
	env := append([]string{"GOPACKAGESDRIVER=off"}, goListEnv(req.Env)...)
	arch := runtime.GOARCH
	for _, e := range req.Env {
		if v, ok := strings.CutPrefix(e, "GOARCH="); ok && v != "" {
			arch = v
		}
	}
	// Compiled files asked for are to be parsed (controller-tools' loader
	// parses them itself, asking for no syntax): they are copies too.
	parsed := req.Mode&(packages.NeedSyntax|packages.NeedTypes|packages.NeedTypesInfo|packages.NeedCompiledGoFiles) != 0
	// The module cache and GOROOT, asked of the go command while go list
	// runs: only a load that parses needs them.
	immutable := func() ([]string, error) { return nil, nil }
	if parsed && len(req.Overlay) == 0 {
		immutable = sync.OnceValues(func() ([]string, error) { return immutableRoots(dir, env) })
		go immutable()
	}
	l := &driverLoad{req: req, dir: dir, env: env, patterns: patterns, cacheDir: cacheDir, parsed: parsed, immutable: immutable, imports: imports}
	// go list -compiled costs the build's cache keys and cgo's processing,
	// and only packages with cgo files have compiled files other than their
	// Go files. So go list is asked for the Go files first; if a package
	// the load keeps has cgo files, it is asked again for compiled files.
	pkgs, cgo, err := l.run(false)
	if err == nil && parsed && cgo {
		pkgs, _, err = l.run(true)
	}
	if err != nil {
		return nil, err
	}
	pkgs.Arch = arch
	return pkgs, nil
}

// goListEnv is the environment of a request without the variables that
// start the driver (go list must not come back to it).
func goListEnv(env []string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, "GOPACKAGESDRIVER=") && !strings.HasPrefix(e, packagesDriverEnv+"=") && !strings.HasPrefix(e, preloadEnv+"=") {
			out = append(out, e)
		}
	}
	return out
}

// driverLoad is one request to the packages driver.
type driverLoad struct {
	req       *packages.DriverRequest
	dir       string
	env       []string
	patterns  []string
	cacheDir  string
	parsed    bool
	immutable func() ([]string, error)
	imports   map[string][]string // recorded when not nil (answer)
}

// run asks go list for the packages (their compiled files if compiled, else
// their Go files as the files to parse), blanks the bodies of the immutable
// ones and drops what only bodies imported. It tells whether a package of
// the answer has cgo files.
func (l *driverLoad) run(compiled bool) (*packages.DriverResponse, bool, error) {
	// The go list part of the request; type-checking is the caller's.
	mode := l.req.Mode & (packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports | packages.NeedDeps | packages.NeedModule)
	if l.parsed {
		mode |= packages.NeedModule
		if compiled {
			mode |= packages.NeedCompiledGoFiles
		} else {
			// go/packages then gives the Go files (cgo's included) as compiled files.
			mode = mode&^packages.NeedCompiledGoFiles | packages.NeedFiles
		}
	}
	roots, err := packages.Load(&packages.Config{
		Mode: mode,
		Dir:  l.dir, Env: l.env, BuildFlags: l.req.BuildFlags, Tests: l.req.Tests, Overlay: l.req.Overlay,
	}, l.patterns...)
	if err != nil {
		return nil, false, err
	}
	resp := &packages.DriverResponse{Compiler: "gc"}
	for _, p := range roots {
		resp.Roots = append(resp.Roots, p.ID)
	}
	packages.Visit(roots, nil, func(p *packages.Package) {
		if l.imports != nil {
			l.imports[p.ID] = nil
			for _, imp := range p.Imports {
				l.imports[p.ID] = append(l.imports[p.ID], imp.ID)
			}
		}
		if l.parsed && !compiled && p.PkgPath != "unsafe" {
			// What go list -compiled gives a package without cgo files
			// (go/packages drops the field when it was not asked for).
			p.CompiledGoFiles = slices.Clone(p.GoFiles)
		}
		resp.Packages = append(resp.Packages, p)
	})

	immutable, err := l.immutable()
	if err != nil {
		return nil, false, err
	}
	blanked, blankedCgo := l.blankAll(resp.Packages, immutable)
	resp.Packages = nil
	cgo := false
	packages.Visit(roots, nil, func(p *packages.Package) {
		resp.Packages = append(resp.Packages, p)
		if !compiled && !cgo {
			// A blanked package's cgo is known; the others' files are read.
			cgo = blankedCgo[p] || !blanked[p] && usesCgo(p.GoFiles)
		}
	})
	if !l.parsed {
		// Nothing is parsed: no file stands for another.
		cgo = false
	}
	return resp, cgo, nil
}

// blankAll blanks the bodies of the packages from immutable trees, on every
// core, and tells which it blanked and which of those use cgo.
func (l *driverLoad) blankAll(pkgs []*packages.Package, immutable []string) (blanked, blankedCgo map[*packages.Package]bool) {
	var mu sync.Mutex
	blanked, blankedCgo = map[*packages.Package]bool{}, map[*packages.Package]bool{}
	work := make(chan *packages.Package)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				cgo := blankBodies(l.cacheDir, p)
				mu.Lock()
				blanked[p], blankedCgo[p] = true, cgo
				mu.Unlock()
			}
		}()
	}
	for _, p := range pkgs {
		// Only trees that never change under a path (the module cache and
		// GOROOT) are blanked; the main module, replaced local folders and
		// vendor/ are read as they are.
		if l.parsed && len(l.req.Overlay) == 0 && (p.Module == nil || !p.Module.Main) && underAny(p.GoFiles, immutable) {
			work <- p
		}
	}
	close(work)
	wg.Wait()
	return blanked, blankedCgo
}

// usesCgo tells whether one of the Go files imports "C" (or cannot be
// read: then the compiled files are asked for, as they always were).
func usesCgo(files []string) bool {
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return true
		}
		if !bytes.Contains(src, []byte(`"C"`)) {
			continue
		}
		imports := map[string]bool{}
		if err := importsOf(f, imports); err != nil || imports["C"] {
			return true
		}
	}
	return false
}

// blankBodies points the compiled files of p at copies without function
// bodies, and drops the imports only function bodies used (they are then
// not loaded at all). It tells whether p's Go files use cgo.
func blankBodies(cacheDir string, p *packages.Package) (cgo bool) {
	names := map[string]string{}
	for path, imp := range p.Imports {
		names[path] = imp.Name
	}
	files := slices.Clone(p.CompiledGoFiles)
	for i, f := range files {
		p.CompiledGoFiles[i] = bodylessCopy(cacheDir, f, names)
	}
	kept, cgo, ok := readImportsRecord(cacheDir, p.CompiledGoFiles)
	if !ok {
		kept = map[string]bool{}
		for i, f := range p.CompiledGoFiles {
			if err := importsOf(f, kept); err != nil {
				kept = nil // keep every import, and read the files after it as they are
				copy(p.CompiledGoFiles[i+1:], files[i+1:])
				break
			}
		}
		cgo = usesCgo(p.GoFiles)
		if kept != nil {
			writeImportsRecord(cacheDir, p.CompiledGoFiles, kept, cgo)
		}
	}
	for path := range p.Imports {
		if kept != nil && !kept[path] {
			delete(p.Imports, path)
		}
	}
	return cgo
}

// A package's imports record keeps what blankBodies read from its bodyless
// copies (the imports they kept; whether its Go files use cgo), so that a
// load reads one small file per package instead of parsing every copy's
// imports. Keyed by the copies' paths, which change with any file's path,
// size or modification time.
func importsRecordPath(cacheDir string, copies []string) (string, bool) {
	for _, c := range copies {
		if !strings.HasPrefix(c, cacheDir+string(filepath.Separator)) {
			return "", false // a file read as it is: not immutable
		}
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "imports\x00%d\x00%s", bodylessVersion, strings.Join(copies, "\x00")))
	key := hex.EncodeToString(sum[:16])
	return filepath.Join(cacheDir, key[:2], key, "imports"), len(copies) > 0
}

func readImportsRecord(cacheDir string, copies []string) (kept map[string]bool, cgo, ok bool) {
	path, ok := importsRecordPath(cacheDir, copies)
	if !ok {
		return nil, false, false
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, false
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 2 || lines[len(lines)-1] != "" || (lines[0] != "cgo" && lines[0] != "no cgo") {
		return nil, false, false
	}
	touch(filepath.Dir(path))
	kept = map[string]bool{}
	for _, l := range lines[1 : len(lines)-1] {
		kept[l] = true
	}
	return kept, lines[0] == "cgo", true
}

func writeImportsRecord(cacheDir string, copies []string, kept map[string]bool, cgo bool) {
	path, ok := importsRecordPath(cacheDir, copies)
	if !ok {
		return
	}
	var b strings.Builder
	if cgo {
		b.WriteString("cgo\n")
	} else {
		b.WriteString("no cgo\n")
	}
	for _, imp := range slices.Sorted(maps.Keys(kept)) {
		b.WriteString(imp + "\n")
	}
	_ = files.WriteAtomic(path, []byte(b.String()), 0o600)
}

// immutableRoots are the module cache and GOROOT of the go command the load uses.
func immutableRoots(dir string, env []string) ([]string, error) {
	cmd := exec.Command("go", "env", "GOMODCACHE", "GOROOT")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go env: %w", err)
	}
	var roots []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			roots = append(roots, filepath.Clean(l)+string(filepath.Separator))
		}
	}
	return roots, nil
}

// underAny tells whether every file (at least one) is under one of the roots.
func underAny(files, roots []string) bool {
	for _, f := range files {
		in := false
		for _, r := range roots {
			in = in || strings.HasPrefix(f, r)
		}
		if !in {
			return false
		}
	}
	return len(files) > 0
}

// importsOf adds the import paths of a Go file to paths.
func importsOf(file string, paths map[string]bool) error {
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.ImportsOnly)
	if err != nil {
		return err
	}
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			return err
		}
		paths[p] = true
	}
	return nil
}

// bodylessVersion changes with what blankFuncBodies does, so that no copy
// made by an older rule is reused.
const bodylessVersion = 5

// bodylessCopy returns the cached copy of a Go file with its function bodies
// blanked, creating it if needed, or the file itself when that fails.
func bodylessCopy(cacheDir, file string, names map[string]string) string {
	info, err := os.Stat(file)
	if err != nil {
		return file
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s\x00%d\x00%d", bodylessVersion, file, info.Size(), info.ModTime().UnixNano()))
	key := hex.EncodeToString(sum[:16])
	// The copy keeps the file's name: gengo reads package tags from doc.go.
	dir := filepath.Join(cacheDir, key[:2], key)
	copyPath := filepath.Join(dir, filepath.Base(file))
	if _, err := os.Stat(copyPath); err == nil {
		touch(dir)
		return copyPath
	}
	src, err := os.ReadFile(file)
	if err != nil {
		return file
	}
	out, ok := blankFuncBodies(src)
	if ok {
		out, ok = dropUnusedImports(out, names)
	}
	if !ok {
		return file
	}
	// Written whole and renamed, so that a concurrent run never reads half a file.
	if err := files.WriteAtomic(copyPath, out, 0o600); err != nil {
		return file
	}
	return copyPath
}

// Copies are keyed by path, size and modification time, so an upgraded
// dependency leaves its old copies behind: entries unused for pruneAge are
// removed, at most once a day. A hit marks its entry used (at most daily).
const pruneAge = 30 * 24 * time.Hour

func touch(dir string) {
	if st, err := os.Stat(dir); err == nil && time.Since(st.ModTime()) > 24*time.Hour {
		now := time.Now()
		_ = os.Chtimes(dir, now, now)
	}
}

// pruneCache removes the cache entries unused for pruneAge, if it has not
// done so in the last day.
func pruneCache(cacheDir string, now time.Time) {
	stamp := filepath.Join(cacheDir, ".pruned")
	if st, err := os.Stat(stamp); err == nil && now.Sub(st.ModTime()) < 24*time.Hour {
		return
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return
	}
	if err := os.WriteFile(stamp, nil, 0o644); err != nil {
		return
	}
	shards, _ := os.ReadDir(cacheDir)
	for _, shard := range shards {
		if !shard.IsDir() {
			continue
		}
		entries, _ := os.ReadDir(filepath.Join(cacheDir, shard.Name()))
		for _, e := range entries {
			path := filepath.Join(cacheDir, shard.Name(), e.Name())
			if st, err := os.Stat(path); err == nil && now.Sub(st.ModTime()) > pruneAge {
				_ = os.RemoveAll(path)
			}
		}
	}
}

// blankFuncBodies turns `func f() T { ... }` into `func f() T` followed by the
// body's newlines: a declaration without a body, as for assembly functions,
// which go/types checks without complaint, and every later line where it was.
// Package-level variables initialised by a composite literal (Unicode tables,
// descriptors) lose the literal the same way, keeping its type: `var x = T{...}`
// becomes `var x T`, `var x = &T{...}` `var x *T`, and `var x T = ...` `var x T`.
func blankFuncBodies(src []byte) ([]byte, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	sp := &splice{src: src}

	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			switch {
			case d.Body == nil:
			case d.Recv == nil && d.Name.Name == "init":
				// go/types wants a body for init: an empty one.
				sp.cut(off(d.Body.Lbrace)+1, off(d.Body.Rbrace), "")
			case generic(d):
				// ... and for generic functions: one that panics, a terminating
				// statement whatever the results.
				sp.cut(off(d.Body.Lbrace)+1, off(d.Body.Rbrace), "panic(0)")
			default:
				sp.cut(off(d.Body.Lbrace), off(d.Body.Rbrace)+1, "")
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, spec := range d.Specs {
				vs := spec.(*ast.ValueSpec)
				if len(vs.Names) != 1 || len(vs.Values) != 1 || vs.Names[0].Name == "_" {
					continue
				}
				val := vs.Values[0]
				if vs.Type != nil {
					sp.cut(off(vs.Type.End()), off(val.End()), "")
					continue
				}
				ptr := ""
				if u, ok := val.(*ast.UnaryExpr); ok && u.Op == token.AND {
					val, ptr = u.X, "*"
				}
				lit, ok := val.(*ast.CompositeLit)
				if !ok || lit.Type == nil {
					continue
				}
				typ := string(src[off(lit.Type.Pos()):off(lit.Type.End())])
				if arr, ok := lit.Type.(*ast.ArrayType); ok {
					if _, ok := arr.Len.(*ast.Ellipsis); ok {
						// [...]T{a, b}: the length is the number of elements, unless keyed.
						for _, e := range lit.Elts {
							if _, keyed := e.(*ast.KeyValueExpr); keyed {
								typ = ""
							}
						}
						if typ != "" {
							typ = fmt.Sprintf("[%d]%s", len(lit.Elts), src[off(arr.Elt.Pos()):off(arr.Elt.End())])
						}
					}
				}
				if typ == "" {
					continue
				}
				sp.cut(off(vs.Names[0].End()), off(vs.Values[0].End()), " "+ptr+typ)
			}
		}
	}
	return sp.done(), true
}

// splice rebuilds src with ranges replaced, in order, each keeping the
// newlines it held so that every later line stays where it was.
type splice struct {
	src, out []byte
	last     int
}

// cut replaces src[start:end] by text and the newlines it held.
// generic tells whether a function has type parameters, its own or its
// receiver's.
func generic(d *ast.FuncDecl) bool {
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		return true
	}
	if d.Recv == nil || len(d.Recv.List) == 0 {
		return false
	}
	recv := d.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	switch recv.(type) {
	case *ast.IndexExpr, *ast.IndexListExpr:
		return true
	}
	return false
}

func (s *splice) cut(start, end int, text string) {
	s.out = append(s.out, s.src[s.last:start]...)
	s.out = append(s.out, text...)
	for _, c := range s.src[start:end] {
		if c == '\n' {
			s.out = append(s.out, c)
		}
	}
	s.last = end
}

func (s *splice) done() []byte { return append(s.out, s.src[s.last:]...) }

// dropUnusedImports removes the imports a bodyless file no longer refers to
// (names maps import paths to package names), and blank imports, which
// matter to a build, not to types. Dot imports stay.
func dropUnusedImports(src []byte, names map[string]string) ([]byte, bool) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		return nil, false
	}
	used := map[string]bool{}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.IMPORT {
			continue
		}
		ast.Inspect(d, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					used[id.Name] = true
				}
			}
			return true
		})
	}
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	sp := &splice{src: src}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.IMPORT {
			continue
		}
		var drop []*ast.ImportSpec
		for _, spec := range gd.Specs {
			is := spec.(*ast.ImportSpec)
			path, err := strconv.Unquote(is.Path.Value)
			if err != nil {
				return nil, false
			}
			name, known := names[path]
			if is.Name != nil {
				name, known = is.Name.Name, true
			}
			if !known || name == "." || (name != "_" && used[name]) {
				continue
			}
			drop = append(drop, is)
		}
		if len(drop) == len(gd.Specs) {
			sp.cut(off(gd.Pos()), off(gd.End()), "")
			continue
		}
		for _, is := range drop {
			start := is.Pos()
			if is.Doc != nil {
				start = is.Doc.Pos()
			}
			sp.cut(off(start), off(is.End()), "")
		}
	}
	return sp.done(), true
}
