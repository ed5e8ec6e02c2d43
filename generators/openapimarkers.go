package generators

import (
	"path/filepath"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/templates"
)

// openAPIDefinitions writes pkg/openapi/zz_generated.markers.go:
// Definitions, what cmd/apiserver/main.go hands the apiserver. The
// apiserver merges into openapi-gen's definitions what each kind's schema
// declares (WithSchemas, pkg/internal/openapi), so the published OpenAPI
// follows the markers as the server enforces them.
type openAPIDefinitions struct{}

func (openAPIDefinitions) Name() string { return "openapi-definitions" }

func (openAPIDefinitions) Generate(api *State) ([]files.File, error) {
	b, err := templates.Render("generated/openapi_markers.go.tmpl", map[string]any{"Header": api.Header})
	if err != nil {
		return nil, err
	}
	return []files.File{{Path: filepath.Join(api.Root, filepath.FromSlash(project.OpenAPIDir), "zz_generated.markers.go"), Content: b}}, nil
}
