package model

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/markers"
)

// TypeDecl is a type of a version's API: declared in its *_types.go files, or
// reached from its kinds (and their lists and subresource requests) wherever
// it is declared.
type TypeDecl struct {
	Name       string
	Struct     *ast.StructType // nil for other types
	Underlying ast.Expr        // the type expression when not a struct
	Fields     []*Field
	Pos        token.Position
}

// Field is one struct field with its JSON name and markers.
type Field struct {
	GoName   string
	JSONName string
	Inline   bool // embedded into its parent's JSON object
	// OmitEmpty: a zero value is absent from the JSON, so its checks do not apply.
	OmitEmpty bool
	// Default: a +kubebuilder:default or +default marker.
	Default bool
	Type    ast.Expr
	Pos     token.Position
}

// jsonName reads a field's JSON name and inlining from its tag.
func jsonName(f *ast.Field) (name string, inline bool, skip bool) {
	if f.Tag != nil {
		tag, _ := strconv.Unquote(f.Tag.Value)
		parts := strings.Split(reflect.StructTag(tag).Get("json"), ",")
		if parts[0] == "-" {
			return "", false, true
		}
		for _, p := range parts[1:] {
			if p == "inline" {
				return "", true, false
			}
		}
		if parts[0] != "" {
			return parts[0], false, false
		}
	}
	if len(f.Names) == 0 {
		return "", true, false // embedded without a name: inlined by encoding/json
	}
	return f.Names[0].Name, false, false
}

// eachTypeSpec calls fn for every type declared in f, with the comment
// groups holding its markers (markerGroups).
func eachTypeSpec(fset *token.FileSet, f *ast.File, fn func(ts *ast.TypeSpec, groups []*ast.CommentGroup) error) error {
	after := f.Name.End()
	for _, decl := range f.Decls {
		gd, ok := decl.(*ast.GenDecl)
		if ok && gd.Tok == token.TYPE {
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				doc, pos := ts.Doc, ts.Pos()
				if len(gd.Specs) == 1 {
					pos = gd.Pos()
					if doc == nil {
						doc = gd.Doc
					}
				}
				if err := fn(ts, markerGroups(fset, f, after, doc, pos)); err != nil {
					return err
				}
				after = ts.End()
			}
		}
		after = decl.End()
	}
	return nil
}

// markerGroups returns the comment groups whose markers belong to a type or
// field declared at pos: its doc comment, and the block a blank line above
// it, after the previous declaration. Markers are often kept apart from the
// doc comment so; controller-gen reads them there, and gengo too.
func markerGroups(fset *token.FileSet, f *ast.File, after token.Pos, doc *ast.CommentGroup, pos token.Pos) []*ast.CommentGroup {
	if doc != nil {
		pos = doc.Pos()
	}
	var out []*ast.CommentGroup
	if c := DetachedComment(fset, f, after, pos); c != nil {
		out = append(out, c)
	}
	if doc != nil {
		out = append(out, doc)
	}
	return out
}

// DetachedComment returns the comment group between after and pos that ends
// one blank line above pos, as gengo's parser reads it (gofmt keeps at most
// one blank line).
func DetachedComment(fset *token.FileSet, f *ast.File, after, pos token.Pos) *ast.CommentGroup {
	line := fset.Position(pos).Line
	for _, c := range f.Comments {
		if c.Pos() > after && c.End() < pos && fset.Position(c.End()).Line == line-2 {
			return c
		}
	}
	return nil
}

// collectTypes reads the type declarations of a file into v.types, checking
// every marker on them: an unknown marker is an error, not a silent skip.
func (v *Version) collectTypes(f *ast.File, typesFile bool, all map[string]*TypeDecl) error {
	return eachTypeSpec(v.Fset, f, func(ts *ast.TypeSpec, groups []*ast.CommentGroup) error {
		for _, l := range commentLines(v.Fset, groups...) {
			if err := v.check(l, markers.DescribesType); err != nil {
				return err
			}
		}
		v.otherTags = append(v.otherTags, otherTags(v.Fset, groups...)...)
		td := &TypeDecl{Name: ts.Name.Name, Pos: v.Fset.Position(ts.Pos())}
		st, isStruct := ts.Type.(*ast.StructType)
		if !isStruct {
			td.Underlying = ts.Type
		} else {
			td.Struct = st
			after := st.Fields.Opening
			for _, af := range st.Fields.List {
				fieldGroups := markerGroups(v.Fset, f, after, af.Doc, af.Pos())
				after = af.End()
				if af.Comment != nil {
					after = af.Comment.End()
				}
				for _, l := range commentLines(v.Fset, fieldGroups...) {
					if err := v.check(l, markers.DescribesField); err != nil {
						return err
					}
				}
				v.otherTags = append(v.otherTags, otherTags(v.Fset, fieldGroups...)...)
				if len(af.Names) > 0 {
					v.patchWarnings = append(v.patchWarnings, patchTagWarnings(v.Fset, af, ts.Name.Name, af.Names[0].Name, fieldGroups...)...)
				}
				// Field markers are parsed here to report a malformed one at
				// its line; their meaning is the schema's (crdschema).
				vals, err := markerValues(v.Fset, markers.DescribesField, fieldGroups...)
				if err != nil {
					return err
				}
				kbDefault, k8sDefault := vals.Has("kubebuilder:default"), vals.Has("default")
				name, inline, skip := jsonName(af)
				if skip {
					continue
				}
				goName := ""
				if len(af.Names) > 0 {
					goName = af.Names[0].Name
				} else {
					goName = EmbeddedName(af.Type)
				}
				td.Fields = append(td.Fields, &Field{
					GoName: goName, JSONName: name, Inline: inline, Type: af.Type, OmitEmpty: omitEmpty(af),
					Default: kbDefault || k8sDefault, Pos: v.Fset.Position(af.Pos()),
				})
			}
		}
		all[td.Name] = td
		if typesFile {
			v.Types[td.Name] = td
		}
		return nil
	})
}

