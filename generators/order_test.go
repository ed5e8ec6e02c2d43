package generators

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"
)

// TestOrderUniverse: the order generators iterate in (the universe sorted by
// their default namer's names) is the one gengo's Orderer gives: every type,
// function, variable and constant, by the same names. With the raw namer
// (package-qualified, so no two names tie) the two orders are identical; with
// a public namer, which drops the package, the names come in the same order.
func TestOrderUniverse(t *testing.T) {
	u := types.Universe{}
	for _, pkg := range []string{"example.com/b", "example.com/a", "k8s.io/apimachinery/pkg/apis/meta/v1"} {
		for i := range 7 {
			u.Type(types.Name{Package: pkg, Name: fmt.Sprintf("T%d", (i*5)%7)}).Kind = types.Struct
			u.Function(types.Name{Package: pkg, Name: fmt.Sprintf("F%d", (i*3)%7)}).Kind = types.Func
			u.Variable(types.Name{Package: pkg, Name: fmt.Sprintf("V%d", i)}).Kind = types.DeclarationOf
			u.Constant(types.Name{Package: pkg, Name: fmt.Sprintf("C%d", 6-i)}).Kind = types.DeclarationOf
		}
	}
	names := func(n namer.Namer, list []*types.Type) []string {
		var out []string
		for _, t := range list {
			out = append(out, n.Name(t))
		}
		return out
	}
	raw := namer.NewRawNamer("", nil)
	want := (&namer.Orderer{Namer: raw}).OrderUniverse(u)
	got := orderUniverse(raw, u)
	if len(got) != 3*7*4 || !slices.Equal(got, want) {
		t.Errorf("raw namer: order %v, want %v", names(raw, got), names(raw, want))
	}
	public := namer.NewPublicNamer(0)
	if g, w := names(public, orderUniverse(public, u)), names(public, (&namer.Orderer{Namer: public}).OrderUniverse(u)); !slices.Equal(g, w) || !slices.IsSorted(g) {
		t.Errorf("public namer: names in order %v, want %v", g, w)
	}
}

// TestEnumsOnly: the universe openapi-gen gets keeps, of the types and
// constants, exactly the enums (aliases of string marked +enum, in any
// package), their values and the builtin types, and shares the rest with
// the universe.
func TestEnumsOnly(t *testing.T) {
	u := types.Universe{}
	str := u.Type(types.Name{Name: "string"})
	str.Kind = types.Builtin
	enum := u.Type(types.Name{Package: "example.com/a", Name: "Zone"})
	enum.Kind, enum.Underlying, enum.CommentLines = types.Alias, str, []string{"Zone is a zone.", "+enum"}
	plain := u.Type(types.Name{Package: "example.com/a", Name: "Label"})
	plain.Kind, plain.Underlying = types.Alias, str
	// Marked, but not an alias of string.
	number := u.Type(types.Name{Package: "example.com/a", Name: "Count"})
	number.Kind, number.Underlying, number.CommentLines = types.Alias, u.Type(types.Name{Name: "int"}), []string{"+enum"}
	constant := func(pkg, name string, of *types.Type) *types.Type {
		c := u.Constant(types.Name{Package: pkg, Name: name})
		c.Kind, c.Underlying = types.DeclarationOf, of
		return c
	}
	utc := constant("example.com/a", "UTC", enum)
	cet := constant("example.com/b", "CET", enum) // an enum's value in another package
	constant("example.com/a", "Default", plain)
	constant("syscall", "O_RDONLY", u.Type(types.Name{Name: "int"}))
	u.Package("example.com/a").Comments = []string{"+k8s:openapi-gen=true"}
	// An unnamed type, in the package "" with the builtins.
	ptr := u.Type(types.Name{Name: "*example.com/a.Zone"})
	ptr.Kind, ptr.Elem = types.Pointer, enum

	got := enumsOnly(u)
	if len(got) != len(u) {
		t.Fatalf("%d packages, want %d", len(got), len(u))
	}
	kept := map[*types.Type]bool{}
	for path, p := range got {
		for _, c := range p.Constants {
			kept[c] = true
		}
		for _, t := range p.Types {
			kept[t] = true
		}
		if p.Path != u[path].Path || !slices.Equal(p.Comments, u[path].Comments) {
			t.Errorf("package %s changed", path)
		}
	}
	if len(kept) != 5 || !kept[utc] || !kept[cet] || !kept[enum] || !kept[str] || !kept[u.Type(types.Name{Name: "int"})] {
		t.Errorf("kept %d types and constants, want UTC, CET, Zone and the builtin string and int only", len(kept))
	}
	// openapi-gen's one lookup of a type finds the universe's own.
	if got.Type(types.Name{Name: "string"}) != str {
		t.Errorf("the builtin string is not the universe's")
	}
	// The original universe keeps every type and constant.
	if len(u["example.com/a"].Constants) != 2 || len(u["syscall"].Constants) != 1 || len(u["example.com/a"].Types) != 3 || u[""].Types[ptr.Name.Name] != ptr {
		t.Errorf("the shared universe lost types or constants")
	}
}
