// Package crdschema computes the OpenAPI v3 schema of every kind as
// controller-gen would write it in the kind's CustomResourceDefinition:
// controller-tools' own CRD parser reads the versioned types and their
// markers, so each marker has controller-gen's meaning (validation, CEL
// rules, list and map types, defaults). The apiserver validates objects
// against these schemas with kube-apiserver's custom resource validation.
package crdschema

import (
	"errors"
	"fmt"
	"go/token"
	"go/types"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/gengo/v2"
	"sigs.k8s.io/controller-tools/pkg/crd"
	"sigs.k8s.io/controller-tools/pkg/loader"
	"sigs.k8s.io/controller-tools/pkg/markers"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
)

// Schema is the schema of one kind in one version.
type Schema struct {
	Group, Version, Kind string
	// Model is the OpenAPI definition openapi-gen names the kind's type.
	Model  string
	Schema *apiextensionsv1.JSONSchemaProps
	// Manifest is the project-relative path of the CRD manifest the schema
	// was read from (LoadManifests); empty when the markers gave it.
	Manifest string
	manifest *Manifest
}

// Key identifies a schema: "<group>/<version>/<Kind>".
func (s Schema) Key() string { return s.Group + "/" + s.Version + "/" + s.Kind }

// Generate loads the version packages of api (with env, the package load's
// environment) and returns the schema of every kind in every version that
// serves it, sorted by key. Descriptions are left out: the published OpenAPI
// keeps openapi-gen's documentation. The warnings name the fields that
// cannot carry their zero value while a constraint could see it
// (zeroValueWarnings).
func Generate(api *model.API, env []string) ([]Schema, []string, error) {
	return generate(api, env, false)
}

// GenerateDocumented is Generate with the descriptions of every type and
// field kept (the doc comments, as controller-gen writes them in a CRD):
// the schemas an API reference is written from (build docs).
func GenerateDocumented(api *model.API, env []string) ([]Schema, []string, error) {
	return generate(api, env, true)
}

func generate(api *model.API, env []string, documented bool) ([]Schema, []string, error) {
	manifests, err := LoadManifests(api)
	if err != nil {
		return nil, nil, err
	}
	parser, byPath, roots, err := loadParser(api, env)
	if err != nil || parser == nil {
		return nil, nil, err
	}
	var out []Schema
	var warnings, manifestErrs []string
	seen := map[token.Pos]bool{}
	diffs := map[*Manifest][]string{}
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			pkg := byPath[v.Package]
			if pkg == nil {
				return nil, nil, fmt.Errorf("%s: not loaded", v.Package)
			}
			for _, k := range v.Kinds {
				ident := crd.TypeIdent{Package: pkg, Name: k.Kind}
				parser.NeedFlattenedSchemaFor(ident)
				s := parser.FlattenedSchemata[ident]
				s = *s.DeepCopy()
				if !documented {
					crd.TruncateDescription(&s, 0)
				}
				if _, ok := s.Properties["metadata"]; ok {
					// As controller-gen writes it: the server validates metadata itself.
					s.Properties["metadata"] = apiextensionsv1.JSONSchemaProps{Type: "object"}
				}
				schema := Schema{Group: g.FullName, Version: v.Name, Kind: k.Kind, Model: v.ModelPackage + "." + k.Kind, Schema: &s}
				if m := manifests[ManifestKey(g.FullName, k.Kind)]; m != nil {
					errs, d := fromManifest(api, m, pkg, &schema, documented)
					if len(errs) > 0 {
						manifestErrs = append(manifestErrs, errs...)
						continue
					}
					diffs[m] = append(diffs[m], d...)
				}
				out = append(out, schema)
				warnings = append(warnings, kindWarnings(pkg, api.Root, api.Module, k.Kind, schema.Schema, seen)...)
			}
		}
	}
	if err := rootErrors(roots); err != nil {
		return nil, nil, err
	}
	if len(manifestErrs) > 0 {
		return nil, nil, errors.New(strings.Join(manifestErrs, "\n"))
	}
	warnings = append(warnings, manifestWarnings(diffs)...)
	// CEL rules that do not compile are generate errors, as kube-apiserver
	// refuses them in a CRD (the server checks the cost budget at start).
	var celErrs []string
	for _, s := range out {
		celErrs = append(celErrs, checkRules(api, s)...)
	}
	if len(celErrs) > 0 {
		return nil, nil, errors.New(strings.Join(celErrs, "\n"))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	return out, warnings, nil
}

