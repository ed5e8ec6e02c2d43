package generators

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// TestBodylessDeclarationsUnchanged loads apimachinery's meta/v1 and all it
// imports (the standard library included) twice, from the files as they are
// and from their bodyless copies, and compares every package-level object
// and its type: what the generators read must not change.
func TestBodylessDeclarationsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks a few hundred packages twice")
	}
	load := func(bodyless bool) map[string]*packages.Package {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps | packages.NeedTypes | packages.NeedSyntax}
		if bodyless {
			cfg.ParseFile = func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
				out, ok := blankFuncBodies(src)
				if !ok {
					t.Errorf("%s: not blanked", filename)
					out = src
				}
				return parser.ParseFile(fset, filename, out, parser.AllErrors|parser.ParseComments)
			}
		}
		pkgs, err := packages.Load(cfg, "k8s.io/apimachinery/pkg/apis/meta/v1", "k8s.io/apimachinery/pkg/runtime")
		if err != nil {
			t.Fatal(err)
		}
		all := map[string]*packages.Package{}
		packages.Visit(pkgs, nil, func(p *packages.Package) { all[p.PkgPath] = p })
		return all
	}
	want, got := load(false), load(true)
	if len(got) != len(want) || len(want) < 100 {
		t.Fatalf("loaded %d packages bodyless, %d as they are", len(got), len(want))
	}
	objects := 0
	for path, w := range want {
		g := got[path]
		ws, gs := w.Types.Scope(), g.Types.Scope()
		for _, name := range ws.Names() {
			objects++
			wo, gobj := ws.Lookup(name), gs.Lookup(name)
			if gobj == nil {
				t.Errorf("%s.%s is missing from the bodyless copy", path, name)
				continue
			}
			if types.ObjectString(wo, nil) != types.ObjectString(gobj, nil) {
				t.Errorf("%s.%s: %s, bodyless %s", path, name, types.ObjectString(wo, nil), types.ObjectString(gobj, nil))
			}
		}
	}
	t.Logf("%d packages, %d package-level objects compared", len(want), objects)
}

// TestPackagesDriver loads through the driver, served by this test binary
// (TestMain), as generate does through apiserver-boot.
func TestPackagesDriver(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps | packages.NeedTypes | packages.NeedSyntax,
		Env:  append(os.Environ(), "GOPACKAGESDRIVER="+exe, packagesDriverEnv+"=1", "XDG_CACHE_HOME="+cache, "HOME="+cache),
	}
	pkgs, err := packages.Load(cfg, "k8s.io/apimachinery/pkg/apis/meta/v1", "github.com/apiserver-boot/apiserver-boot/pkg/builders")
	if err != nil {
		t.Fatal(err)
	}
	meta, builders := pkgs[0], pkgs[1]
	if len(meta.Errors) > 0 && meta.Errors[0].Kind != packages.TypeError {
		t.Fatal(meta.Errors)
	}
	if meta.Types.Scope().Lookup("ObjectMeta") == nil || len(meta.Syntax) == 0 {
		t.Fatal("meta/v1 has no ObjectMeta or no syntax")
	}
	// Dependencies are read from bodyless copies named as the original...
	for i, f := range meta.CompiledGoFiles {
		if !strings.HasPrefix(f, cache) || filepath.Base(f) != filepath.Base(meta.GoFiles[i]) {
			t.Fatalf("meta/v1 file %s is not a copy in the cache %s", f, cache)
		}
		for _, d := range meta.Syntax[i].Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
				t.Fatalf("%s: %s has a body", f, fd.Name.Name)
			}
		}
	}
	// ...and the main module's packages as they are.
	for _, f := range builders.CompiledGoFiles {
		if strings.HasPrefix(f, cache) {
			t.Fatalf("main module file %s was copied", f)
		}
	}
}

func TestMain(m *testing.M) {
	ServePackagesDriver()
	os.Exit(m.Run())
}
