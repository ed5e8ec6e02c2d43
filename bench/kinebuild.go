package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/tools/imports"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
)

// Item 10, second part: the generated apiserver built as it is and built
// without kine. pkg/internal/storage (the apiserver's storage backends)
// imports kine unconditionally (no build tag), so the build without kine
// replaces, through `go build -overlay`, pkg/internal/storage/kine.go by its
// options, flags and checks without kine (startKine then fails) and
// kine_sqlite.go by nothing: the same apiserver, every other file the same.

// kineBuild builds the serving project's apiserver with and without kine,
// alternating, and adds the size and build time rows.
func (b *bench) kineBuild(p *servingProject) error {
	out, err := proc.Command(b.ctx, p.dir, nil, "go", "list", "-f", "{{.Dir}}", "github.com/apiserver-boot/apiserver-boot/pkg/internal/storage")
	if err != nil {
		return err
	}
	overlay, err := b.noKineOverlay(strings.TrimSpace(out))
	if err != nil {
		return err
	}
	bins := map[bool]string{true: filepath.Join(b.tmp, "apiserver-kine"), false: filepath.Join(b.tmp, "apiserver-nokine")}
	took := map[bool][]time.Duration{}
	// A first untimed round compiles what the overlay changes; then both
	// builds find every package in the build cache and link.
	for i := -1; i < b.runs; i++ {
		for _, kine := range []bool{true, false} {
			args := []string{"build", "-o", bins[kine], "-ldflags=-w"} // as run local links
			if !kine {
				args = append(args, "-overlay", overlay)
			}
			// go build does nothing when the output is up to date: link anew.
			if err := os.Remove(bins[kine]); err != nil && !os.IsNotExist(err) {
				return err
			}
			d, _, err := proc.TimedCommand(b.ctx, p.dir, nil, "go", append(args, "./cmd/apiserver")...)
			if err != nil {
				return err
			}
			if i >= 0 {
				took[kine] = append(took[kine], d)
			}
		}
	}
	size := map[bool]float64{}
	for kine, bin := range bins {
		m, err := proc.Command(b.ctx, b.tmp, nil, "go", "version", "-m", bin)
		if err != nil {
			return err
		}
		if strings.Contains(m, "github.com/k3s-io/kine") != kine {
			return fmt.Errorf("%s: kine linked: %v, want %v", bin, !kine, kine)
		}
		st, err := os.Stat(bin)
		if err != nil {
			return err
		}
		size[kine] = float64(st.Size()) / 1e6
	}
	b.add(row{Item: "10", Measure: "storage: binary size of the generated apiserver, with kine", Value: fmt.Sprintf("%.1f MB", size[true]),
		Ref: fmt.Sprintf("%.1f MB (without kine)", size[false]), Ratio: fmt.Sprintf("%.2fx", size[true]/size[false])})
	with, without := median(took[true]), median(took[false])
	b.add(row{Item: "10", Measure: "storage: go build of the generated apiserver, warm build cache, with kine", Value: secs(with),
		Ref: secs(without) + " (without kine)", Ratio: fmt.Sprintf("%.2fx", ratio(with, without))})
	b.note("10", "builds: `go build -o BIN -ldflags=-w ./cmd/apiserver` in the serving project (the environment's CGO_ENABLED and GOFLAGS, and without DWARF, as run local builds), with kine as generated and without it through `-overlay` (pkg/internal/storage/kine.go reduced to its options and flags, the other kine_*.go files left out); `go version -m` shows github.com/k3s-io/kine in the first binary only. Runs alternate after one untimed round, so both find every package compiled and the time is mostly the link (the output removed before each build, which go build would otherwise leave as up to date): with kine %s, without %s. What kine adds to a first build with an empty cache (its packages, pgx, the MySQL driver, modernc.org/sqlite and modernc.org/libc) is not measured here: docs/storage.md gives a measurement by hand", millis(took[true]), millis(took[false]))
	return nil
}

