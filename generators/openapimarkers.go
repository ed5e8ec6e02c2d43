package generators

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/templates"

	"github.com/apiserver-boot/apiserver-boot/internal/files"
)

// openAPIMarkers writes pkg/openapi/zz_generated.markers.go: Definitions,
// the openapi-gen definitions plus the schema constraints field markers
// declare (minimum, maximum, pattern, enum, lengths, items, required), which
// openapi-gen does not read from the kubebuilder vocabulary. Defaults are
// emitted by openapi-gen itself (see the default rewrite in universe.go).
type openAPIMarkers struct{}

func (openAPIMarkers) Name() string { return "openapi-markers" }

type schemaProperty struct {
	Model, JSON string
	Sets        []string
}

type requiredProperty struct {
	Model, JSON string
	Required    bool // false: +kubebuilder:validation:Optional removes it
}

func (openAPIMarkers) Generate(api *State) ([]files.File, error) {
	var props []schemaProperty
	var required []requiredProperty
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			for _, name := range slices.Sorted(maps.Keys(v.Types)) {
				td := v.Types[name]
				model := v.Package + "." + name
				if v.ModelPackage != "" {
					model = v.ModelPackage + "." + name
				}
				for _, f := range td.Fields {
					m := f.Markers
					if f.Inline || f.JSONName == "" {
						continue
					}
					if m.Required || m.Optional {
						required = append(required, requiredProperty{model, f.JSONName, m.Required})
					}
					var sets []string
					if m.Minimum != nil {
						sets = append(sets, fmt.Sprintf("s.Minimum = ptr.To[float64](%s)", fmtFloat(*m.Minimum)))
					}
					if m.Maximum != nil {
						sets = append(sets, fmt.Sprintf("s.Maximum = ptr.To[float64](%s)", fmtFloat(*m.Maximum)))
					}
					if m.Pattern != nil {
						sets = append(sets, fmt.Sprintf("s.Pattern = %q", *m.Pattern))
					}
					if m.MinLength != nil {
						sets = append(sets, fmt.Sprintf("s.MinLength = ptr.To[int64](%d)", *m.MinLength))
					}
					if m.MaxLength != nil {
						sets = append(sets, fmt.Sprintf("s.MaxLength = ptr.To[int64](%d)", *m.MaxLength))
					}
					if m.MinItems != nil {
						sets = append(sets, fmt.Sprintf("s.MinItems = ptr.To[int64](%d)", *m.MinItems))
					}
					if m.MaxItems != nil {
						sets = append(sets, fmt.Sprintf("s.MaxItems = ptr.To[int64](%d)", *m.MaxItems))
					}
					if m.Enum != nil {
						var vals []string
						for _, e := range m.Enum {
							vals = append(vals, strconv.Quote(fmt.Sprint(e)))
						}
						sets = append(sets, fmt.Sprintf("s.Enum = []interface{}{%s}", strings.Join(vals, ", ")))
					}
					if len(sets) > 0 {
						props = append(props, schemaProperty{model, f.JSONName, sets})
					}
				}
			}
		}
	}
	b, err := templates.Render("generated/openapi_markers.go.tmpl", map[string]any{
		"Header": api.Header, "Properties": props, "Required": required,
	})
	if err != nil {
		return nil, err
	}
	return []files.File{{Path: filepath.Join(api.Root, "pkg", "openapi", "zz_generated.markers.go"), Content: b}}, nil
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
