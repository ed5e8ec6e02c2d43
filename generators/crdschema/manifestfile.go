package crdschema

// The CustomResourceDefinition manifest a project keeps for a kind
// (kubebuilder's config/crd/bases/<group>_<plural>.yaml, or the path of a
// +crd:manifest marker on the kind's type). A kind with a manifest is
// served as kube-apiserver serves that CRD: its schema, printer columns,
// names, selectable fields and subresources are the manifest's. Every
// error names the manifest's file:line.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
)

// Manifest is one CRD manifest of the project.
type Manifest struct {
	// Path is the manifest's path relative to the project, with slashes.
	Path string
	CRD  *apiextensionsv1.CustomResourceDefinition
	// doc is the YAML document, for the lines of its fields.
	doc *yaml.Node
}

// Manifests are the manifests of a project's kinds, by Key.
type Manifests map[string]*Manifest

// Key identifies a kind across its versions: "<group full name>/<Kind>".
func ManifestKey(group, kind string) string { return group + "/" + kind }

// ManifestPath is where kubebuilder (controller-gen's crd output) writes the
// CRD of a kind: config/crd/bases/<group>_<plural>.yaml.
func ManifestPath(fullGroup, plural string) string {
	return "config/crd/bases/" + fullGroup + "_" + plural + ".yaml"
}

// LoadManifests finds and reads the manifest of every kind of api: the path its
// +crd:manifest marker names (which must exist), or ManifestPath when that
// file exists. A manifest must describe the kind (group, plural, kind,
// scope) and have a schema for every version the project serves it in.
func LoadManifests(api *model.API) (Manifests, error) {
	out := Manifests{}
	var errs []string
	for _, g := range api.Groups {
		for _, k := range g.Kinds {
			rel := ManifestPath(g.FullName, k.Plural)
			if k.Manifest != "" {
				rel = filepath.ToSlash(filepath.Clean(k.Manifest))
			}
			content, err := os.ReadFile(filepath.Join(api.Root, filepath.FromSlash(rel)))
			switch {
			case errors.Is(err, os.ErrNotExist) && k.Manifest == "":
				continue // no manifest: the markers give the schema
			case errors.Is(err, os.ErrNotExist):
				errs = append(errs, fmt.Sprintf("%s: +%s=%s on %s: no such file in the project (%s); the path is relative to the project's root", relPos(api.Root, k.ManifestPos.String()), model.ManifestMarker, k.Manifest, k.Kind, api.Root))
				continue
			case err != nil:
				return nil, err
			}
			m, err := ParseManifest(rel, content)
			if err == nil {
				err = m.check(g, k)
			}
			if err != nil {
				errs = append(errs, err.Error())
				continue
			}
			out[ManifestKey(g.FullName, k.Kind)] = m
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return out, nil
}

// ParseManifest reads a CRD manifest (one YAML document, apiextensions.k8s.io/v1
// CustomResourceDefinition); rel names it in errors.
func ParseManifest(rel string, content []byte) (*Manifest, error) {
	dec := yaml.NewDecoder(bytes.NewReader(content))
	var docs []*yaml.Node
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", rel, err)
		}
		if len(n.Content) > 0 && n.Content[0].Kind != 0 {
			docs = append(docs, &n)
		}
	}
	if len(docs) != 1 {
		return nil, fmt.Errorf("%s: holds %d YAML documents; a kind's CRD manifest is one CustomResourceDefinition", rel, len(docs))
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	m := &Manifest{Path: rel, CRD: crd, doc: docs[0].Content[0]}
	// Strict, as kube-apiserver's field validation: a misspelt field of
	// the CRD would otherwise be dropped without a word.
	if err := sigsyaml.UnmarshalStrict(content, crd); err != nil {
		if f := unknownField.FindStringSubmatch(err.Error()); f != nil {
			return nil, fmt.Errorf("%s:%d: unknown field %q of a CustomResourceDefinition (apiextensions.k8s.io/v1)", rel, keyLine(m.doc, f[1]), f[1])
		}
		return nil, fmt.Errorf("%s: %v", rel, err)
	}
	if crd.APIVersion != "apiextensions.k8s.io/v1" || crd.Kind != "CustomResourceDefinition" {
		return nil, fmt.Errorf("%s: apiVersion %q, kind %q: want apiVersion apiextensions.k8s.io/v1, kind CustomResourceDefinition", m.Pos("kind"), crd.APIVersion, crd.Kind)
	}
	return m, nil
}

// unknownField finds the field a strict decoding refused.
var unknownField = regexp.MustCompile(`unknown field "(?:[^"]*\.)?([^".]+)"`)

// keyLine is the line of the first mapping key named key below n (its
// own keys first), or n's.
func keyLine(n *yaml.Node, key string) int {
	if l, ok := findKey(n, key); ok {
		return l
	}
	return n.Line
}

func findKey(n *yaml.Node, key string) (int, bool) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				return n.Content[i].Line, true
			}
		}
	}
	for _, c := range n.Content {
		if l, ok := findKey(c, key); ok {
			return l, true
		}
	}
	return 0, false
}

