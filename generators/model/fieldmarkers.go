package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/markers"
)

// Field markers: the controller-tools vocabulary users know. Each becomes a
// server-side check (generated validation code), part of the published
// OpenAPI schema, and, for defaults, generated defaulting code.
type (
	Minimum   float64
	Maximum   float64
	Pattern   string
	Enum      []any
	MinLength int
	MaxLength int
	MinItems  int
	MaxItems  int
	Required  struct{}
	Optional  struct{}
	// Default is `+kubebuilder:default=<value>`.
	Default struct{ Value any }
)

// PrintColumn is `+printcolumn:name=Schedule,type=string,JSONPath=.spec.cronSpec[,priority=1][,description=...][,format=...]`.
type PrintColumn struct {
	Name        string `marker:"name"`
	Type        string `marker:"type"`
	JSONPath    string `marker:"JSONPath"`
	Description string `marker:"description,optional"`
	Format      string `marker:"format,optional"`
	Priority    int32  `marker:"priority,optional"`
}

// SelectableField is `+selectablefield:JSONPath=.spec.cronSpec`: the field may be used in field selectors.
type SelectableField struct {
	JSONPath string `marker:"JSONPath"`
}

func init() {
	for _, d := range []struct {
		name   string
		target markers.TargetType
		obj    any
	}{
		{"kubebuilder:validation:Minimum", markers.DescribesField, Minimum(0)},
		{"kubebuilder:validation:Maximum", markers.DescribesField, Maximum(0)},
		{"kubebuilder:validation:Pattern", markers.DescribesField, Pattern("")},
		{"kubebuilder:validation:Enum", markers.DescribesField, Enum(nil)},
		{"kubebuilder:validation:MinLength", markers.DescribesField, MinLength(0)},
		{"kubebuilder:validation:MaxLength", markers.DescribesField, MaxLength(0)},
		{"kubebuilder:validation:MinItems", markers.DescribesField, MinItems(0)},
		{"kubebuilder:validation:MaxItems", markers.DescribesField, MaxItems(0)},
		{"kubebuilder:validation:Required", markers.DescribesField, Required{}},
		{"kubebuilder:validation:Optional", markers.DescribesField, Optional{}},
		{"printcolumn", markers.DescribesType, PrintColumn{}},
		{"kubebuilder:printcolumn", markers.DescribesType, PrintColumn{}},
		{"selectablefield", markers.DescribesType, SelectableField{}},
		{"kubebuilder:selectablefield", markers.DescribesType, SelectableField{}},
	} {
		if err := Registry.Define(d.name, d.target, d.obj); err != nil {
			panic(err)
		}
	}
	def, err := markers.MakeAnyTypeDefinition("kubebuilder:default", markers.DescribesField, Default{})
	if err != nil {
		panic(err)
	}
	if err := Registry.Register(def); err != nil {
		panic(err)
	}
}

// ownPrefixes are the marker namespaces apiserver-boot owns: anything under
// them that is not a known marker is a mistake, reported with a suggestion.
var ownPrefixes = []string{"kubebuilder:", "resource", "subresource", "storageversion", "printcolumn", "selectablefield"}

// markerName returns the name part of "+name:args=..." or "+name=value".
func markerName(text string) string {
	name := strings.TrimPrefix(text, "+")
	if i := strings.IndexAny(name, "= "); i >= 0 {
		name = name[:i]
	}
	return name
}

// checkMarker reports an unknown marker in apiserver-boot's namespaces, or
// one a small typo away from a known marker, with a did-you-mean suggestion.
func checkMarker(text string, target markers.TargetType, pos token.Position) error {
	if Registry.Lookup(text, target) != nil {
		return nil
	}
	name := markerName(text)
	// The name may carry arguments after a colon (+resource:path=...):
	// compare every colon-separated prefix with the known names.
	parts := strings.Split(name, ":")
	best, dist := "", 1<<30
	for i := len(parts); i > 0; i-- {
		candidate := strings.ToLower(strings.Join(parts[:i], ":"))
		for _, k := range knownMarkerNames() {
			if d := levenshtein(candidate, strings.ToLower(k)); d < dist {
				best, dist = k, d
				name = strings.Join(parts[:i], ":")
			}
		}
	}
	own := false
	for _, p := range ownPrefixes {
		if strings.HasPrefix(name, p) {
			own = true
		}
	}
	if !own && dist > 2 {
		return nil // another tool's marker (+k8s:..., +optional, +genclient, ...)
	}
	if Registry.Lookup("+"+best, target) == nil && Registry.Lookup("+"+best+"=x", target) == nil {
		if own {
			return fmt.Errorf("%s: unknown marker +%s here (did you mean +%s, which goes on a %s?)", pos, name, best, otherTarget(target))
		}
		return nil
	}
	return fmt.Errorf("%s: unknown marker +%s (did you mean +%s?)", pos, name, best)
}

func otherTarget(t markers.TargetType) string {
	if t == markers.DescribesField {
		return "type"
	}
	return "field"
}

func knownMarkerNames() []string {
	var out []string
	for _, d := range Registry.AllDefinitions() {
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}

func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// FieldMarkers are the markers of one struct field.
type FieldMarkers struct {
	Minimum, Maximum     *float64
	Pattern              *string
	Enum                 []any
	MinLength, MaxLength *int
	MinItems, MaxItems   *int
	Required, Optional   bool
	Default              *Default
}

// Empty tells whether the field has no markers.
func (m FieldMarkers) Empty() bool {
	return m.Minimum == nil && m.Maximum == nil && m.Pattern == nil && m.Enum == nil && m.MinLength == nil &&
		m.MaxLength == nil && m.MinItems == nil && m.MaxItems == nil && !m.Required && m.Default == nil
}

func fieldMarkers(vals map[string]any) FieldMarkers {
	var m FieldMarkers
	for name, v := range vals {
		switch v := v.(type) {
		case Minimum:
			f := float64(v)
			m.Minimum = &f
		case Maximum:
			f := float64(v)
			m.Maximum = &f
		case Pattern:
			s := string(v)
			m.Pattern = &s
		case Enum:
			m.Enum = v
		case MinLength:
			n := int(v)
			m.MinLength = &n
		case MaxLength:
			n := int(v)
			m.MaxLength = &n
		case MinItems:
			n := int(v)
			m.MinItems = &n
		case MaxItems:
			n := int(v)
			m.MaxItems = &n
		case Required:
			m.Required = true
		case Optional:
			m.Optional = true
		case Default:
			d := v
			m.Default = &d
		default:
			_ = name
		}
	}
	return m
}

// commentLines returns the marker lines of comment groups with their positions.
func commentLines(fset *token.FileSet, groups ...*ast.CommentGroup) []markerLine {
	var out []markerLine
	for _, g := range groups {
		if g == nil {
			continue
		}
		for _, c := range g.List {
			text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
			if strings.HasPrefix(text, "+") {
				out = append(out, markerLine{text: text, pos: fset.Position(c.Pos())})
			}
		}
	}
	return out
}

type markerLine struct {
	text string
	pos  token.Position
}
