package apiserverboot

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function outside _test.go files may be,
// from its func keyword to its closing brace.
const maxFuncLines = 80

// funcLenSkipped are the module's folders whose code is not ours to keep
// short: the generated example project and vendored third-party code.
var funcLenSkipped = map[string]bool{"example": true, "third_party": true}

// TestFunctionLength fails listing every function over maxFuncLines lines
// in the module's Go files, except tests, generated files (zz_generated.*
// or a "Code generated ... DO NOT EDIT." header) and funcLenSkipped.
func TestFunctionLength(t *testing.T) {
	long, err := longFunctions(".", maxFuncLines)
	if err != nil {
		t.Fatal(err)
	}
	if len(long) > 0 {
		t.Errorf("%d functions over %d lines; split them into named steps:\n%s", len(long), maxFuncLines, strings.Join(long, "\n"))
	}
}

// longFunctions walks root and returns "file:line: name is N lines" for
// every function declaration over max lines.
func longFunctions(root string, max int) ([]string, error) {
	var long []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (funcLenSkipped[filepath.ToSlash(path)] || strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.End())
			if n := end.Line - start.Line + 1; n > max {
				long = append(long, fmt.Sprintf("%s:%d: %s is %d lines", filepath.ToSlash(path), start.Line, funcName(fn), n))
			}
		}
		return nil
	})
	return long, err
}

// funcName is fn's name, with its receiver type for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if idx, ok := recv.(*ast.IndexExpr); ok {
		recv = idx.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return "(" + id.Name + ")." + fn.Name.Name
	}
	return fn.Name.Name
}
