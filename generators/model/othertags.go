package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"unicode"
)

// otherTag is a comment tag of another generator, `<name:...>` on a line of
// its own in the comment of a type, field or constant (Gateway API's
// `<gateway:experimental>`, `<gateway:validateIPAddress>`,
// `<gateway:standard:validation:XValidation:message=...,rule=...>`): its
// generator turns it into the CRD (a CEL rule, a format, a field left out of
// a channel); generate does not read it.
type otherTag struct {
	key string
	pos token.Position
}

// otherTagLine is an opening tag: `<` then a name with a colon; closing tags
// (`</gateway:experimental:description>`) end a tag already counted.
var otherTagLine = regexp.MustCompile(`^<([A-Za-z][\w.-]*:[^>]*)>?`)

// otherTagKey is a tag's kind: the tag up to its first argument. An argument
// is `name=value` after a colon: `gateway:standard:validation:XValidation:message="..."`
// is of kind gateway:standard:validation:XValidation; a tag that takes a
// value itself (`gateway:experimental:validation:Pattern=...`, named, as
// controller-gen's markers are, with a capital) keeps its name.
func otherTagKey(tag string) string {
	name, _, hasValue := strings.Cut(tag, "=")
	if !hasValue {
		return tag
	}
	parts := strings.Split(name, ":")
	if last := parts[len(parts)-1]; len(parts) > 2 && last != "" && unicode.IsLower(rune(last[0])) {
		parts = parts[:len(parts)-1]
	}
	return strings.Join(parts, ":")
}

// otherTags finds the tags of other generators in comment groups.
func otherTags(fset *token.FileSet, groups ...*ast.CommentGroup) []otherTag {
	var out []otherTag
	for _, g := range groups {
		if g == nil {
			continue
		}
		for _, c := range g.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if m := otherTagLine.FindStringSubmatch(text); m != nil {
				out = append(out, otherTag{key: otherTagKey(m[1]), pos: fset.Position(c.Pos())})
			}
		}
	}
	return out
}

// otherTagWarnings says, once per kind of tag across the API, that generate
// does not read the tags of other generators, where the first one is and how
// many there are, and what keeps their effect: the kind's CRD manifest.
func (api *API) otherTagWarnings(tags []otherTag) []string {
	count := map[string]int{}
	var first []otherTag
	for _, t := range tags {
		if count[t.key] == 0 {
			first = append(first, t)
		}
		count[t.key]++
	}
	var out []string
	for _, t := range first {
		pos := t.pos
		if rel, err := filepath.Rel(api.Root, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			pos.Filename = rel
		}
		places := "1 place"
		if n := count[t.key]; n > 1 {
			places = fmt.Sprintf("%d places, the first here", n)
		}
		out = append(out, fmt.Sprintf("%s:%d: comment tag <%s> (%s) is another generator's, which generate does not read: what that generator makes of it "+
			"(a CEL rule, a format, a field left out of a channel...) is not in the served schema. "+
			"To keep its effect, put the CRD manifest that generator writes at config/crd/bases/<group>_<plural>.yaml: the kind's schema is then read from it (docs/markers.md, \"Comment tags of other generators\")",
			pos.Filename, pos.Line, t.key, places))
	}
	return out
}

// valueTags finds the tags of other generators on the constants and
// variables of a file (Gateway API marks enum values
// `<gateway:experimental>`: the experimental channel's enums have them).
func valueTags(fset *token.FileSet, f *ast.File) []otherTag {
	var out []otherTag
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || (gd.Tok != token.CONST && gd.Tok != token.VAR) {
			continue
		}
		out = append(out, otherTags(fset, gd.Doc)...)
		for _, spec := range gd.Specs {
			if vs, ok := spec.(*ast.ValueSpec); ok && vs.Doc != gd.Doc {
				out = append(out, otherTags(fset, vs.Doc)...)
			}
		}
	}
	return out
}
