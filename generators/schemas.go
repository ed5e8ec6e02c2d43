package generators

import (
	"encoding/json"
	"path/filepath"

	"k8s.io/gengo/v2/generator"

	"github.com/apiserver-boot/apiserver-boot/generators/crdschema"
	"github.com/apiserver-boot/apiserver-boot/generators/driver"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/templates"
)

// schemas writes pkg/apis/zz_generated.schemas.go: the OpenAPI v3 schema of
// every kind in every version, as controller-gen would write it in a CRD
// (package crdschema). pkg/apis/zz_generated.register.go hands them to the
// apiserver, which validates objects against them as kube-apiserver
// validates custom resources.
type schemas struct{}

func (schemas) Name() string                 { return "schemas" }
func (schemas) Packages(api *State) []string { return nil }

// schemaEntry is one schema of the generated file.
type schemaEntry struct {
	Key, Model, JSON string
	// Manifest is the CRD manifest the schema was read from, if any.
	Manifest string
}

func (schemas) Generate(api *State, _ *generator.Context) ([]files.File, error) {
	schemasOf := api.schemas
	if schemasOf == nil { // not started beside a universe load
		schemasOf = func() ([]crdschema.Schema, []string, error) { return crdschema.Generate(api.API, driver.LoadEnv()) }
	}
	list, warnings, err := schemasOf()
	if err != nil {
		return nil, err
	}
	// Fields that cannot carry their zero value while a constraint sees it
	// (docs/markers.md, "Zero values the Go types cannot carry").
	api.Warnings = append(api.Warnings, warnings...)
	var entries []schemaEntry
	for _, s := range list {
		b, err := json.Marshal(s.Schema)
		if err != nil {
			return nil, err
		}
		entries = append(entries, schemaEntry{Key: s.Key(), Model: s.Model, JSON: string(b), Manifest: s.Manifest})
	}
	b, err := templates.Render("generated/schemas.go.tmpl", map[string]any{"Header": api.Header, "Framework": api.Framework, "Schemas": entries})
	if err != nil {
		return nil, err
	}
	return []files.File{{Path: filepath.Join(api.Root, project.APIs("zz_generated.schemas.go")), Content: b}}, nil
}
