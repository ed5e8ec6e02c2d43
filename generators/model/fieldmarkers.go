package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"sort"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/markers"
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
		{"printcolumn", markers.DescribesType, PrintColumn{}},
		{"selectablefield", markers.DescribesType, SelectableField{}},
	} {
		if err := Registry.Define(d.name, d.target, d.obj); err != nil {
			panic(err)
		}
	}
}

// ownPrefixes are the marker namespaces apiserver-boot owns: anything under
// them that is not a known marker is a mistake, reported with a suggestion.
var ownPrefixes = []string{"kubebuilder:", "resource", "subresource", "storageversion", "printcolumn", "selectablefield", "crd:"}

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
	name := markerName(text)
	if reason := ignored(name); reason != "" {
		return ignoredMarker{fmt.Sprintf("%s: +%s has no meaning for an aggregated apiserver (%s): ignored", pos, name, reason)}
	}
	if Registry.Lookup(text, target) != nil {
		return nil
	}
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

// ignoredMarkers are markers of controller-tools that configure what a CRD
// has and an aggregated apiserver does not: generate names them in a
// warning, and goes on.
var ignoredMarkers = map[string]string{
	"kubebuilder:skipversion":       "every version under pkg/apis is served",
	"kubebuilder:unservedversion":   "every version under pkg/apis is served",
	"kubebuilder:deprecatedversion": "every version under pkg/apis is served without a deprecation warning",
	"kubebuilder:metadata":          "it labels and annotates a CRD object, which an aggregated API does not have",
	"kubebuilder:skip":              "every package under pkg/apis is an API version",
	"kubebuilder:rbac":              "build config writes the RBAC of the apiserver and controller-manager",
	"kubebuilder:webhook":           "admission and conversion run in the apiserver: use the strategy hooks",
	"kubebuilder:ac":                "apply configurations are generated for every kind",
}

// ignored is why a marker is ignored, or "".
func ignored(name string) string {
	for prefix, reason := range ignoredMarkers {
		if name == prefix || strings.HasPrefix(name, prefix+":") {
			return reason
		}
	}
	return ""
}

// ignoredMarker is checkMarker's answer for a marker in ignoredMarkers: a
// warning, not an error.
type ignoredMarker struct{ warning string }

func (e ignoredMarker) Error() string { return e.warning }

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