// noKineOverlay writes the stand-in of kine.go and the overlay file of
// `go build -overlay` into b.tmp, and returns the overlay file.
func (b *bench) noKineOverlay(pkgDir string) (string, error) {
	src, err := noKineSource(filepath.Join(pkgDir, "kine.go"))
	if err != nil {
		return "", err
	}
	stub := filepath.Join(b.tmp, "nokine", "kine.go")
	if err := os.MkdirAll(filepath.Dir(stub), 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(stub, src, 0o644); err != nil {
		return "", err
	}
	replace := map[string]string{filepath.Join(pkgDir, "kine.go"): stub}
	// The other kine files (its SQLite dialect, the compaction floor) are
	// left out: only kine.go's stand-in reaches them.
	others, err := filepath.Glob(filepath.Join(pkgDir, "kine_*.go"))
	if err != nil {
		return "", err
	}
	for _, o := range others {
		if !strings.HasSuffix(o, "_test.go") {
			replace[o] = ""
		}
	}
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		return "", err
	}
	path := filepath.Join(b.tmp, "nokine", "overlay.json")
	return path, os.WriteFile(path, overlay, 0o644)
}

// noKineSource is kine.go with its types and the functions that do not
// reach kine (options, flags, checks of the endpoint's form, kine.Stop);
// startKine returns an error; unused imports are dropped.
func noKineSource(path string) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	keep := map[string]bool{"AddFlags": true, "ReadEndpointFile": true, "Validate": true, "datastoreError": true, "Stop": true, "startKine": true}
	kine := kineImports(f)
	var decls []ast.Decl
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok {
			if d = withoutKineTypes(withoutBlankImports(d), kine); d != nil {
				decls = append(decls, d)
			}
			continue
		}
		if !keep[fn.Name.Name] {
			continue
		}
		if fn.Name.Name == "startKine" {
			body, err := parser.ParseExpr(`func() (*kine, error) { return nil, errors.New("--datastore-endpoint: this apiserver was built without kine") }`)
			if err != nil {
				return nil, err
			}
			fn.Body = body.(*ast.FuncLit).Body
		}
		decls = append(decls, fn)
	}
	f.Decls, f.Comments = decls, nil
	var buf bytes.Buffer
	if err := printer.Fprint(&buf, fset, f); err != nil {
		return nil, err
	}
	// imports.Process drops the imports nothing uses any more and adds errors.
	src, err := imports.Process(path, buf.Bytes(), nil)
	if err != nil {
		return nil, fmt.Errorf("kine.go without kine: %w\n%s", err, buf.String())
	}
	return src, nil
}

// withoutBlankImports drops the imports for side effects (kine's drivers)
// from an import declaration.
func withoutBlankImports(d ast.Decl) ast.Decl {
	g, ok := d.(*ast.GenDecl)
	if !ok || g.Tok != token.IMPORT {
		return d
	}
	var specs []ast.Spec
	for _, s := range g.Specs {
		if is := s.(*ast.ImportSpec); is.Name == nil || is.Name.Name != "_" {
			specs = append(specs, s)
		}
	}
	g.Specs = specs
	return g
}

// kineImports are the names kine's packages are imported as in f.
func kineImports(f *ast.File) map[string]bool {
	names := map[string]bool{}
	for _, imp := range f.Imports {
		p := strings.Trim(imp.Path.Value, `"`)
		if !strings.HasPrefix(p, "github.com/k3s-io/kine/") {
			continue
		}
		if imp.Name != nil {
			names[imp.Name.Name] = true
		} else {
			names[path.Base(p)] = true
		}
	}
	return names
}

// withoutKineTypes drops from a type declaration the types built on kine's
// (a wrapper of its backend, whose methods are left out with it); nil when
// none is left.
func withoutKineTypes(d ast.Decl, kine map[string]bool) ast.Decl {
	g, ok := d.(*ast.GenDecl)
	if !ok || g.Tok != token.TYPE {
		return d
	}
	var specs []ast.Spec
	for _, sp := range g.Specs {
		uses := false
		ast.Inspect(sp, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && kine[x.Name] {
					uses = true
				}
			}
			return !uses
		})
		if !uses {
			specs = append(specs, sp)
		}
	}
	if len(specs) == 0 {
		return nil
	}
	g.Specs = specs
	return g
}
