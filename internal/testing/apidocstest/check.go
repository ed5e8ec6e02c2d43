// Package apidocstest checks an API reference page against a schema: every
// field documented with its description and what the schema requires of it.
package apidocstest

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// Missing lists what the Markdown page md does not say of the fields of
// schema s (a kind's, from its root): a field whose name, with its
// description (when descriptions is set) and each of its constraints, is in
// no field entry of the page; a CEL rule or message found nowhere.
func Missing(md string, s *apiextensionsv1.JSONSchemaProps, descriptions bool) []string {
	entries := fieldEntries(md)
	var out []string
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps, depth int)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps, depth int) {
		if depth > 10 {
			return
		}
		for name, p := range s.Properties {
			fp := path + "." + name
			if fp == ".metadata" {
				continue
			}
			want := wanted(&p, descriptions)
			found := false
			for _, e := range entries[name] {
				if containsAll(e, want) {
					found = true
					break
				}
			}
			if !found {
				out = append(out, fmt.Sprintf("%s: no entry says %q", fp, want))
			}
			walk(fp, &p, depth+1)
		}
		if s.Items != nil && s.Items.Schema != nil {
			items := s.Items.Schema
			if len(items.Properties) == 0 && !containsAll(squash(md), wanted(items, false)) {
				out = append(out, fmt.Sprintf("%s[]: the page does not say %q", path, wanted(items, false)))
			}
			for _, r := range items.XValidations {
				if !containsAll(squash(md), []string{squash(r.Message), squash(r.Rule)}) {
					out = append(out, fmt.Sprintf("%s[]: rule %q (%q) not on the page", path, r.Rule, r.Message))
				}
			}
			walk(path+"[]", items, depth+1)
		}
		if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
			values := s.AdditionalProperties.Schema
			if len(values.Properties) == 0 && !containsAll(squash(md), wanted(values, false)) {
				out = append(out, fmt.Sprintf("%s{}: the page does not say %q", path, wanted(values, false)))
			}
			walk(path+"{}", values, depth+1)
		}
	}
	walk("", s, 0)
	for _, r := range s.XValidations {
		if !containsAll(squash(md), []string{squash(r.Rule), squash(r.Message)}) {
			out = append(out, fmt.Sprintf("rule %q (%q) of the kind not on the page", r.Rule, r.Message))
		}
	}
	return out
}

var entryStart = regexp.MustCompile("(?m)^- `[^`]*\\.([^.`\\[{]+)(?:\\[\\]|\\{\\})*` \\(")

// fieldEntries are the field entries of the page (the entry's line and its
// indented lines), by field name.
func fieldEntries(md string) map[string][]string {
	out := map[string][]string{}
	idx := entryStart.FindAllStringSubmatchIndex(md, -1)
	for _, m := range idx {
		end := len(md)
		if next := regexp.MustCompile(`\n[^ ]`).FindStringIndex(md[m[0]:]); next != nil {
			end = m[0] + next[0]
		}
		name := md[m[2]:m[3]]
		out[name] = append(out[name], squash(md[m[0]:end]))
	}
	return out
}

// wanted are the strings a field's entry must hold.
func wanted(s *apiextensionsv1.JSONSchemaProps, descriptions bool) []string {
	var w []string
	if descriptions && s.Description != "" {
		w = append(w, squash(s.Description))
	}
	if s.Default != nil {
		w = append(w, string(s.Default.Raw))
	}
	for _, e := range s.Enum {
		w = append(w, string(e.Raw))
	}
	for _, n := range []*float64{s.Minimum, s.Maximum, s.MultipleOf} {
		if n != nil {
			w = append(w, " "+strconv.FormatFloat(*n, 'f', -1, 64))
		}
	}
	for _, n := range []*int64{s.MinLength, s.MaxLength, s.MinItems, s.MaxItems, s.MinProperties, s.MaxProperties} {
		if n != nil {
			w = append(w, strconv.FormatInt(*n, 10))
		}
	}
	if s.Pattern != "" {
		w = append(w, s.Pattern)
	}
	if s.XListType != nil {
		w = append(w, "List type `"+*s.XListType+"`")
	}
	for _, k := range s.XListMapKeys {
		w = append(w, "`"+k+"`")
	}
	if s.XMapType != nil {
		w = append(w, "Map type `"+*s.XMapType+"`")
	}
	for _, r := range s.XValidations {
		w = append(w, r.Rule, r.Message)
	}
	for i := range w {
		w[i] = squash(w[i])
	}
	return w
}

func containsAll(s string, want []string) bool {
	for _, w := range want {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

// squash makes whitespace and paragraph breaks single spaces.
func squash(s string) string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "<br>", " "), "&lt;", "<")
	return strings.Join(strings.Fields(s), " ")
}

// ServedSchemas reads the schemas a project's apiserver validates against,
// from its generated pkg/apis/zz_generated.schemas.go, by
// "<group>/<version>/<Kind>".
func ServedSchemas(root string) (map[string]*apiextensionsv1.JSONSchemaProps, error) {
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(root, "pkg", "apis", "zz_generated.schemas.go"), nil, 0)
	if err != nil {
		return nil, err
	}
	out := map[string]*apiextensionsv1.JSONSchemaProps{}
	var bad error
	ast.Inspect(f, func(n ast.Node) bool {
		kv, ok := n.(*ast.KeyValueExpr)
		if !ok {
			return true
		}
		key, ok := kv.Key.(*ast.BasicLit)
		body, ok2 := kv.Value.(*ast.CompositeLit)
		if !ok || !ok2 {
			return true
		}
		for _, e := range body.Elts {
			field, ok := e.(*ast.KeyValueExpr)
			if !ok {
				continue
			}
			if id, ok := field.Key.(*ast.Ident); !ok || id.Name != "OpenAPIV3" {
				continue
			}
			lit, ok := field.Value.(*ast.BasicLit)
			if !ok {
				continue
			}
			k, _ := strconv.Unquote(key.Value)
			js, _ := strconv.Unquote(lit.Value)
			var s apiextensionsv1.JSONSchemaProps
			if err := json.Unmarshal([]byte(js), &s); err != nil {
				bad = fmt.Errorf("%s: %w", k, err)
			}
			out[k] = &s
		}
		return false
	})
	if bad != nil {
		return nil, bad
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no schemas in %s", filepath.Join(root, "pkg", "apis", "zz_generated.schemas.go"))
	}
	return out, nil
}
