// Package hooks is the hook contract of generated projects, in one place:
// the methods a project may declare on a generated <Kind>Strategy to replace
// a default (docs/hooks.md), with the signature each must have. The runtime
// (pkg/internal/strategy) binds the hooks Strategy lists, in its order, and
// refuses at start-up a method of a listed name with another signature;
// generate (generators/hookcheck.go) refuses such a method at its line. Both
// read this table; pkg/internal/strategy's tests fail when the runtime binds
// a hook the table lacks, or lacks one it lists, or binds another signature.
package hooks

import "strings"

// Types are spelled as keys: with full package paths ("*example.com/m/pkg/apis/stable.CronTab").
const (
	// T in a parameter's type stands for the kind's object: its internal
	// type (*<group>.<Kind>) or runtime.Object, the same for every T of a
	// hook.
	T = "T"
	// Context is context.Context.
	Context = "context.Context"
	// Object is k8s.io/apimachinery's runtime.Object.
	Object = "k8s.io/apimachinery/pkg/runtime.Object"
	// ErrorList is k8s.io/apimachinery's field.ErrorList.
	ErrorList = "k8s.io/apimachinery/pkg/util/validation/field.ErrorList"
)

// Param is one parameter of a hook: its name in the signature written in
// messages, and its type (a key, or T).
type Param struct{ Name, Type string }

// Hook is one method a <Kind>Strategy may declare: its name, parameters and
// results (type keys).
type Hook struct {
	Name    string
	Params  []Param
	Results []string
}

// Strategy lists the hooks of <Kind>Strategy, in the order the runtime
// binds them (and reports those declared with another signature).
var Strategy = []Hook{
	{Name: "PrepareForCreate", Params: []Param{{"ctx", Context}, {"obj", T}}},
	{Name: "PrepareForUpdate", Params: []Param{{"ctx", Context}, {"obj", T}, {"old", T}}},
	{Name: "Validate", Params: []Param{{"ctx", Context}, {"obj", T}}, Results: []string{ErrorList}},
	{Name: "ValidateUpdate", Params: []Param{{"ctx", Context}, {"obj", T}, {"old", T}}, Results: []string{ErrorList}},
	{Name: "Canonicalize", Params: []Param{{"obj", T}}},
	{Name: "DeclarativeValidationOptions", Params: []Param{{"ctx", Context}}, Results: []string{"map[string]bool"}},
	{Name: "ValidateName", Params: []Param{{"name", "string"}, {"prefix", "bool"}}, Results: []string{"[]string"}},
}

// Find returns the strategy hook named name; false when no hook has that name.
func Find(name string) (Hook, bool) {
	for _, h := range Strategy {
		if h.Name == name {
			return h, true
		}
	}
	return Hook{}, false
}

// UsesT tells whether the hook takes the kind's object.
func (h Hook) UsesT() bool {
	for _, p := range h.Params {
		if p.Type == T {
			return true
		}
	}
	return false
}

// With returns the hook's parameters with t for T.
func (h Hook) With(t string) []Param {
	out := make([]Param, len(h.Params))
	for i, p := range h.Params {
		out[i] = p
		if p.Type == T {
			out[i].Type = t
		}
	}
	return out
}

// Signature spells the hook's type as reflect does, with t for T and
// package names for paths: "func(context.Context, *stable.CronTab) field.ErrorList".
func (h Hook) Signature(t string) string {
	var in, out []string
	for _, p := range h.With(t) {
		in = append(in, Short(p.Type))
	}
	for _, r := range h.Results {
		out = append(out, Short(r))
	}
	s := "func(" + strings.Join(in, ", ") + ")"
	switch len(out) {
	case 0:
	case 1:
		s += " " + out[0]
	default:
		s += " (" + strings.Join(out, ", ") + ")"
	}
	return s
}

// Short turns a type key into source spelling:
// "*example.com/m/pkg/apis/stable.CronTab" -> "*stable.CronTab".
func Short(key string) string {
	rest := strings.TrimLeft(key, "*[]")
	prefix := key[:len(key)-len(rest)]
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		rest = rest[i+1:]
	}
	return prefix + rest
}
