package generators

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/astutil"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// Conversion stubs. conversion-gen converts what it can match field by field
// between a version and the internal type. For a field it cannot match
// (renamed, only in one version, changed type) it writes a WARNING comment in
// autoConvert_<in>_To_<out> and expects a hand-written Convert_<in>_To_<out>;
// without one the project does not compile and the message is a bare
// "undefined". Instead, generate writes that function into the kind's
// <kind>_conversion.go: it calls the generated part and then returns an error
// naming every unconverted field, so nothing is lost silently (the
// round-trip test and any request through that version fail, naming the
// fields) until the user fills it in. generate itself fails while a stub
// still returns that error (lostfields.go).

// unconvertedCall is the call a stub returns until the user converts the fields.
const unconvertedCall = "builders.UnconvertedFields"

// skippedField is one field conversion-gen left for a manual conversion.
type skippedField struct {
	Name   string // Go field name
	Reason string
}

// neededConversion is a Convert_ function the package lacks.
type neededConversion struct {
	Func   string // Convert_v2_CronTabSpec_To_stable_CronTabSpec
	Params string // (in *CronTabSpec, out *stable.CronTabSpec, s conversion.Scope)
	Fields []skippedField
	Out    string // the type converted to, e.g. stable.CronTabSpec
	// imports used by Params: name -> path
	imports  map[string]string
	typeName string // the versioned type: where the stub goes
}

var (
	autoConvertName = regexp.MustCompile(`^autoConvert_(.+)$`)
	skippedWarning  = regexp.MustCompile(`^// WARNING: (?:in|out)\.(\w+) (.*)$`)
)

// conversionStubs returns the stub files every version package needs, given
// the conversion files just generated, and a message per stub.
func conversionStubs(api *State, generated []files.File) ([]files.File, []string, error) {
	var stubs []files.File
	var messages []string
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			var conv *files.File
			for i := range generated {
				if generated[i].Path == filepath.Join(v.Dir, "zz_generated.conversion.go") {
					conv = &generated[i]
				}
			}
			if conv == nil {
				continue
			}
			needed, err := missingConversions(v, conv)
			if err != nil {
				return nil, nil, err
			}
			byFile := map[string][]neededConversion{}
			for _, n := range needed {
				path := conversionFile(v, n.typeName)
				byFile[path] = append(byFile[path], n)
			}
			for _, path := range slices.Sorted(maps.Keys(byFile)) {
				f, err := appendStubs(api, path, byFile[path])
				if err != nil {
					return nil, nil, err
				}
				stubs = append(stubs, f)
				rel, _ := filepath.Rel(api.Root, path)
				for _, n := range byFile[path] {
					messages = append(messages, fmt.Sprintf("%s: wrote %s for you to fill in: %s", rel, n.Func, describeFields(g, n)))
				}
			}
		}
	}
	return stubs, messages, nil
}

// missingConversions finds the autoConvert functions with skipped fields
// whose public Convert_ function exists neither in the generated file nor in
// the package's own files.
func missingConversions(v *model.Version, conv *files.File) ([]neededConversion, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, conv.Path, conv.Content, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	declared := map[string]bool{}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			declared[fd.Name.Name] = true
		}
	}
	for _, hf := range v.Files {
		for _, d := range hf.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil {
				declared[fd.Name.Name] = true
			}
		}
	}
	imports := map[string]string{}
	for _, is := range f.Imports {
		p, _ := strconv.Unquote(is.Path.Value)
		name := filepath.Base(p)
		if is.Name != nil {
			name = is.Name.Name
		}
		imports[name] = p
	}
	var out []neededConversion
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		m := autoConvertName.FindStringSubmatch(fd.Name.Name)
		if m == nil || declared["Convert_"+m[1]] {
			continue
		}
		n := neededConversion{Func: "Convert_" + m[1], imports: map[string]string{}}
		for _, cg := range f.Comments {
			if cg.Pos() < fd.Body.Lbrace || cg.End() > fd.Body.Rbrace {
				continue
			}
			for _, c := range cg.List {
				if w := skippedWarning.FindStringSubmatch(c.Text); w != nil {
					reason := strings.TrimPrefix(w[2], "requires manual conversion: ")
					n.Fields = append(n.Fields, skippedField{Name: w[1], Reason: reason})
				}
			}
		}
		if len(n.Fields) == 0 {
			continue // conversion-gen emits Convert_ itself unless fields were skipped
		}
		n.Params = string(conv.Content[fset.Position(fd.Type.Params.Pos()).Offset:fset.Position(fd.Type.Params.End()).Offset])
		ast.Inspect(fd.Type.Params, func(node ast.Node) bool {
			if sel, ok := node.(*ast.SelectorExpr); ok {
				if id, ok := sel.X.(*ast.Ident); ok {
					n.imports[id.Name] = imports[id.Name]
				}
			}
			return true
		})
		outType := fd.Type.Params.List[1].Type.(*ast.StarExpr).X
		n.Out = string(conv.Content[fset.Position(outType.Pos()).Offset:fset.Position(outType.End()).Offset])
		if !strings.Contains(n.Out, ".") {
			n.Out = v.Name + "." + n.Out
		}
		// The versioned side is the parameter without a package qualifier.
		for _, field := range fd.Type.Params.List[:2] {
			if star, ok := field.Type.(*ast.StarExpr); ok {
				if id, ok := star.X.(*ast.Ident); ok {
					n.typeName = id.Name
				}
			}
		}
		out = append(out, n)
	}
	return out, nil
}

