package model

import "go/ast"

// Elem returns the element type of a pointer, slice or map type expression.
func Elem(e ast.Expr) ast.Expr {
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

// Resolve follows local named types that are not structs (type Tags []string)
// to their definition, so element types can be taken from them.
func (v *Version) Resolve(e ast.Expr) ast.Expr {
	for seen := 0; seen < 32; seen++ {
		id, ok := e.(*ast.Ident)
		if !ok {
			return e
		}
		td := v.Types[id.Name]
		if td == nil || td.Struct != nil {
			return e
		}
		e = td.Underlying
	}
	return e
}
