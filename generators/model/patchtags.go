package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
)

// PatchTags are the comment tags of strategic merge patch, which Kubernetes'
// types carry beside their struct tags of the same names: strategic merge
// patch reads the struct tags; a CRD's schema has no patch strategy.
var PatchTags = []string{"patchMergeKey", "patchStrategy"}

// PatchTagValues returns the values of the comment tag +<tag>=<value> in
// comment lines (without their //), as gengo reads them.
func PatchTagValues(lines []string, tag string) []string {
	var out []string
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "+"+tag+"="); ok {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// patchTagWarnings says where a field's +patchMergeKey or +patchStrategy
// comment disagrees with its struct tag: the struct tag wins (what strategic
// merge patch reads). Repeated tags that agree are not worth a word.
func patchTagWarnings(fset *token.FileSet, af *ast.Field, typeName, goName string, groups ...*ast.CommentGroup) []posWarning {
	var lines []string
	for _, g := range groups {
		if g == nil {
			continue
		}
		for _, c := range g.List {
			lines = append(lines, strings.TrimPrefix(c.Text, "//"))
		}
	}
	tags := ""
	if af.Tag != nil {
		tags, _ = strconv.Unquote(af.Tag.Value)
	}
	var out []posWarning
	for _, tag := range PatchTags {
		want := reflect.StructTag(tags).Get(tag)
		for _, v := range PatchTagValues(lines, tag) {
			if v != want {
				in := fmt.Sprintf("struct tag %s:%q", tag, want)
				if want == "" {
					in = "struct tag, which has no " + tag
				}
				out = append(out, posWarning{fset.Position(af.Pos()), fmt.Sprintf("field %s.%s: +%s=%s disagrees with its %s: the struct tag wins (strategic merge patch reads it; a CRD's schema has no patch strategy), and the comment is ignored",
					typeName, goName, tag, v, in)})
				break
			}
		}
	}
	return out
}

// posWarning is a warning at a place in a file, printed relative to the
// project.
type posWarning struct {
	pos token.Position
	msg string
}

// relWarnings prints warnings with their files relative to root.
func relWarnings(root string, ws []posWarning) []string {
	var out []string
	for _, w := range ws {
		pos := w.pos
		if rel, err := filepath.Rel(root, pos.Filename); err == nil && !strings.HasPrefix(rel, "..") {
			pos.Filename = rel
		}
		out = append(out, fmt.Sprintf("%s: %s", pos, w.msg))
	}
	return out
}
