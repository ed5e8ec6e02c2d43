package generators

import (
	"fmt"
	"path"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"unicode"

	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"

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
	goType           *types.Type
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
			var kinds []*types.Type
			for _, k := range v.Kinds {
				if t := pkg.Types[k.Kind]; t != nil {
					kinds = append(kinds, t)
				}
			}
			f, err := jsonEncodingOf(api.Header, v.Name, pkg, kinds)
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

// jsonEncodingOf renders the file for the kinds of pkg, as the universe
// loaded them (without the generated files); nil when no kind needs a
// MarshalJSON.
func jsonEncodingOf(header, pkgName string, pkg *types.Package, kinds []*types.Type) (*files.File, error) {
	pkgPath := pkg.Path
	// The package's own names, which the file's imports and types must not take.
	taken := map[string]bool{}
	for _, m := range []map[string]*types.Type{pkg.Types, pkg.Functions, pkg.Variables, pkg.Constants} {
		for n := range m {
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
	typeName := func(t *types.Type) string {
		if t.Name.Package == pkgPath {
			return t.Name.Name
		}
		return alias(t.Name.Package, project.ImportAlias(t.Name.Package)) + "." + t.Name.Name
	}
	var list []absentKind
	for _, t := range kinds {
		fields := absentFieldsOf(t)
		if len(fields) == 0 {
			continue
		}
		k := absentKind{Kind: t.Name.Name}
		var which []string
		for _, f := range fields {
			f.Type = typeName(f.goType)
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

// absentFieldsOf returns the fields spec and status of kind t that
// encoding/json writes at their zero value and a MarshalJSON may leave out:
// a named struct (not a pointer, map or slice) tagged omitempty and not
// omitzero (which leaves it out already), whose type does not encode
// itself. A kind whose type encodes itself (its own MarshalJSON or
// UnmarshalJSON, declared or from an embedded field) gets none.
func absentFieldsOf(t *types.Type) []absentField {
	if t.Kind != types.Struct || len(t.TypeParams) > 0 || encodesItself(t, map[*types.Type]bool{}) {
		return nil
	}
	var out []absentField
	for _, m := range t.Members {
		if m.Embedded || m.Name == "" || !unicode.IsUpper([]rune(m.Name)[0]) {
			continue
		}
		name, opts, _ := strings.Cut(reflect.StructTag(m.Tags).Get("json"), ",")
		o := "," + opts + ","
		if (name != "spec" && name != "status") || !strings.Contains(o, ",omitempty,") || strings.Contains(o, ",omitzero,") {
			continue
		}
		ft := m.Type
		if ft.Kind != types.Struct || ft.Name.Package == "" || len(ft.TypeParams) > 0 || encodesItself(ft, map[*types.Type]bool{}) {
			continue
		}
		out = append(out, absentField{Name: m.Name, JSON: name, goType: ft})
	}
	return out
}

// encodesItself tells whether values of t, or pointers to them, have a
// method, declared or from an embedded field, by which encoding/json, CBOR
// or apimachinery's converter would encode or decode them instead of their
// fields.
func encodesItself(t *types.Type, seen map[*types.Type]bool) bool {
	for t != nil && (t.Kind == types.Alias || t.Kind == types.Pointer) {
		if t.Kind == types.Alias {
			t = t.Underlying
		} else {
			t = t.Elem
		}
	}
	if t == nil || seen[t] {
		return false
	}
	seen[t] = true
	for _, name := range ownEncodingMethods {
		if t.Methods[name] != nil {
			return true
		}
	}
	if t.Kind == types.Struct {
		for _, m := range t.Members {
			if m.Embedded && encodesItself(m.Type, seen) {
				return true
			}
		}
	}
	return false
}