// loadParser loads the version packages of api and hands them to
// controller-tools' CRD parser; nil without versions.
func loadParser(api *model.API, env []string) (*crd.Parser, map[string]*loader.Package, []*loader.Package, error) {
	reg := &markers.Registry{}
	if err := (crd.Generator{}).RegisterMarkers(reg); err != nil {
		return nil, nil, nil, err
	}
	var patterns []string
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			patterns = append(patterns, v.Package)
		}
	}
	if len(patterns) == 0 {
		return nil, nil, nil, nil
	}
	roots, err := loader.LoadRootsWithConfig(&packages.Config{Dir: api.Root, Env: env, BuildFlags: []string{"-tags=" + gengo.StdBuildTag}}, patterns...)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("loading the API packages for their schemas: %w", err)
	}
	// Floats are served (JSON numbers, protobuf doubles): controller-gen's
	// caution about them is for CRDs whose clients round-trip through YAML.
	parser := &crd.Parser{Collector: &markers.Collector{Registry: reg}, Checker: &loader.TypeChecker{}, AllowDangerousTypes: true}
	crd.AddKnownTypes(parser)
	byPath := map[string]*loader.Package{}
	for _, r := range roots {
		parser.NeedPackage(r)
		byPath[r.PkgPath] = r
	}
	return parser, byPath, roots, nil
}

// rootErrors collects what the CRD parser reported against the packages:
// markers it could not apply, types it cannot describe. Type-checking errors
// are left to the Go build, which names them better.
func rootErrors(roots []*loader.Package) error {
	var msgs []string
	seen := map[string]bool{}
	for _, r := range roots {
		for _, e := range r.Errors {
			if e.Kind == packages.TypeError || e.Kind == packages.ListError {
				continue
			}
			msg := e.Error()
			if !seen[msg] {
				seen[msg] = true
				msgs = append(msgs, msg)
			}
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	sort.Strings(msgs)
	return errors.New(strings.Join(msgs, "\n"))
}

// fromManifest makes the schema of a kind's version (its markers', in s)
// its manifest's, checked against the Go type of pkg and the markers'
// schema: the errors stop generate, the differences are for the kind's
// one warning.
func fromManifest(api *model.API, m *Manifest, pkg *loader.Package, s *Schema, documented bool) (errs, diffs []string) {
	ms := manifestSchema(m, s.Version, documented)
	if errs := structuralErrors(m, s.Version, ms); len(errs) > 0 {
		return errs, nil
	}
	var t types.Type
	if obj := pkg.Types.Scope().Lookup(s.Kind); obj != nil {
		t = obj.Type()
	}
	errs, diffs = checkAgainstGo(m, s.Version, s.Kind, api.Root, pkg.Fset, t, ms, s.Schema)
	s.Schema, s.Manifest, s.manifest = ms, m.Path, m
	return errs, diffs
}

// manifestWarnings are one warning per kind whose manifest says otherwise
// than its markers, by manifest path.
func manifestWarnings(diffs map[*Manifest][]string) []string {
	ms := make([]*Manifest, 0, len(diffs))
	for m := range diffs {
		ms = append(ms, m)
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Path < ms[j].Path })
	var out []string
	for _, m := range ms {
		if len(diffs[m]) > 0 {
			out = append(out, manifestWarning(m, m.CRD.Spec.Names.Kind, diffs[m]))
		}
	}
	return out
}
