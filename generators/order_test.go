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
