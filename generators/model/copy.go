package model

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strings"
)

// Copies of declarations into another version of a group: `create version
// --from` copies a kind's *_types.go files, and the request type of a custom
// subresource is copied, with its fields, into the versions that lack it.

// RenamePackage is src, a file of package from, as a file of package to.
func RenamePackage(src []byte, from, to string) []byte {
	clause := regexp.MustCompile(`(?m)^package ` + regexp.QuoteMeta(from) + `$`)
	return clause.ReplaceAll(src, []byte("package "+to))
}

// RequestSource is the version a request type of kind k's custom
// subresources is copied from into a version that lacks it: the kind's
// storage version if it declares it, otherwise the most preferred version of
// the kind that does; nil if none does.
func (g *Group) RequestSource(k *Kind, request string) *Version {
	versions := []string{k.StorageVersion}
	versions = append(versions, k.Versions...)
	for _, name := range versions {
		if v := g.Version(name); v != nil && slices.Contains(v.Requests, request) {
			return v
		}
	}
	return nil
}

// CopyTypes returns a file of package pkg declaring the types names as
// version v declares them, with their doc comments and markers, and with
// the types of the same file they use (their fields' types, in turn), but
// for those has reports (declared where the copy goes). A file holding
// nothing else is copied whole, as `create version --from` copies it (its
// header and comments kept); otherwise header heads the copy, and the
// imports are those the declarations use.
func (v *Version) CopyTypes(names []string, pkg string, header []byte, has func(string) bool) ([]byte, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no types to copy")
	}
	pos, ok := v.Declared[names[0]]
	if !ok {
		return nil, fmt.Errorf("%s: no type %s", v.Dir, names[0])
	}
	var f *ast.File
	for _, file := range v.Files {
		if v.Fset.Position(file.Pos()).Filename == pos.Filename {
			f = file
		}
	}
	if f == nil {
		return nil, fmt.Errorf("%s: not parsed", pos.Filename)
	}
	src, err := os.ReadFile(pos.Filename)
	if err != nil {
		return nil, err
	}
	want, err := typesToCopy(f, names, has, func(name string) error {
		return fmt.Errorf("%s: type %s is not declared in %s", v.Dir, name, pos.Filename)
	})
	if err != nil {
		return nil, err
	}
	if onlyTypes(f, want) {
		// Nothing else in the file: the file, whole.
		return RenamePackage(src, f.Name.Name, pkg), nil
	}
	decls, used := v.copyDecls(f, src, want)
	var out bytes.Buffer
	out.Write(header)
	fmt.Fprintf(&out, "\npackage %s\n\n", pkg)
	var imports []string
	for _, imp := range f.Imports {
		name := strings.Trim(imp.Path.Value, "`\"")
		name = name[strings.LastIndex(name, "/")+1:]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if used[name] {
			imports = append(imports, string(src[v.Fset.Position(imp.Pos()).Offset:v.Fset.Position(imp.End()).Offset]))
		}
	}
	if len(imports) > 0 {
		fmt.Fprintf(&out, "import (\n\t%s\n)\n\n", strings.Join(imports, "\n\t"))
	}
	out.Write(decls)
	return out.Bytes(), nil
}

// typesToCopy are names and the types of f their fields use (in turn), but
// for those has reports.
func typesToCopy(f *ast.File, names []string, has func(string) bool, missing func(string) error) (map[string]bool, error) {
	specs := map[string]*ast.TypeSpec{}
	for _, d := range f.Decls {
		if gd, ok := d.(*ast.GenDecl); ok && gd.Tok == token.TYPE {
			for _, s := range gd.Specs {
				specs[s.(*ast.TypeSpec).Name.Name] = s.(*ast.TypeSpec)
			}
		}
	}
	want := map[string]bool{}
	var add func(name string)
	add = func(name string) {
		ts, ok := specs[name]
		if !ok || want[name] {
			return
		}
		want[name] = true
		var walk func(n ast.Node) bool
		walk = func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				ast.Inspect(n.Type, walk)
				return false
			case *ast.SelectorExpr:
				return false // another package's
			case *ast.Ident:
				if _, ok := specs[n.Name]; ok && !has(n.Name) {
					add(n.Name)
				}
			}
			return true
		}
		ast.Inspect(ts.Type, walk)
	}
	for _, name := range names {
		if _, ok := specs[name]; !ok {
			return nil, missing(name)
		}
		add(name)
	}
	return want, nil
}

// onlyTypes tells whether f declares nothing but imports and the wanted types.
func onlyTypes(f *ast.File, want map[string]bool) bool {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if ok && gd.Tok == token.IMPORT {
			continue
		}
		if !ok || gd.Tok != token.TYPE {
			return false
		}
		for _, s := range gd.Specs {
			if !want[s.(*ast.TypeSpec).Name.Name] {
				return false
			}
		}
	}
	return true
}

// copyDecls copies the wanted type declarations of f (src) as written,
// with their doc comments and the markers a blank line above them, each
// with its own type keyword; used are the package names they refer to.
func (v *Version) copyDecls(f *ast.File, src []byte, want map[string]bool) (decls []byte, used map[string]bool) {
	offset := func(p token.Pos) int { return v.Fset.Position(p).Offset }
	var out bytes.Buffer
	used = map[string]bool{}
	after := f.Name.End()
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.TYPE {
			after = d.End()
			continue
		}
		for _, s := range gd.Specs {
			ts := s.(*ast.TypeSpec)
			if !want[ts.Name.Name] {
				after = ts.End()
				continue
			}
			start, doc, prefix := ts.Pos(), ts.Doc, "type "
			if len(gd.Specs) == 1 {
				start, prefix = gd.Pos(), ""
				if doc == nil {
					doc = gd.Doc
				}
			}
			// The markers a blank line above the doc comment go with it.
			for _, c := range markerGroups(v.Fset, f, after, doc, start) {
				if c.Pos() < start {
					start = c.Pos()
				}
			}
			// A spec of a type ( ... ) block gets its own type keyword.
			out.WriteString(string(src[offset(start):offset(ts.Name.Pos())]) + prefix + string(src[offset(ts.Name.Pos()):offset(ts.End())]) + "\n\n")
			ast.Inspect(ts.Type, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok {
						used[id.Name] = true
					}
				}
				return true
			})
			after = ts.End()
		}
		after = gd.End()
	}
	return out.Bytes(), used
}
