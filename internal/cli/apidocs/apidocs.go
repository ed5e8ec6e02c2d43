// Package apidocs writes the API reference of a project (build docs): per
// group, its versions and kinds with what their markers declare (scope,
// names, categories, subresources, printer columns, storage version), and
// every field with what the schema the server validates against says of it
// (type, required, default, bounds, pattern, enum, list and map types, CEL
// rules with their messages), from crdschema's schemas: the code generate
// writes the server's schemas with, not a reading of its own.
package apidocs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/crdschema"
	"github.com/apiserver-boot/apiserver-boot/generators/driver"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// Group is the reference of one API group.
type Group struct {
	Name     string // the group, e.g. stable.example.com
	Package  string // its package under pkg/apis, e.g. stable
	Versions []Version
}

// Version is one version of a group, with its kinds.
type Version struct {
	Name  string
	Kinds []Kind
}

// Kind is one kind in one version: its markers and its schema.
type Kind struct {
	*model.Kind
	Group  string
	Schema *apiextensionsv1.JSONSchemaProps
	// Sample is the kind's sample (config/samples), and where it is.
	Sample, SamplePath string
}

// Load gathers the reference of every group of api from the schemas
// generate gives the server, with their descriptions kept: errors in the
// types or markers name their file:line.
func Load(api *model.API) ([]Group, error) {
	// A kind's CRD manifest gives its names, columns and subresources, as
	// generate serves them.
	manifests, err := crdschema.LoadManifests(api)
	if err != nil {
		return nil, err
	}
	if _, err := crdschema.ApplyManifests(api, manifests); err != nil {
		return nil, err
	}
	schemas, _, err := crdschema.GenerateDocumented(api, driver.LoadEnv())
	if err != nil {
		return nil, err
	}
	return Build(api, schemas)
}

// Build gathers the reference of every group of api from schemas (the
// kinds' schemas, with their descriptions: crdschema.GenerateDocumented).
func Build(api *model.API, schemas []crdschema.Schema) ([]Group, error) {
	byKey := map[string]crdschema.Schema{}
	for _, s := range schemas {
		byKey[s.Key()] = s
	}
	var out []Group
	for _, g := range api.Groups {
		group := Group{Name: g.FullName, Package: g.Name}
		for _, v := range g.Versions {
			version := Version{Name: v.Name}
			kinds := slices.Clone(v.Kinds)
			sort.Slice(kinds, func(i, j int) bool { return kinds[i].Kind < kinds[j].Kind })
			for _, k := range kinds {
				s, ok := byKey[g.FullName+"/"+v.Name+"/"+k.Kind]
				if !ok {
					return nil, fmt.Errorf("%s/%s %s: no schema", g.FullName, v.Name, k.Kind)
				}
				kind := Kind{Kind: groupKind(g, k), Group: g.FullName, Schema: s.Schema}
				kind.SamplePath = filepath.ToSlash(generators.SamplePath(g.Name, v.Name, k.Kind))
				if b, err := os.ReadFile(filepath.Join(api.Root, kind.SamplePath)); err == nil {
					kind.Sample = string(b)
				} else if b, err := generators.Sample(g.FullName, v.Name, k.Kind, s.Schema); err == nil {
					kind.Sample, kind.SamplePath = string(b), ""
				}
				version.Kinds = append(version.Kinds, kind)
			}
			if len(version.Kinds) > 0 {
				group.Versions = append(group.Versions, version)
			}
		}
		if len(group.Versions) > 0 {
			out = append(out, group)
		}
	}
	return out, nil
}

// groupKind is the kind k of a version with what the group knows of it
// across versions (its storage version, the versions serving it).
func groupKind(g *model.Group, k *model.Kind) *model.Kind {
	for _, gk := range g.Kinds {
		if gk.Kind == k.Kind {
			merged := *k
			if merged.StorageVersion == "" {
				merged.StorageVersion = gk.StorageVersion
			}
			if len(merged.Versions) == 0 {
				merged.Versions = gk.Versions
			}
			return &merged
		}
	}
	return k
}

// Write writes files (name: content) into dir, each only when its content
// differs from what is there: a second run with nothing changed writes
// Pages is the reference of api, by file: a Markdown page per group, or
// with html the static site. A project (at root) without kinds is an error.
func Pages(api *model.API, root string, html bool) (map[string][]byte, error) {
	groups, err := Load(api)
	if err != nil {
		return nil, err
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("no kinds under %s: add one with `apiserver-boot create group version resource`", filepath.Join(root, "pkg", "apis"))
	}
	if html {
		return HTML(groups)
	}
	return Markdown(groups), nil
}

// nothing. It returns the files written.
func Write(dir string, files map[string][]byte) ([]string, error) {
	var written []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range files {
			if !yield(n) {
				return
			}
		}
	}) {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return written, err
		}
		tmp := path + ".tmp"
		if err := os.WriteFile(tmp, files[name], 0o644); err != nil {
			return written, err
		}
		if err := os.Rename(tmp, path); err != nil {
			return written, err
		}
		written = append(written, path)
	}
	return written, nil
}

// anchor is the id of a kind's section, or of one of its object fields.
func anchor(version, kind, path string) string {
	a := strings.ToLower(version + "-" + kind)
	if path != "" {
		a += "-" + strings.ToLower(strings.NewReplacer(".", "-", "[]", "items", "{}", "values").Replace(strings.TrimPrefix(path, ".")))
	}
	return a
}

// node is one field (or the kind itself) of a schema, with its JSON path.
type node struct {
	path     string
	name     string
	schema   *apiextensionsv1.JSONSchemaProps
	required bool
}

