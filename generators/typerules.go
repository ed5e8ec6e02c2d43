package generators

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"maps"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// Names the generated code reserves. The generators declare methods on the
// API types (Marshal, Size, Reset... in zz_generated.protobuf.go, DeepCopy,
// DeepCopyInto, DeepCopyObject in zz_generated.deepcopy.go, OpenAPIModelName
// in zz_generated.model_name.go) and package-level names beside them. A
// struct field, or a hand-written method or declaration, of the same name
// does not compile ("field and method with the same name Size"), inside a
// generated file. checkGeneratedNames finds these clashes in the generated
// output itself, so the reserved names are always exactly what the
// generators emit, and reports them at the user's line.

// reservedBy describes what a generated file is, for the messages.
var reservedBy = map[string]string{
	"zz_generated.protobuf.go":    "the protobuf encoding",
	"zz_generated.deepcopy.go":    "deepcopy-gen",
	"zz_generated.model_name.go":  "the OpenAPI model names",
	"zz_generated.conversion.go":  "conversion-gen",
	"zz_generated.defaults.go":    "defaulter-gen",
	"zz_generated.register.go":    "the scheme registration",
	"zz_generated.validations.go": "validation-gen",
}

// generatedFile names a generated file and, if known, what writes it.
func generatedFile(file string) string {
	if by, ok := reservedBy[file]; ok {
		return file + " (" + by + ")"
	}
	return file
}

// generatedDecls are the methods (by receiver type) and package-level names
// the generated files of one package declare, each with the file declaring it.
type generatedDecls struct {
	methods  map[string]map[string]string // type -> method -> file name
	toplevel map[string]string            // name -> file name
}

// declsOf reads the declarations of the generated Go files in dir.
func declsOf(out []files.File, dir string) (*generatedDecls, error) {
	d := &generatedDecls{methods: map[string]map[string]string{}, toplevel: map[string]string{}}
	for _, f := range out {
		base := filepath.Base(f.Path)
		if filepath.Dir(f.Path) != dir || !strings.HasSuffix(base, ".go") || strings.HasSuffix(base, "_test.go") || !strings.HasPrefix(base, "zz_generated") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f.Path, f.Content, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for name := range declaredNames(af) {
			d.toplevel[name] = base
		}
		for _, decl := range af.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || len(fd.Recv.List) != 1 {
				continue
			}
			typ := receiverName(fd.Recv.List[0].Type)
			if d.methods[typ] == nil {
				d.methods[typ] = map[string]string{}
			}
			d.methods[typ][fd.Name.Name] = base
		}
	}
	return d, nil
}

// declaredNames are the package-level names of a file (not methods, not init).
func declaredNames(f *ast.File) map[string]bool {
	out := map[string]bool{}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "init" && d.Name.Name != "_" {
				out[d.Name.Name] = true
			}
		case *ast.GenDecl:
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					out[s.Name.Name] = true
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

// receiverName is the type name of a method's receiver: T, *T, T[P].
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return ""
		}
	}
}

// userField is a field of a struct type declared in a hand-written file.
type userField struct {
	typ, name string
	pos       token.Position
	// wire is the field's JSON name, tagged whether a json tag gives it.
	wire   string
	tagged bool
}

// userDecls are the struct fields and methods of a version's hand-written files.
func userDecls(v *model.Version) (fields []userField, methods []userField) {
	for _, f := range v.Files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					methods = append(methods, userField{typ: receiverName(d.Recv.List[0].Type), name: d.Name.Name, pos: v.Fset.Position(d.Name.Pos())})
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					st, ok := ts.Type.(*ast.StructType)
					if !ok {
						continue
					}
					for _, fl := range st.Fields.List {
						tagged := fl.Tag != nil && strings.Contains(fl.Tag.Value, "json:")
						if len(fl.Names) == 0 {
							fields = append(fields, userField{typ: ts.Name.Name, name: model.EmbeddedName(fl.Type), pos: v.Fset.Position(fl.Type.Pos()), tagged: tagged})
						}
						for _, n := range fl.Names {
							wire := n.Name
							if name, _, _ := model.JSONName(fl); name != "" {
								wire = name
							}
							fields = append(fields, userField{typ: ts.Name.Name, name: n.Name, pos: v.Fset.Position(n.Pos()), wire: wire, tagged: tagged})
						}
					}
				}
			}
		}
	}
	return fields, methods
}

