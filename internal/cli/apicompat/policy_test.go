package apicompat

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"testing"

	"golang.org/x/exp/apidiff"
)

// fixture type-checks src as the package example.com/fx/pkg/p.
func fixture(t *testing.T, src string) *types.Package {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "p.go", "package p\n\n"+src, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := (&types.Config{Importer: importer.Default()}).Check("example.com/fx/pkg/p", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// fixtureBase is the API of release v0.3.2 (or v1.2.3) in the cases below.
const fixtureBase = `
type Config struct{ Name string }

func Main(c Config) int { return 0 }

func Redact(s string) string { return s }
`

// TestCompareAndCheck: apidiff's verdict on small packages, and the
// version policy on it: an added func is compatible (a patch may carry
// it); a removed func, or a changed signature or field, is not: a new
// minor while the major is 0, a new major from v1 on.
func TestCompareAndCheck(t *testing.T) {
	cases := []struct {
		name, src    string
		incompatible bool
	}{
		{"unchanged", fixtureBase, false},
		{"func added", fixtureBase + "func Version() string { return \"\" }\n", false},
		{"field added", strings.Replace(fixtureBase, "Name string", "Name string; Port int", 1), false},
		{"func removed", strings.Replace(fixtureBase, "func Redact(s string) string { return s }", "", 1), true},
		{"signature changed", strings.Replace(fixtureBase, "func Main(c Config) int", "func Main(c *Config) int", 1), true},
		{"field removed", strings.Replace(fixtureBase, "Name string", "", 1), true},
	}
	old := []*types.Package{fixture(t, fixtureBase)}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Compare("example.com/fx", old, []*types.Package{fixture(t, tc.src)})
			if got := len(Incompatible(r)) > 0; got != tc.incompatible {
				t.Fatalf("incompatible: %v, want %v:\n%s", got, tc.incompatible, r)
			}
			// Patches and pre-releases of patches carry compatible changes only.
			for _, next := range []string{"v0.3.3", "v0.3.3-rc.1"} {
				if err := Check("v0.3.2", next, r); (err != nil) != tc.incompatible {
					t.Errorf("v0.3.2 -> %s: %v (incompatible %v)", next, err, tc.incompatible)
				}
			}
			if err := Check("v1.2.3", "v1.3.0", r); (err != nil) != tc.incompatible {
				t.Errorf("v1.2.3 -> v1.3.0: %v (incompatible %v)", err, tc.incompatible)
			}
			// A new minor in v0, a new major from v1, carries anything.
			for _, step := range [][2]string{{"v0.3.2", "v0.4.0"}, {"v0.3.2", "v0.4.0-rc.1"}, {"v0.3.2", "v1.0.0"}, {"v1.2.3", "v2.0.0"}} {
				if err := Check(step[0], step[1], r); err != nil {
					t.Errorf("%s -> %s: %v", step[0], step[1], err)
				}
			}
		})
	}
}

// TestCheckRefusal: a refusal names the change, the version to release
// instead and the other way out; a version that does not follow the last
// release is refused whatever changed.
func TestCheckRefusal(t *testing.T) {
	old := []*types.Package{fixture(t, fixtureBase)}
	removed := Compare("example.com/fx", old, []*types.Package{fixture(t, strings.Replace(fixtureBase, "func Redact(s string) string { return s }", "", 1))})
	err := Check("v0.3.2", "v0.3.3", removed)
	if err == nil {
		t.Fatal("a patch removing Redact was allowed")
	}
	for _, want := range []string{"Redact: removed", "v0.4.0 or later", "restore"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal %q does not say %q", err, want)
		}
	}
	for _, next := range []string{"v0.3.2", "v0.3.1", "v0.3.2-rc.1", "not-a-version", "v0.3.3+build"} {
		if err := Check("v0.3.2", next, apidiff.Report{}); err == nil {
			t.Errorf("v0.3.2 -> %s allowed", next)
		}
	}
}

// TestRequired: the lowest version that may follow a release.
func TestRequired(t *testing.T) {
	breaking := apidiff.Report{Changes: []apidiff.Change{{Message: "F: removed"}}}
	adding := apidiff.Report{Changes: []apidiff.Change{{Message: "G: added", Compatible: true}}}
	for _, tc := range []struct {
		last string
		r    apidiff.Report
		want string
	}{
		{"v0.3.2", apidiff.Report{}, "v0.3.3"},
		{"v0.3.2", adding, "v0.3.3"},
		{"v0.3.2", breaking, "v0.4.0"},
		{"v0.9.9", breaking, "v0.10.0"},
		{"v1.2.3", adding, "v1.2.4"},
		{"v1.2.3", breaking, "v2.0.0"},
	} {
		got, err := Required(tc.last, tc.r)
		if err != nil || got != tc.want {
			t.Errorf("Required(%s, %v) = %s, %v; want %s", tc.last, tc.r.Changes, got, err, tc.want)
		}
	}
}

// TestAPI: the golden lines of a small package: declarations of every
// kind, fields, interface methods and methods, without parameter names,
// nothing unexported.
func TestAPI(t *testing.T) {
	p := fixture(t, `
import "time"

const Answer = 42
var Default Config
type Config struct {
	Name string
	hidden int
	Timeout time.Duration
	Hook func(name string) error
}
type config = Config
type Alias = Config
type Mode int
type Runner interface {
	Run(ctx string, n ...int) (bool, error)
	stop()
}
type List[T any] []T
func (l List[T]) Len() int { return len(l) }
func (c *Config) Validate(strict bool) error { return nil }
func (c Config) private() {}
func New[T comparable](v T, opts ...string) *List[T] { return nil }
`)
	want := []string{
		"pkg/p, const Answer untyped int = 42",
		"pkg/p, func New[T comparable](T, ...string) *List[T]",
		"pkg/p, method (*Config) Validate(bool) error",
		"pkg/p, method (List[T]) Len() int",
		"pkg/p, type Alias = Config",
		"pkg/p, type Config struct",
		"pkg/p, type Config struct, Hook func(string) error",
		"pkg/p, type Config struct, Name string",
		"pkg/p, type Config struct, Timeout time.Duration",
		"pkg/p, type List[T any] []T",
		"pkg/p, type Mode int",
		"pkg/p, type Runner interface",
		"pkg/p, type Runner interface, Run(string, ...int) (bool, error)",
		"pkg/p, type Runner interface, unexported methods",
		"pkg/p, var Default Config",
	}
	got := API("example.com/fx", []*types.Package{p})
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("API:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