// conversionFile is where the stubs for a type of this version go: next to
// the types file declaring it (crontab_types.go -> crontab_conversion.go).
func conversionFile(v *model.Version, typeName string) string {
	if td, ok := v.Types[typeName]; ok && strings.HasSuffix(td.Pos.Filename, "_types.go") {
		return strings.TrimSuffix(td.Pos.Filename, "_types.go") + "_conversion.go"
	}
	return filepath.Join(v.Dir, "conversion.go")
}

// appendStubs adds the stubs to the file at path (created if missing),
// keeping what it already holds.
func appendStubs(api *State, file string, stubs []neededConversion) (files.File, error) {
	src, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		var b bytes.Buffer
		if api.Header != "" {
			b.WriteString(strings.TrimRight(api.Header, "\n") + "\n\n")
		}
		fmt.Fprintf(&b, "package %s\n", filepath.Base(filepath.Dir(file)))
		src = b.Bytes()
	} else if err != nil {
		return files.File{}, err
	}
	var body bytes.Buffer
	body.Write(src)
	for _, n := range stubs {
		names := make([]string, len(n.Fields))
		for i, f := range n.Fields {
			names[i] = strconv.Quote(f.Name)
		}
		fmt.Fprintf(&body, "\n// %s converts what conversion-gen could not match field by field.\n", n.Func)
		fmt.Fprintf(&body, "// It was written by apiserver-boot generate; fill in the fields below, then\n// return nil instead of the error:\n")
		for _, f := range n.Fields {
			fmt.Fprintf(&body, "//   - in.%s: %s\n", f.Name, f.reason(n.Out))
		}
		auto := "auto" + n.Func
		fmt.Fprintf(&body, "func %s%s error {\n\tif err := %s(in, out, s); err != nil {\n\t\treturn err\n\t}\n", n.Func, n.Params, auto)
		fmt.Fprintf(&body, "\treturn %s(%q, %s)\n}\n", unconvertedCall, n.Func, strings.Join(names, ", "))
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, body.Bytes(), parser.ParseComments)
	if err != nil {
		return files.File{}, fmt.Errorf("adding conversion stubs to %s: %w", file, err)
	}
	for _, n := range stubs {
		for name, p := range n.imports {
			if name == path.Base(p) {
				name = ""
			}
			astutil.AddNamedImport(fset, f, name, p)
		}
	}
	astutil.AddImport(fset, f, api.Framework+"/pkg/builders")
	var out bytes.Buffer
	if err := format.Node(&out, fset, f); err != nil {
		return files.File{}, err
	}
	return files.File{Path: file, Content: out.Bytes()}, nil
}

// describeFields names the fields with their JSON names where a version declares them.
func describeFields(g *model.Group, n neededConversion) string {
	var parts []string
	for _, f := range n.Fields {
		desc := f.Name
		if j := jsonName(g, f.Name); j != "" {
			desc = fmt.Sprintf("%s (json %q)", f.Name, j)
		}
		parts = append(parts, desc+": "+f.reason(n.Out))
	}
	return strings.Join(parts, "; ")
}

// reason says in words why conversion-gen skipped the field.
func (f skippedField) reason(out string) string {
	if f.Reason == "does not exist in peer-type" {
		return "no field of that name in " + out
	}
	return f.Reason
}

// jsonName finds the JSON name of a Go field in any version's types.
func jsonName(g *model.Group, goName string) string {
	for _, v := range g.Versions {
		for _, name := range slices.Sorted(maps.Keys(v.Types)) {
			for _, f := range v.Types[name].Fields {
				if f.GoName == goName && f.JSONName != "" {
					return f.JSONName
				}
			}
		}
	}
	return ""
}
