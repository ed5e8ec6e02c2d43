package main

import (
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

// The benchmarks' kinds are scaffolded by the CLI (`create group version
// resource`, from templates/resource/types.go.tmpl) and then edited: fields
// and markers are added to the scaffolded declarations, and the other trees
// of a comparison (a kubebuilder module, a kube_codegen.sh tree) get a copy
// of the scaffolded file with their own markers. No kind is written by hand.

// kindTypesFile is the scaffolded <kind>_types.go of a kind in a project.
func kindTypesFile(project, group, version, kind string) string {
	return filepath.Join(project, "pkg", "apis", group, version, strings.ToLower(kind)+"_types.go")
}

// kindSource is a kind's Go source being edited. Each edit finds the
// declaration it changes with go/parser and fails naming the file and the
// declaration when the scaffolded shape it expects is not there.
type kindSource struct {
	path string // where it was read, for errors and write
	src  string
}

func readKind(path string) (*kindSource, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &kindSource{path: path, src: string(b)}, nil
}

// writeTo writes the source, gofmt'ed, to path.
func (k *kindSource) writeTo(path string) error {
	out, err := format.Source([]byte(k.src))
	if err != nil {
		return fmt.Errorf("%s: edited source does not format: %w", k.path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o644)
}

func (k *kindSource) write() error { return k.writeTo(k.path) }

// typeSpec finds the declaration of name, returning it with the offsets of
// the line its `type` keyword starts and the byte after its end.
func (k *kindSource) typeSpec(name string) (ts *ast.TypeSpec, lineStart, end int, err error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, k.path, k.src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, 0, err
	}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, s := range gd.Specs {
			if s := s.(*ast.TypeSpec); s.Name.Name == name {
				start := fset.Position(gd.Pos()).Offset
				return s, strings.LastIndex(k.src[:start], "\n") + 1, fset.Position(gd.End()).Offset, nil
			}
		}
	}
	return nil, 0, 0, fmt.Errorf("%s: no type %s", k.path, name)
}

// offset is the byte offset in k.src of pos from its last parse: each edit
// parses into a fresh FileSet, whose one file starts at base 1.
func offset(pos token.Pos) int { return int(pos) - 1 }

// structOf finds the struct type name.
func (k *kindSource) structOf(name string) (*ast.StructType, error) {
	ts, _, _, err := k.typeSpec(name)
	if err != nil {
		return nil, err
	}
	st, ok := ts.Type.(*ast.StructType)
	if !ok {
		return nil, fmt.Errorf("%s: type %s is not a struct", k.path, name)
	}
	return st, nil
}

func (k *kindSource) insert(at int, text string) { k.src = k.src[:at] + text + k.src[at:] }

// addFields adds field lines (Go source, one field with its comments per
// line or more) at the end of struct name.
func (k *kindSource) addFields(name, fields string) error {
	st, err := k.structOf(name)
	if err != nil {
		return err
	}
	closing := offset(st.Fields.Closing)
	k.insert(strings.LastIndex(k.src[:closing], "\n")+1, fields)
	return nil
}

// addDecl adds a declaration (Go source) after the declaration of name.
func (k *kindSource) addDecl(name, decl string) error {
	_, _, end, err := k.typeSpec(name)
	if err != nil {
		return err
	}
	k.insert(end, "\n\n"+strings.TrimRight(decl, "\n"))
	return nil
}

// addTypeMarkers adds marker comments (without "// ") right above the
// `type` line of name, at the end of its doc comment.
func (k *kindSource) addTypeMarkers(name string, markers ...string) error {
	_, line, _, err := k.typeSpec(name)
	if err != nil {
		return err
	}
	k.insert(line, markerLines("", markers))
	return nil
}

// addFieldMarkers adds marker comments right above field of struct name,
// after the field's doc comment.
func (k *kindSource) addFieldMarkers(name, field string, markers ...string) error {
	st, err := k.structOf(name)
	if err != nil {
		return err
	}
	for _, f := range st.Fields.List {
		for _, id := range f.Names {
			if id.Name == field {
				at := offset(id.Pos())
				line := strings.LastIndex(k.src[:at], "\n") + 1
				k.insert(line, markerLines(k.src[line:at], markers))
				return nil
			}
		}
	}
	return fmt.Errorf("%s: type %s has no field %s", k.path, name, field)
}

func markerLines(indent string, markers []string) string {
	var sb strings.Builder
	for _, m := range markers {
		sb.WriteString(indent + "// " + m + "\n")
	}
	return sb.String()
}

// dropMarkers removes the comment lines of markers starting with one of
// prefixes (given without "// ", e.g. "+resource:").
func (k *kindSource) dropMarkers(prefixes ...string) {
	lines := strings.SplitAfter(k.src, "\n")
	kept := lines[:0]
	for _, l := range lines {
		t := strings.TrimSpace(l)
		drop := false
		for _, p := range prefixes {
			drop = drop || strings.HasPrefix(t, "// "+p)
		}
		if !drop {
			kept = append(kept, l)
		}
	}
	k.src = strings.Join(kept, "")
}

// setPackage renames the file's package.
func (k *kindSource) setPackage(name string) error {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, k.path, k.src, parser.PackageClauseOnly)
	if err != nil {
		return err
	}
	at := offset(f.Name.Pos())
	k.src = k.src[:at] + name + k.src[offset(f.Name.End()):]
	return nil
}

// addSpecField adds an optional string field to the spec struct of kind in
// a types file: the edit of item 8.
func addSpecField(path, kind, field string) error {
	k, err := readKind(path)
	if err != nil {
		return err
	}
	name := strings.ToUpper(field[:1]) + field[1:]
	if err := k.addFields(kind+"Spec", fmt.Sprintf("\t// %s is a field the edit loop added.\n\t// +optional\n\t%s string `json:\"%s,omitempty\"`\n", name, name, field)); err != nil {
		return err
	}
	return k.write()
}
