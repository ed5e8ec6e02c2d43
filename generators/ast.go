package generators

import "go/ast"

// elem returns the element type of a pointer, slice or map type expression.
func elem(e ast.Expr) ast.Expr {
	switch t := e.(type) {
	case *ast.StarExpr:
		return t.X
	case *ast.ArrayType:
		return t.Elt
	case *ast.MapType:
		return t.Value
	}
	return e
}