// check refuses a manifest that does not describe k of g, or lacks a
// version the project serves.
func (m *Manifest) check(g *model.Group, k *model.Kind) error {
	var errs []string
	spec := m.CRD.Spec
	if spec.Group != g.FullName {
		errs = append(errs, fmt.Sprintf("%s: spec.group is %q, and %s is served in group %q (pkg/apis/%s with the domain of PROJECT): make them the same", m.Pos("spec", "group"), spec.Group, k.Kind, g.FullName, g.Name))
	}
	if spec.Names.Plural != k.Plural {
		errs = append(errs, fmt.Sprintf("%s: spec.names.plural is %q, and %s is served as %q (its +resource marker): make them the same", m.Pos("spec", "names", "plural"), spec.Names.Plural, k.Kind, k.Plural))
	}
	if spec.Names.Kind != k.Kind {
		errs = append(errs, fmt.Sprintf("%s: spec.names.kind is %q, and the manifest is %s's: make them the same", m.Pos("spec", "names", "kind"), spec.Names.Kind, k.Kind))
	}
	if string(spec.Scope) != string(k.Scope) {
		errs = append(errs, fmt.Sprintf("%s: spec.scope is %q, and %s is %s (its +resource marker): make them the same", m.Pos("spec", "scope"), spec.Scope, k.Kind, k.Scope))
	}
	var have []string
	for _, v := range spec.Versions {
		have = append(have, v.Name)
	}
	for _, name := range k.Versions {
		v := m.Version(name)
		switch {
		case v == nil:
			errs = append(errs, fmt.Sprintf("%s: %s is served in version %s (pkg/apis/%s/%s), and the manifest has only %s: add %s to spec.versions", m.Pos("spec", "versions"), k.Kind, name, g.Name, name, strings.Join(have, ", "), name))
		case v.Schema == nil || v.Schema.OpenAPIV3Schema == nil:
			errs = append(errs, fmt.Sprintf("%s: version %s has no schema.openAPIV3Schema, and %s is served in it", m.Pos(m.versionPath(name)...), name, k.Kind))
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// Version is the manifest's version name, or nil.
func (m *Manifest) Version(name string) *apiextensionsv1.CustomResourceDefinitionVersion {
	for i := range m.CRD.Spec.Versions {
		if m.CRD.Spec.Versions[i].Name == name {
			return &m.CRD.Spec.Versions[i]
		}
	}
	return nil
}

// versionPath is the YAML path of a version's entry in spec.versions.
func (m *Manifest) versionPath(name string) []string {
	for i, v := range m.CRD.Spec.Versions {
		if v.Name == name {
			return []string{"spec", "versions", strconv.Itoa(i)}
		}
	}
	return []string{"spec", "versions"}
}

// SchemaPath is the YAML path of a version's openAPIV3Schema, followed by
// keys below it (properties, <name>, items, x-kubernetes-validations, <i>...).
func (m *Manifest) SchemaPath(version string, keys ...string) []string {
	return append(append(m.versionPath(version), "schema", "openAPIV3Schema"), keys...)
}

// Pos is "<path>:<line>" of the deepest node of the manifest the YAML path
// reaches (mapping keys, sequence indexes): the line of the key itself.
func (m *Manifest) Pos(path ...string) string {
	return fmt.Sprintf("%s:%d", m.Path, m.Line(path...))
}

// Line is the line of the deepest node of the YAML path (see Pos).
func (m *Manifest) Line(path ...string) int {
	n, line := m.doc, m.doc.Line
	for _, key := range path {
		switch n.Kind {
		case yaml.MappingNode:
			found := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == key {
					n, line, found = n.Content[i+1], n.Content[i].Line, true
					break
				}
			}
			if !found {
				return line
			}
		case yaml.SequenceNode:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(n.Content) {
				return line
			}
			n, line = n.Content[i], n.Content[i].Line
		default:
			return line
		}
	}
	return line
}

// FieldPathKeys turns a field path of apimachinery's field.Path form
// ("properties[spec].items.x-kubernetes-validations[0].rule") into YAML
// path keys.
func FieldPathKeys(path string) []string {
	var out []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(path); i++ {
		switch c := path[i]; c {
		case '.':
			flush()
		case '[':
			flush()
			end := strings.IndexByte(path[i:], ']')
			if end < 0 {
				cur.WriteString(path[i+1:])
				i = len(path)
				continue
			}
			out = append(out, path[i+1:i+end])
			i += end
		default:
			cur.WriteByte(c)
		}
	}
	flush()
	return out
}

// ApplyManifests makes the model of every kind with a manifest say what the
// manifest says, replacing its markers' values: names (singular, short
// names, categories), the printer columns (exactly as a CRD's: no Age is
// added to the manifest's columns), selectable fields and subresources, of
// the kind's storage version, as the model takes them from there. It
// returns a warning for each served version whose columns, selectable
// fields or subresources differ from the storage version's: one set serves
// every version.
func ApplyManifests(api *model.API, set Manifests) ([]string, error) {
	var warnings, errs []string
	for _, g := range api.Groups {
		for _, k := range g.Kinds {
			m := set[ManifestKey(g.FullName, k.Kind)]
			if m == nil {
				continue
			}
			names := m.CRD.Spec.Names
			k.Singular = names.Singular
			if k.Singular == "" {
				k.Singular = strings.ToLower(k.Kind) // as kube-apiserver defaults it
			}
			k.ShortNames, k.Categories = names.ShortNames, names.Categories
			stored := m.Version(k.StorageVersion)
			k.PrintColumns, k.ExactColumns, k.SelectableFields = nil, false, nil
			for i, c := range stored.AdditionalPrinterColumns {
				pc := model.PrintColumn{Name: c.Name, Type: c.Type, Format: c.Format, Description: c.Description, JSONPath: c.JSONPath, Priority: c.Priority}
				if err := pc.Validate(); err != nil {
					errs = append(errs, fmt.Sprintf("%s: additionalPrinterColumns %q: %v", m.Pos(append(m.versionPath(k.StorageVersion), "additionalPrinterColumns", strconv.Itoa(i))...), c.Name, err))
				}
				k.PrintColumns, k.ExactColumns = append(k.PrintColumns, pc), true
			}
			for i, f := range stored.SelectableFields {
				if err := (model.SelectableField{JSONPath: f.JSONPath}).Validate(); err != nil {
					errs = append(errs, fmt.Sprintf("%s: selectableFields %q: %v", m.Pos(append(m.versionPath(k.StorageVersion), "selectableFields", strconv.Itoa(i))...), f.JSONPath, err))
				}
				k.SelectableFields = append(k.SelectableFields, f.JSONPath)
			}
			status, scale := subresources(stored)
			if scale != nil {
				if err := scale.Validate(); err != nil {
					errs = append(errs, fmt.Sprintf("%s: %v", m.Pos(append(m.versionPath(k.StorageVersion), "subresources", "scale")...), err))
				}
			}
			for _, kk := range kindsOf(g, k.Kind) {
				kk.StatusSubresource, kk.Scale = status, scale
			}
			for i, v := range m.CRD.Spec.Versions {
				if v.Storage && v.Name != k.StorageVersion {
					warnings = append(warnings, fmt.Sprintf("%s: the manifest stores %s in %s, and the project in %s (its +storageversion): the server stores it in %s",
						m.Pos("spec", "versions", strconv.Itoa(i), "storage"), k.Kind, v.Name, k.StorageVersion, k.StorageVersion))
				}
			}
			for _, name := range k.Versions {
				if name == k.StorageVersion {
					continue
				}
				v := m.Version(name)
				var differ []string
				if !slices.EqualFunc(v.AdditionalPrinterColumns, stored.AdditionalPrinterColumns, func(a, b apiextensionsv1.CustomResourceColumnDefinition) bool { return a == b }) {
					differ = append(differ, "additionalPrinterColumns")
				}
				if !slices.Equal(v.SelectableFields, stored.SelectableFields) {
					differ = append(differ, "selectableFields")
				}
				if vs, vc := subresources(v); vs != status || !sameScale(vc, scale) {
					differ = append(differ, "subresources")
				}
				if len(differ) > 0 {
					warnings = append(warnings, fmt.Sprintf("%s: the %s of version %s differ from those of %s's storage version %s: the server serves every version with the storage version's",
						m.Pos(m.versionPath(name)...), strings.Join(differ, " and "), name, k.Kind, k.StorageVersion))
				}
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	return warnings, nil
}

// kindsOf is the group's kind and its per-version copies.
func kindsOf(g *model.Group, kind string) []*model.Kind {
	out := []*model.Kind{g.Kind(kind)}
	for _, v := range g.Versions {
		for _, k := range v.Kinds {
			if k.Kind == kind {
				out = append(out, k)
			}
		}
	}
	return out
}

// subresources reads a CRD version's subresources as the model has them.
func subresources(v *apiextensionsv1.CustomResourceDefinitionVersion) (bool, *model.ScaleSubresource) {
	if v.Subresources == nil {
		return false, nil
	}
	var scale *model.ScaleSubresource
	if s := v.Subresources.Scale; s != nil {
		scale = &model.ScaleSubresource{SpecPath: s.SpecReplicasPath, StatusPath: s.StatusReplicasPath}
		if s.LabelSelectorPath != nil {
			scale.SelectorPath = *s.LabelSelectorPath
		}
	}
	return v.Subresources.Status != nil, scale
}

func sameScale(a, b *model.ScaleSubresource) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

// relPos makes a "file:line:col" position relative to the project.
func relPos(root, pos string) string {
	if rel, err := filepath.Rel(root, pos); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return pos
}
