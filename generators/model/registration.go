package model

import (
	"go/ast"
	"go/token"
	"slices"
	"strconv"
	"strings"
)

// RegistrationNames are the names of a version's scheme registration that
// a package may declare itself, as kubebuilder's groupversion_info.go
// (SchemeBuilder, AddToScheme) and the apimachinery register.go
// (GroupName, SchemeGroupVersion, SchemeBuilder, localSchemeBuilder,
// AddToScheme, Resource, addKnownTypes) do: the generated registration
// declares those the package does not, and uses the package's own.
var RegistrationNames = []string{"GroupName", "SchemeGroupVersion", "SchemeBuilder", "localSchemeBuilder", "AddToScheme", "Resource", "addKnownTypes"}

// builderNames are the registration names that register types: a package
// declaring any of them registers its kinds itself (in init, with
// SchemeBuilder.Register or objectTypes = append(objectTypes, ...)).
var builderNames = []string{"SchemeBuilder", "localSchemeBuilder", "AddToScheme", "addKnownTypes"}

// Declares tells whether the hand-written files of the version declare name
// at package level.
func (v *Version) Declares(name string) bool {
	_, ok := v.Declared[name]
	return ok
}

// OwnRegistration are the names of the scheme builder the package declares
// itself (of SchemeBuilder, localSchemeBuilder, AddToScheme and
// addKnownTypes), where each is declared; empty when the generated
// registration is the only one.
func (v *Version) OwnRegistration() []string {
	var out []string
	for _, name := range builderNames {
		if v.Declares(name) {
			out = append(out, name)
		}
	}
	return out
}

// DeclaredGroupVersion is a package-level value the hand-written files
// write as a schema.GroupVersion literal (kubebuilder's GroupVersion).
type DeclaredGroupVersion struct {
	Name           string
	Group, Version string // the literals; empty where not a string literal
	Pos            token.Position
}

// GroupVersions are the schema.GroupVersion literals the package declares
// at package level, with the group and version they name.
func (v *Version) GroupVersions() []DeclaredGroupVersion {
	var out []DeclaredGroupVersion
	for _, f := range v.Files {
		schemaName := importName(f, "k8s.io/apimachinery/pkg/runtime/schema")
		if schemaName == "" {
			continue
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || (gd.Tok != token.VAR && gd.Tok != token.CONST) {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, name := range vs.Names {
					if i >= len(vs.Values) {
						break
					}
					lit, ok := vs.Values[i].(*ast.CompositeLit)
					if !ok {
						continue
					}
					if sel, ok := lit.Type.(*ast.SelectorExpr); !ok || sel.Sel.Name != "GroupVersion" || !isIdent(sel.X, schemaName) {
						continue
					}
					gv := DeclaredGroupVersion{Name: name.Name, Pos: v.Fset.Position(name.Pos())}
					for _, e := range lit.Elts {
						kv, ok := e.(*ast.KeyValueExpr)
						if !ok {
							continue
						}
						key, _ := kv.Key.(*ast.Ident)
						val := v.stringConst(kv.Value)
						switch {
						case key != nil && key.Name == "Group":
							gv.Group = val
						case key != nil && key.Name == "Version":
							gv.Version = val
						}
					}
					out = append(out, gv)
				}
			}
		}
	}
	return out
}

// ServedGroupVersions are the group versions of GroupVersions the package
// registers its kinds under: those named GroupVersion (kubebuilder's) or
// SchemeGroupVersion (the apimachinery register's, which the generated
// registration uses), and any other the package's own registration uses
// (scheme.AddKnownTypes, scheme.AddKnownTypeWithName, metav1.
// AddToGroupVersion, scheme.Builder{GroupVersion: ...}). Others are for
// other packages to use (Cluster API's GroupVersionInfrastructure beside
// its GroupVersion) and name any group.
func (v *Version) ServedGroupVersions() []DeclaredGroupVersion {
	used := map[string]bool{"GroupVersion": true, "SchemeGroupVersion": true}
	for _, f := range v.Files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				sel, ok := n.Fun.(*ast.SelectorExpr)
				if !ok {
					break
				}
				switch {
				case (sel.Sel.Name == "AddKnownTypes" || sel.Sel.Name == "AddKnownTypeWithName") && len(n.Args) > 0:
					used[rootIdent(n.Args[0])] = true
				case sel.Sel.Name == "AddToGroupVersion" && len(n.Args) > 1:
					used[rootIdent(n.Args[1])] = true
				}
			case *ast.KeyValueExpr:
				if isIdent(n.Key, "GroupVersion") {
					used[rootIdent(n.Value)] = true
				}
			}
			return true
		})
	}
	var out []DeclaredGroupVersion
	for _, gv := range v.GroupVersions() {
		if used[gv.Name] {
			out = append(out, gv)
		}
	}
	return out
}

// rootIdent is the package-level name an expression starts from (X of X,
// X.WithKind("Foo"), &X), or "".
func rootIdent(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.UnaryExpr:
		return rootIdent(e.X)
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok {
			return rootIdent(sel.X)
		}
	}
	return ""
}

// stringConst is the value of a string literal, or of a package-level
// constant declared as one (GroupName), or "".
func (v *Version) stringConst(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			s, _ := strconv.Unquote(e.Value)
			return s
		}
	case *ast.Ident:
		for _, f := range v.Files {
			for _, d := range f.Decls {
				gd, ok := d.(*ast.GenDecl)
				if !ok || gd.Tok != token.CONST {
					continue
				}
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if n.Name == e.Name && i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
								return v.stringConst(lit)
							}
						}
					}
				}
			}
		}
	}
	return ""
}

// Imports are the import paths of the hand-written files, each with where
// it is first imported, in the order of the files.
func (v *Version) Imports() map[string]token.Position {
	out := map[string]token.Position{}
	for _, f := range v.Files {
		for _, imp := range f.Imports {
			p, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				continue
			}
			if _, ok := out[p]; !ok {
				out[p] = v.Fset.Position(imp.Pos())
			}
		}
	}
	return out
}

// importName is the name a file refers to an imported package by, or "".
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// IsRegistrationName tells whether name is one of RegistrationNames.
func IsRegistrationName(name string) bool { return slices.Contains(RegistrationNames, name) }