// objectOf is the object schema a field holds: itself, its items' or its
// values' (nested lists and maps), with the path suffix that reaches it.
func objectOf(s *apiextensionsv1.JSONSchemaProps) (*apiextensionsv1.JSONSchemaProps, string) {
	suffix := ""
	for depth := 0; depth < 8; depth++ {
		switch {
		case s.Type == "object" && len(s.Properties) > 0:
			return s, suffix
		case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
			s, suffix = s.Items.Schema, suffix+"[]"
		case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s, suffix = s.AdditionalProperties.Schema, suffix+"{}"
		default:
			return nil, ""
		}
	}
	return nil, ""
}

// typeOf is a field's type in words.
func typeOf(s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		return "integer or string"
	case s.Type == "array" && s.Items != nil && s.Items.Schema != nil:
		return "list of " + typeOf(s.Items.Schema)
	case s.Type == "object" && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil && len(s.Properties) == 0:
		return "map of string to " + typeOf(s.AdditionalProperties.Schema)
	case s.Type == "":
		return "any"
	}
	t := s.Type
	if s.Format != "" {
		t += " (" + s.Format + ")"
	}
	return t
}

// constraints are what the schema requires of a field's value, in words.
func constraints(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if s.Default != nil {
		out = append(out, "Default: `"+string(s.Default.Raw)+"`.")
	}
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, "`"+string(e.Raw)+"`")
		}
		out = append(out, "One of "+strings.Join(vals, ", ")+".")
	}
	if s.Minimum != nil {
		if s.ExclusiveMinimum {
			out = append(out, "Greater than "+num(*s.Minimum)+".")
		} else {
			out = append(out, "At least "+num(*s.Minimum)+".")
		}
	}
	if s.Maximum != nil {
		if s.ExclusiveMaximum {
			out = append(out, "Less than "+num(*s.Maximum)+".")
		} else {
			out = append(out, "At most "+num(*s.Maximum)+".")
		}
	}
	if s.MultipleOf != nil {
		out = append(out, "A multiple of "+num(*s.MultipleOf)+".")
	}
	out = append(out, bounds("character", s.MinLength, s.MaxLength)...)
	out = append(out, bounds("item", s.MinItems, s.MaxItems)...)
	out = append(out, bounds("entry", s.MinProperties, s.MaxProperties)...)
	if s.Pattern != "" {
		out = append(out, "Matches the pattern `"+s.Pattern+"`.")
	}
	if s.UniqueItems {
		out = append(out, "Items are unique.")
	}
	if s.XListType != nil {
		switch *s.XListType {
		case "set":
			out = append(out, "List type `set`: items are unique scalars, merged as a set.")
		case "map":
			var keys []string
			for _, k := range s.XListMapKeys {
				keys = append(keys, "`"+k+"`")
			}
			out = append(out, "List type `map`: items are keyed by "+strings.Join(keys, " and ")+" (unique), merged by key.")
		case "atomic":
			out = append(out, "List type `atomic`: replaced as a whole.")
		}
	}
	if s.XMapType != nil {
		out = append(out, "Map type `"+*s.XMapType+"`.")
	}
	if s.Nullable {
		out = append(out, "May be null.")
	}
	if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
		out = append(out, "Fields not in the schema are kept.")
	}
	if s.XEmbeddedResource {
		out = append(out, "An embedded object (apiVersion, kind, metadata).")
	}
	for _, r := range s.XValidations {
		out = append(out, rule(r))
	}
	return out
}

// rule is a CEL rule in words: immutability said so, its message, the rule.
func rule(r apiextensionsv1.ValidationRule) string {
	var b strings.Builder
	switch strings.ReplaceAll(r.Rule, " ", "") {
	case "self==oldSelf":
		b.WriteString("Immutable once set. ")
	}
	b.WriteString("Rule " + code(r.Rule))
	if r.Message != "" {
		b.WriteString(", else: " + code(r.Message))
	} else if r.MessageExpression != "" {
		b.WriteString(", else the message of " + code(r.MessageExpression))
	}
	if r.FieldPath != "" {
		b.WriteString(" (on `" + r.FieldPath + "`)")
	}
	if r.Reason != nil {
		b.WriteString(" (reason " + string(*r.Reason) + ")")
	}
	if r.OptionalOldSelf != nil && *r.OptionalOldSelf {
		b.WriteString(" (also on create, with no old value)")
	}
	b.WriteString(".")
	return b.String()
}

func bounds(unit string, min, max *int64) []string {
	plural := func(n int64) string {
		if n == 1 {
			return fmt.Sprintf("1 %s", unit)
		}
		return fmt.Sprintf("%d %ss", n, unit)
	}
	switch {
	case min != nil && max != nil:
		return []string{fmt.Sprintf("%d to %s.", *min, plural(*max))}
	case min != nil:
		return []string{"At least " + plural(*min) + "."}
	case max != nil:
		return []string{"At most " + plural(*max) + "."}
	}
	return nil
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// schemaHash identifies an object schema: the same nested type met again
// (the conditions of each kind's status) is linked to, not repeated.
func schemaHash(s *apiextensionsv1.JSONSchemaProps) string {
	b, _ := json.Marshal(s)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// isObjectMeta tells whether a root property is the kind's metadata.
func isMeta(path string) bool { return path == ".metadata" }

// scopeOf is a kind's scope in words.
func scopeOf(k *model.Kind) string {
	if k.Scope == project.Cluster {
		return "Cluster"
	}
	return "Namespaced"
}
