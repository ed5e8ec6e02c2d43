package protobuf

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/gengo/v2/types"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
)

// TestMethodsOfClashingStructs: a struct a kind holds with a field named
// like a protobuf method gets its encoding methods under names of its own,
// which the struct holding it calls; the kind keeps the usual names. On the
// kind itself such a method is an error (the kind is served as JSON), and an
// unencodable field is named with its file:line.
func TestMethodsOfClashingStructs(t *testing.T) {
	const pkgPath = "example.com/shop/pkg/apis/shop/v1"
	root := t.TempDir()
	dir := filepath.Join(root, "pkg", "apis", "shop", "v1")
	src := "package v1\n\ntype A struct {\n\tSpec ASpec `json:\"spec\"`\n}\n\ntype ASpec struct {\n\tSize int32 `json:\"size\"`\n\tOther Foreign `json:\"other\"`\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(dir, "a_types.go"), src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	v := &model.Version{Name: "v1", Dir: dir, Fset: fset, Files: []*ast.File{f}}

	u := types.Universe{}
	pkg := u.Package(pkgPath)
	i32 := u.Type(types.Name{Name: "int32"})
	i32.Kind = types.Builtin
	local := func(name string, members ...types.Member) *types.Type {
		t := u.Type(types.Name{Package: pkgPath, Name: name})
		t.Kind, t.Members = types.Struct, members
		return t
	}
	spec := local("ASpec", types.Member{Name: "Size", Type: i32, Tags: `json:"size"`})
	a := local("A", types.Member{Name: "Spec", Type: spec, Tags: `json:"spec"`})
	newGen := func() *protoGen {
		return &protoGen{pkg: pkgPath, universe: pkg, rec: Numbers{}, recorded: Numbers{}, seen: map[string]bool{}, imports: map[string]string{}, v: v, root: root, roots: map[string]bool{"A": true, "AList": true}}
	}

	g := newGen()
	if err := g.collectAll(pkg, []string{"A", "AList"}); err != nil {
		t.Fatal(err)
	}
	methods := map[string]protoType{}
	for _, pt := range g.types {
		methods[pt.Name] = pt
	}
	if m := methods["ASpec"].Methods; !m.Own || m.Size != "zzProtoSize" {
		t.Errorf("ASpec, with a field Size, has methods %+v", m)
	}
	if m := methods["A"].Methods; m.Own || m.Size != "Size" {
		t.Errorf("A keeps the usual names, has %+v", m)
	}
	if code := strings.Join(methods["A"].Size, "\n") + strings.Join(methods["A"].Marshal, "\n") + strings.Join(methods["A"].Unmarshal, "\n"); !strings.Contains(code, "m.Spec.zzProtoSize()") ||
		!strings.Contains(code, "m.Spec.zzProtoMarshalToSizedBuffer(dAtA[:i])") || !strings.Contains(code, "m.Spec.zzProtoUnmarshal(v)") {
		t.Errorf("A's code does not call ASpec's own methods:\n%s", code)
	}

	// A method Size on the kind: the serializer calls it, so the kind cannot
	// have protobuf.
	a.Methods = map[string]*types.Type{"Size": {}}
	err = newGen().collectAll(pkg, []string{"A", "AList"})
	var clash *rootClash
	if !errors.As(err, &clash) || !strings.Contains(err.Error(), "method A.Size is named like the protobuf method Size that the apiserver's protobuf serializer calls on the object A") {
		t.Errorf("want a clash on A, got %v", err)
	}
	a.Methods = nil

	// A field of a type without protobuf methods is named at its line.
	foreign := u.Type(types.Name{Package: "example.com/other", Name: "Foreign"})
	foreign.Kind = types.Struct
	spec.Members = append(spec.Members, types.Member{Name: "Other", Type: foreign, Tags: `json:"other"`})
	err = newGen().collectAll(pkg, []string{"A", "AList"})
	if err == nil || !strings.HasPrefix(err.Error(), "pkg/apis/shop/v1/a_types.go:9: protobuf: field ASpec.Other has type example.com/other.Foreign, which has no protobuf encoding") {
		t.Errorf("want the field's file:line, got %v", err)
	}
}
