package generators

import (
	"fmt"
	gotypes "go/types"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"k8s.io/gengo/v2/generator"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/templates"
)

// jsonEncodings writes zz_generated.json.go in every version package with a
// kind whose spec or status encoding/json would write when it holds its zero
// value: a MarshalJSON on the kind that leaves them out then, as a custom
// resource has no spec and no status until a client writes one
// (docs/markers.md, "An absent spec and status"). encoding/json writes a
// struct field even with omitempty, so without it a create without spec or
// status returned and stored `spec: {}` and `status: {ready: 0}`, printer
// columns read 0 where a CRD shows <none>, and schema defaulting filled
// the spec a client had not sent.
//
// The method encodes through a method-less copy of the kind's type (a
// conversion, no copy of the object) with spec and status as pointers;
// encoding/json, the apiserver's JSON serializer, apimachinery's
// unstructured converter and structured-merge-diff (server-side apply) all
// call it. Decoding is unchanged: an absent spec or status reads as the zero
// value, as `spec: {}` did.
type jsonEncodings struct{}

// jsonEncodingFile is the file jsonEncodings writes in a version package.
const jsonEncodingFile = "zz_generated.json.go"

// The methods by which a type, or the type of its spec or status, encodes
// itself: such a type is left as it is.
var ownEncodingMethods = []string{"MarshalJSON", "UnmarshalJSON", "MarshalCBOR", "UnmarshalCBOR", "MarshalText", "UnmarshalText", "ToUnstructured"}

// cborDirect is k8s.io/apimachinery's CBOR encoding of Go values, as its
// serializer encodes them.
const cborDirect = "k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"

func (jsonEncodings) Name() string                 { return "json-encoding" }
func (jsonEncodings) Packages(api *State) []string { return nil }

// absentField is a top-level field of a kind left out at its zero value.
type absentField struct {
	Name, JSON, Type string
	goType           gotypes.Type
}

// absentKind is a kind that gets a MarshalJSON.
type absentKind struct {
	Kind, Plain, Which string
	Fields             []absentField
}

type jsonImport struct{ Alias, Path string }

func (jsonEncodings) Generate(api *State, c *generator.Context) ([]files.File, error) {
	var out []files.File
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			pkg := c.Universe.Package(v.Package)
			if pkg == nil {
				continue
			}
			var named []*gotypes.Named
			for _, k := range v.Kinds {
				if t := pkg.Types[k.Kind]; t != nil && t.GoType != nil {
					if n, ok := gotypes.Unalias(t.GoType).(*gotypes.Named); ok {
						named = append(named, n)
					}
				}
			}
			f, err := jsonEncodingOf(api.Header, v.Name, v.Package, named)
			if err != nil {
				return nil, err
			}
			if f != nil {
				f.Path = filepath.Join(v.Dir, jsonEncodingFile)
				out = append(out, *f)
			}
		}
	}
	return out, nil
}

// jsonEncodingOf renders the file for the kinds of package pkgPath (named
// pkgName), as the universe loaded them (without the generated files); nil
// when no kind needs a MarshalJSON.
func jsonEncodingOf(header, pkgName, pkgPath string, kinds []*gotypes.Named) (*files.File, error) {
	var scope *gotypes.Scope
	taken := map[string]bool{}
	if len(kinds) > 0 && kinds[0].Obj().Pkg() != nil {
		scope = kinds[0].Obj().Pkg().Scope()
		for _, n := range scope.Names() {
			taken[n] = true
		}
	}
	imports := map[string]string{} // path -> alias
	alias := func(path, name string) string {
		if a, ok := imports[path]; ok {
			return a
		}
		a := name
		for i := 2; taken[a]; i++ {
			a = fmt.Sprintf("%s%d", name, i)
		}
		taken[a] = true
		imports[path] = a
		return a
	}
	qualifier := func(p *gotypes.Package) string {
		if p.Path() == pkgPath {
			return ""
		}
		return alias(p.Path(), project.ImportAlias(p.Path()))
	}
	var list []absentKind
	for _, n := range kinds {
		fields := absentFieldsOf(n)
		if len(fields) == 0 {
			continue
		}
		k := absentKind{Kind: n.Obj().Name()}
		var which []string
		for _, f := range fields {
			f.Type = gotypes.TypeString(f.goType, qualifier)
			k.Fields = append(k.Fields, f)
			which = append(which, f.JSON)
		}
		k.Which = strings.Join(which, " and ")
		plain := "plain" + k.Kind
		for i := 2; taken[plain]; i++ {
			plain = fmt.Sprintf("plain%s%d", k.Kind, i)
		}
		k.Plain = plain
		list = append(list, k)
	}
	if len(list) == 0 {
		return nil, nil
	}
	jsonAlias, reflectAlias, cborAlias := alias("encoding/json", "json"), alias("reflect", "reflect"), alias(cborDirect, "cbordirect")
	// The standard library's first, then the others; an alias only where
	// the name differs from the package's folder.
	var std, others []jsonImport
	for p, a := range imports {
		imp := jsonImport{Alias: a, Path: p}
		if a == path.Base(p) {
			imp.Alias = ""
		}
		if first, _, _ := strings.Cut(p, "/"); strings.Contains(first, ".") {
			others = append(others, imp)
		} else {
			std = append(std, imp)
		}
	}
	for _, l := range [][]jsonImport{std, others} {
		sort.Slice(l, func(i, j int) bool { return l[i].Path < l[j].Path })
	}
	b, err := templates.Render("generated/json.go.tmpl", map[string]any{
		"Header": header, "Package": pkgName, "Std": std, "Imports": others, "Kinds": list, "JSON": jsonAlias, "Reflect": reflectAlias, "CBOR": cborAlias,
	})
	if err != nil {
		return nil, err
	}
	return &files.File{Content: b}, nil
}

// absentFieldsOf returns the fields spec and status of kind n that
// encoding/json writes at their zero value and a MarshalJSON may leave out:
// a named struct (not a pointer, map or slice) tagged omitempty and not
// omitzero (which leaves it out already), whose type does not encode
// itself. A kind whose type encodes itself (its own MarshalJSON or
// UnmarshalJSON, declared or from an embedded field) gets none.
func absentFieldsOf(n *gotypes.Named) []absentField {
	if n.TypeParams().Len() > 0 || encodesItself(n) {
		return nil
	}
	st, ok := n.Underlying().(*gotypes.Struct)
	if !ok {
		return nil
	}
	var out []absentField
	for i := range st.NumFields() {
		f := st.Field(i)
		if f.Embedded() || !f.Exported() {
			continue
		}
		name, opts, _ := strings.Cut(reflect.StructTag(st.Tag(i)).Get("json"), ",")
		o := "," + opts + ","
		if (name != "spec" && name != "status") || !strings.Contains(o, ",omitempty,") || strings.Contains(o, ",omitzero,") {
			continue
		}
		ft, ok := gotypes.Unalias(f.Type()).(*gotypes.Named)
		if !ok || ft.TypeParams().Len() > 0 {
			continue
		}
		if _, ok := ft.Underlying().(*gotypes.Struct); !ok || encodesItself(ft) {
			continue
		}
		out = append(out, absentField{Name: f.Name(), JSON: name, goType: ft})
	}
	return out
}

// encodesItself tells whether values of t, or pointers to them, have a
// method by which encoding/json or apimachinery's converter would encode
// or decode them instead of their fields.
func encodesItself(t gotypes.Type) bool {
	ms := gotypes.NewMethodSet(gotypes.NewPointer(t))
	for _, name := range ownEncodingMethods {
		if ms.Lookup(nil, name) != nil {
			return true
		}
	}
	return false
}
