package generators

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// TestEveryGeneratedMethodIsReserved: every method the generators declare
// on the API types of example/ (protobuf, deepcopy, model names...) is refused
// as a field name of that type, and is listed in docs/markers.md. The
// reserved names are read from the generated output, so a generator that
// starts declaring another method extends them by itself; the docs follow.
// (A struct with a field named like a protobuf method never gets the
// protobuf methods of those names: TestFieldsNamedLikeProtobufMethods.)
func TestEveryGeneratedMethodIsReserved(t *testing.T) {
	root, _ := filepath.Abs("../example")
	group := filepath.Join(root, "pkg", "apis", "stable")
	var out []files.File
	read := func(dir string) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), "zz_generated") && strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				b, err := os.ReadFile(filepath.Join(dir, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, files.File{Path: filepath.Join(dir, e.Name()), Content: b})
			}
		}
	}
	v1 := filepath.Join(group, "v1")
	read(group)
	read(v1)

	// A version whose types have a field named like each method generated
	// on them, in the version or in the internal package.
	methods := map[string]map[string]bool{}
	for _, dir := range []string{group, v1} {
		d, err := declsOf(out, dir)
		if err != nil {
			t.Fatal(err)
		}
		for typ, ms := range d.methods {
			for m := range ms {
				if methods[typ] == nil {
					methods[typ] = map[string]bool{}
				}
				methods[typ][m] = true
			}
		}
	}
	var src strings.Builder
	src.WriteString("package v1\n")
	names := map[string]bool{}
	var wants []string
	for typ, ms := range methods {
		fmt.Fprintf(&src, "type %s struct {\n", typ)
		for m := range ms {
			fmt.Fprintf(&src, "\t%s int `json:\"x\"`\n", m)
			names[m] = true
			wants = append(wants, fmt.Sprintf("field %s.%s: ", typ, m))
		}
		src.WriteString("}\n")
	}
	for _, must := range []string{"Size", "Marshal", "Unmarshal", "Reset", "DeepCopy", "DeepCopyInto", "DeepCopyObject", "OpenAPIModelName"} {
		if !names[must] {
			t.Errorf("example/ declares no method %s on its types: the test reads the wrong files", must)
		}
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, filepath.Join(v1, "fields.go"), src.String(), 0)
	if err != nil {
		t.Fatal(err)
	}
	v := &model.Version{Name: "v1", Dir: v1, Fset: fset, Files: []*ast.File{f}, Declared: map[string]token.Position{}}
	api := &State{API: &model.API{Root: root, Groups: []*model.Group{{Name: "stable", Dir: group, Versions: []*model.Version{v}}}}}
	err = checkGeneratedNames(api, out)
	if err == nil {
		t.Fatal("no clash found")
	}
	for _, want := range wants {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("a field named like a generated method is not refused: want %q in\n%v", want, err)
		}
	}

	// docs/markers.md lists them for users.
	doc, err := os.ReadFile("../docs/markers.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "## Names the generated code reserves"); i >= 0 {
		section = section[i:]
	} else {
		t.Fatal("docs/markers.md has no section \"Names the generated code reserves\"")
	}
	var missing []string
	for m := range names {
		if !regexp.MustCompile("`" + m + "`").MatchString(section) {
			missing = append(missing, m)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/markers.md does not list the reserved method names %v", missing)
	}
}