// checkGeneratedNames refuses a struct field or a hand-written method of an
// API type named like a method the generated code declares on that type, and
// a hand-written package-level name the generated code declares too: each
// would fail the build inside a zz_generated file. out is every file the run
// generated.
func checkGeneratedNames(api *State, out []files.File) error {
	var errs []string
	add := func(pos token.Position, format string, args ...any) {
		errs = append(errs, fmt.Sprintf("%s: %s", relPos(api.Root, pos), fmt.Sprintf(format, args...)))
	}
	seen := map[string]bool{}
	for _, g := range api.Groups {
		internal, err := declsOf(out, g.Dir)
		if err != nil {
			return err
		}
		for _, v := range g.Versions {
			versioned, err := declsOf(out, v.Dir)
			if err != nil {
				return err
			}
			fields, methods := userDecls(v)
			// The internal package holds copies of the versions' types,
			// with their fields: a clash there is the version's field's.
			for _, decls := range []struct {
				d   *generatedDecls
				pkg string
			}{{versioned, v.Name}, {internal, g.Name}} {
				for _, f := range fields {
					file, ok := decls.d.methods[f.typ][f.name]
					key := f.pos.String() + "/" + f.name
					if !ok || seen[key] {
						continue
					}
					seen[key] = true
					keep := fmt.Sprintf("keep its json tag `json:\"%s\"`: the wire name is unchanged", f.wire)
					if !f.tagged {
						keep = fmt.Sprintf("give it the tag `json:\"%s\"` to keep the wire name", f.wire)
					}
					add(f.pos, "field %s.%s: %s declares method %s on %s in package %s, and a Go type cannot have a field and a method of the same name: rename the Go field and %s",
						f.typ, f.name, generatedFile(file), f.name, f.typ, decls.pkg, keep)
				}
			}
			for _, m := range methods {
				if file, ok := versioned.methods[m.typ][m.name]; ok {
					add(m.pos, "method %s.%s is declared by %s too: rename or remove yours", m.typ, m.name, generatedFile(file))
				}
			}
			for name, pos := range v.Declared {
				if file, ok := versioned.toplevel[name]; ok {
					add(pos, "%s is declared by %s of package %s too: rename or remove yours", name, generatedFile(file), v.Name)
				}
			}
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// relPos prints a position with its file relative to the project, as go build does.
func relPos(root string, pos token.Position) string {
	if rel, err := filepath.Rel(root, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
		pos.Filename = rel
	}
	return pos.String()
}

// checkFieldTypes refuses fields of type interface{} or any, wherever they
// are in an API type (nested in slices, maps, pointers, anonymous structs,
// or through a local type declared as one): no generator can copy, encode
// or describe a value of unknown type, and deepcopy-gen and openapi-gen stop
// without naming the field. Types that opt out of deepcopy and of openapi-gen
// (both run over every type of the package) and no served type refers to are
// left alone: they are not API types.
func checkFieldTypes(api *model.API) error {
	var errs []string
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			errs = append(errs, fieldTypeErrors(api.Root, v)...)
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

func fieldTypeErrors(root string, v *model.Version) []string {
	d := newVersionDecls(v)
	served := d.served(v)
	var errs []string
	var fieldsOf func(path string, st *ast.StructType)
	fieldsOf = func(path string, st *ast.StructType) {
		for _, fl := range st.Fields.List {
			name := model.EmbeddedName(fl.Type)
			if len(fl.Names) > 0 {
				name = fl.Names[0].Name
			}
			// Fields left out of the JSON (`json:"-"`) are deep-copied all the same.
			if d.holdsEmptyInterface(fl.Type, map[string]bool{}) {
				errs = append(errs, fmt.Sprintf("%s: field %s.%s has type %s: a value of type interface{} or any cannot be deep-copied, encoded in protobuf or described in the OpenAPI schema. "+
					"Use runtime.RawExtension (k8s.io/apimachinery/pkg/runtime) for any JSON object, apiextensionsv1.JSON (k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1) for any JSON value "+
					"(both are x-kubernetes-preserve-unknown-fields in the schema, as in a CRD), or a concrete type",
					relPos(root, v.Fset.Position(fl.Pos())), path, name, types.ExprString(fl.Type)))
			}
			// Anonymous structs, wherever they are in the field's type.
			ast.Inspect(fl.Type, func(n ast.Node) bool {
				if inner, ok := n.(*ast.StructType); ok {
					fieldsOf(path+"."+name, inner)
					return false
				}
				return true
			})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(d.decls)) {
		if d.optOut[name] && !served[name] {
			continue
		}
		if st, ok := d.decls[name].Type.(*ast.StructType); ok {
			fieldsOf(name, st)
		}
	}
	return errs
}

// versionDecls are a version package's type declarations, and those that
// opt out of deepcopy and OpenAPI.
type versionDecls struct {
	decls       map[string]*ast.TypeSpec
	optOut      map[string]bool
	anyDeclared bool // the package declares a type named any
}

func newVersionDecls(v *model.Version) *versionDecls {
	d := &versionDecls{decls: map[string]*ast.TypeSpec{}, optOut: map[string]bool{}}
	for _, f := range v.Files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				d.decls[ts.Name.Name] = ts
				var text []string
				for _, c := range []*ast.CommentGroup{gd.Doc, ts.Doc} {
					if c != nil {
						text = append(text, strings.ReplaceAll(c.Text(), " ", ""))
					}
				}
				all := strings.Join(text, "\n")
				d.optOut[ts.Name.Name] = (strings.Contains(all, "+k8s:deepcopy-gen=false") || strings.Contains(all, "+kubebuilder:object:generate=false")) &&
					strings.Contains(all, "+k8s:openapi-gen=false")
			}
		}
	}
	_, d.anyDeclared = d.decls["any"]
	return d
}

// served are the version's kinds, their lists and subresource requests,
// and every local type they refer to.
func (d *versionDecls) served(v *model.Version) map[string]bool {
	served := map[string]bool{}
	var reach func(e ast.Expr)
	reach = func(e ast.Expr) {
		ast.Inspect(e, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if ts, ok := d.decls[id.Name]; ok && !served[id.Name] {
					served[id.Name] = true
					reach(ts.Type)
				}
			}
			_, qualified := n.(*ast.SelectorExpr)
			return !qualified
		})
	}
	var roots []string
	for _, k := range v.Kinds {
		roots = append(roots, k.Kind, k.Kind+"List")
	}
	roots = append(roots, v.Requests...)
	for _, r := range roots {
		if ts, ok := d.decls[r]; ok && !served[r] {
			served[r] = true
			reach(ts.Type)
		}
	}
	return served
}

// holdsEmptyInterface finds interface{} or any in a field's type: in
// pointers, slices, arrays and maps, and through local types declared as
// those; not in structs, whose own fields are checked.
func (d *versionDecls) holdsEmptyInterface(e ast.Expr, seen map[string]bool) bool {
	switch t := e.(type) {
	case *ast.InterfaceType:
		return t.Methods == nil || len(t.Methods.List) == 0
	case *ast.Ident:
		if t.Name == "any" && !d.anyDeclared {
			return true
		}
		if ts, ok := d.decls[t.Name]; ok && !seen[t.Name] {
			seen[t.Name] = true
			return d.holdsEmptyInterface(ts.Type, seen)
		}
	case *ast.StarExpr:
		return d.holdsEmptyInterface(t.X, seen)
	case *ast.ArrayType:
		return d.holdsEmptyInterface(t.Elt, seen)
	case *ast.MapType:
		return d.holdsEmptyInterface(t.Key, seen) || d.holdsEmptyInterface(t.Value, seen)
	case *ast.ParenExpr:
		return d.holdsEmptyInterface(t.X, seen)
	}
	return false
}