// reachTypes adds to v.Types every type of the package the kinds, their
// lists and the subresource requests hold, whatever file declares it: a kind
// in widget.go is as much of the API as one in widget_types.go.
func (v *Version) reachTypes(all map[string]*TypeDecl) {
	reached := map[string]bool{}
	var reach func(name string)
	var refs func(e ast.Node)
	refs = func(e ast.Node) {
		ast.Inspect(e, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				return false // another package's type
			case *ast.Field:
				refs(n.Type) // not the field's name
				return false
			case *ast.Ident:
				reach(n.Name)
			}
			return true
		})
	}
	reach = func(name string) {
		td := all[name]
		if td == nil || reached[name] {
			return
		}
		v.Types[name], reached[name] = td, true
		if td.Struct != nil {
			refs(td.Struct)
		} else {
			refs(td.Underlying)
		}
	}
	for _, k := range v.Kinds {
		reach(k.Kind)
		reach(k.Kind + "List")
	}
	for _, r := range v.Requests {
		reach(r)
	}
}

// check checks a marker line: an unknown marker is an error, one that has
// no meaning here a warning.
func (v *Version) check(l markerLine, target markers.TargetType) error {
	err := checkMarker(l.text, target, l.pos)
	var ign ignoredMarker
	if errors.As(err, &ign) {
		v.Warnings = append(v.Warnings, ign.warning)
		return nil
	}
	return err
}

func omitEmpty(f *ast.Field) bool {
	if f.Tag == nil {
		return false
	}
	tag, _ := strconv.Unquote(f.Tag.Value)
	for _, p := range strings.Split(reflect.StructTag(tag).Get("json"), ",")[1:] {
		if p == "omitempty" {
			return true
		}
	}
	return false
}

func EmbeddedName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		return t.Name
	case *ast.StarExpr:
		return EmbeddedName(t.X)
	case *ast.SelectorExpr:
		return t.Sel.Name
	}
	return ""
}

// BasicKind classifies a type expression (for the default warnings): "string", "number",
// "bool", "struct:<Local>", "slice", "map", "pointer", or "other".
func (v *Version) BasicKind(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.Ident:
		switch t.Name {
		case "string":
			return "string"
		case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64":
			return "number"
		case "bool":
			return "bool"
		}
		if td, ok := v.Types[t.Name]; ok {
			if td.Struct != nil {
				return "struct:" + t.Name
			}
			return v.BasicKind(td.Underlying)
		}
	case *ast.StarExpr:
		return "pointer"
	case *ast.ArrayType:
		return "slice"
	case *ast.MapType:
		return "map"
	}
	return "other"
}

// defaultWarnings names the defaults that can never apply: a default fills
// what an object's JSON leaves out, and Go always writes a struct, and a
// scalar without omitempty.
func (v *Version) defaultWarnings() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(v.Types)) {
		for _, f := range v.Types[name].Fields {
			if !f.Default {
				continue
			}
			switch k := v.BasicKind(f.Type); {
			case k == "pointer" || k == "slice" || k == "map":
			case k == "string" || k == "number" || k == "bool":
				if !f.OmitEmpty {
					out = append(out, fmt.Sprintf("%s: the default of %s.%s never applies: the field has no omitempty, so it is always in the JSON; add omitempty or make it a pointer", f.Pos, name, f.GoName))
				}
			default:
				out = append(out, fmt.Sprintf("%s: the default of %s.%s never applies: Go always writes a struct field; make it a pointer", f.Pos, name, f.GoName))
			}
		}
	}
	return out
}

// JSONName reads a struct field's JSON name and inlining from its tag
// (encoding/json's rules); skip is a field tagged `json:"-"`.
func JSONName(f *ast.Field) (name string, inline bool, skip bool) { return jsonName(f) }
