package protobuf

import (
	"strings"
	"testing"

	"k8s.io/gengo/v2/types"
)

// TestRenumberKeepsWhatOtherKindsHold: --renumber forgets the record of the
// structs a kind holds (also one renamed since, known by the record only),
// but not of a struct another kind holds too; an error in such a shared
// struct names every kind to renumber, or, if a release published one, none.
func TestRenumberKeepsWhatOtherKindsHold(t *testing.T) {
	const pkgPath = "example.com/shop/pkg/apis/shop/v1"
	u := types.Universe{}
	pkg := u.Package(pkgPath)
	str := u.Type(types.Name{Name: "string"})
	str.Kind = types.Builtin
	local := func(name string, members ...types.Member) *types.Type {
		t := u.Type(types.Name{Package: pkgPath, Name: name})
		t.Kind, t.Members = types.Struct, members
		return t
	}
	shared := local("Shared", types.Member{Name: "X", Type: str, Tags: `json:"x"`})
	aSpec := local("ASpec", types.Member{Name: "Y", Type: str, Tags: `json:"y"`})
	local("A", types.Member{Name: "Spec", Type: aSpec, Tags: `json:"spec"`}, types.Member{Name: "Common", Type: &types.Type{Kind: types.Pointer, Elem: shared}, Tags: `json:"common"`})
	local("B", types.Member{Name: "Common", Type: &types.Type{Kind: types.Slice, Elem: shared}, Tags: `json:"common"`})
	rec := Numbers{
		"A":        {Fields: map[string]fieldNumber{"spec": {Number: 1, Wire: "message", Type: "AOldSpec"}, "common": {Number: 2, Wire: "message", Type: "Shared"}}},
		"AOldSpec": {Fields: map[string]fieldNumber{"y": {Number: 1, Wire: "varint"}}},
		"B":        {Fields: map[string]fieldNumber{"common": {Number: 1, Wire: "message", Type: "Shared"}}},
		"Shared":   {Fields: map[string]fieldNumber{"x": {Number: 1, Wire: "bytes"}}},
	}
	g := &protoGen{pkg: pkgPath, universe: pkg, rec: rec, recorded: rec.clone(), recPath: "pkg/apis/shop/v1/fieldnumbers.yaml"}
	units := [][]string{{"A", "AList"}, {"B", "BList"}}
	name := func(kind string) string { return "shop/v1/" + kind }
	notPublished := func(string) string { return "" }

	if got := g.wayOut("Shared", units, name, notPublished); !strings.Contains(got, "apiserver-boot generate --renumber shop/v1/A --renumber shop/v1/B (objects stored under the old numbers become unreadable)") {
		t.Errorf("an error in a struct two kinds hold must name both: %q", got)
	}
	if got := g.wayOut("Shared", units, name, func(k string) string { return map[string]string{"B": "v0.1.0"}[k] }); !strings.Contains(got, "B is in release v0.1.0") || strings.Contains(got, "--renumber") {
		t.Errorf("a struct a published kind holds keeps its numbers: %q", got)
	}
	said := g.renumber(units, map[string]bool{"shop/v1/A": true}, name)
	if len(said) != 1 || !strings.Contains(said[0], "--renumber shop/v1/A: the protobuf fields of A, AOldSpec are numbered afresh") {
		t.Errorf("renumber says %q", said)
	}
	for _, gone := range []string{"A", "AOldSpec"} {
		if g.rec[gone] != nil || g.recorded[gone] != nil {
			t.Errorf("%s is still recorded after --renumber of A", gone)
		}
	}
	for _, kept := range []string{"B", "Shared"} {
		if g.rec[kept] == nil {
			t.Errorf("%s, which B holds, lost its record with --renumber of A", kept)
		}
	}
}
