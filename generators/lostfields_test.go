package generators

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// TestReadFields: a hand-written conversion reads the fields it selects on
// its first parameter; handing the parameter to another function than the
// generated autoConvert_ may read any.
func TestReadFields(t *testing.T) {
	for _, tc := range []struct {
		body string
		read string // sorted, comma separated
		all  bool
	}{
		{"if err := autoConvert_v2_A_To_stable_A(in, out, s); err != nil { return err }\nreturn nil", "", false},
		{"if err := autoConvert_v2_A_To_stable_A(in, out, s); err != nil { return err }\nout.CronSpec = in.Schedule\nreturn nil", "Schedule", false},
		{"out.X = &in.Y\nreturn convertRest(in, out)", "Y", true},
		{"p := in\nout.X = p.Y\nreturn nil", "", true},
	} {
		f, err := parser.ParseFile(token.NewFileSet(), "x.go", "package v2\nfunc Convert_v2_A_To_stable_A(in *A, out *stable.A, s conversion.Scope) error {\n"+tc.body+"\n}\n", 0)
		if err != nil {
			t.Fatal(err)
		}
		read, all := readFields(f.Decls[0].(*ast.FuncDecl))
		var names []string
		for _, n := range []string{"CronSpec", "Schedule", "X", "Y"} {
			if read[n] {
				names = append(names, n)
			}
		}
		if strings.Join(names, ",") != tc.read || all != tc.all {
			t.Errorf("%q: read %v all %v, want %q %v", tc.body, names, all, tc.read, tc.all)
		}
	}
}

// TestFieldPaths: a field is named by its JSON path from the kinds reaching
// its type, through pointers, slices, maps, named slices and inlined structs.
func TestFieldPaths(t *testing.T) {
	src := `package v2
type CronTab struct {
	Spec CronTabSpec ` + "`json:\"spec\"`" + `
}
type CronTabSpec struct {
	Common ` + "`json:\",inline\"`" + `
	Jobs Jobs ` + "`json:\"jobs\"`" + `
	ByName map[string]*Job ` + "`json:\"byName\"`" + `
}
type Common struct {
	Template *Job ` + "`json:\"template\"`" + `
}
type Jobs []Job
type Job struct {
	Image string ` + "`json:\"image\"`" + `
	Count int64 ` + "`json:\"count\"`" + `
}
`
	v := testVersion(t, src)
	l := lossReporter{api: &State{API: &model.API{Root: "/"}}, g: &model.Group{Name: "stable"}, v: v}
	kinds, path := l.where(v, "Job", "Image")
	if kinds != "CronTab" || path != "spec.template.image" {
		t.Errorf("where(Job.Image) = %q %q, want CronTab spec.template.image", kinds, path)
	}
	var all []string
	for _, p := range typePaths(v)["Job"] {
		all = append(all, p.path)
	}
	if got := strings.Join(all, " "); got != "spec.template spec.jobs[] spec.byName{}" {
		t.Errorf("paths of Job: %s", got)
	}
	for expr, want := range map[string]string{"int32": "int32", "*int64": "*int64", "[]string": "[]string", "map[string]int32": "map[string]int32", "Jobs": "", "Job": "", "metav1.Time": ""} {
		e, err := parser.ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		if got := basicShape(v, e); got != want {
			t.Errorf("basicShape(%s) = %q, want %q", expr, got, want)
		}
	}
}

// testVersion reads a version's types from source, as the model does.
func testVersion(t *testing.T, src string) *model.Version {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "crontab_types.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	v := &model.Version{Name: "v2", Fset: fset, Types: map[string]*model.TypeDecl{}, Kinds: []*model.Kind{{KindDescriptor: project.KindDescriptor{Kind: "CronTab"}}}}
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			continue
		}
		for _, spec := range gd.Specs {
			ts := spec.(*ast.TypeSpec)
			td := &model.TypeDecl{Name: ts.Name.Name, Pos: fset.Position(ts.Pos())}
			st, isStruct := ts.Type.(*ast.StructType)
			if !isStruct {
				td.Underlying = ts.Type
			} else {
				td.Struct = st
				for _, af := range st.Fields.List {
					tag := strings.Trim(af.Tag.Value, "`")
					name := strings.TrimSuffix(strings.TrimPrefix(tag, `json:"`), `"`)
					fld := &model.Field{Type: af.Type, Inline: name == ",inline"}
					if len(af.Names) > 0 {
						fld.GoName = af.Names[0].Name
					} else {
						fld.GoName = identName(af.Type)
					}
					if !fld.Inline {
						fld.JSONName = name
					}
					td.Fields = append(td.Fields, fld)
				}
			}
			v.Types[ts.Name.Name] = td
		}
	}
	return v
}

func identName(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
