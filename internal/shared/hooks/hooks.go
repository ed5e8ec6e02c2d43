// Package hooks is the hook contract of generated projects, in one place:
// the methods a project may declare on a generated <Kind>Strategy to replace
// a default (docs/hooks.md), and the handlers of custom subresources, with
// the signature each must have. The runtime (pkg/internal/strategy) binds
// the hooks Strategy lists, in its order, and refuses at start-up a method
// of a listed name with another signature; generate
// (generators/hookcheck.go) refuses such a method, or a handler unlike
// Handler, at its line. Both read this table; the runtime's tests
// (pkg/internal/strategy, pkg/builders) fail when it binds a hook the table
// lacks, lacks one it lists, or binds another signature than the table's.
package hooks

import (
	"reflect"
	"strings"
)

// Types are spelled as keys: with full package paths ("*example.com/m/pkg/apis/stable.CronTab").
const (
	// T in a parameter's type stands for the kind's object: its internal
	// type (*<group>.<Kind>) or runtime.Object, the same for every T of a
	// hook.
	T = "T"
	// R in a parameter's type stands for a custom subresource's request:
	// its internal type (*<group>.<Request>) or runtime.Object, whichever
	// T is.
	R = "R"
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

// Handler is the signature of a custom subresource's handler: a method of
// <Kind>Strategy in the kind's storage version, named by the kind's
// +subresource:rest marker, which the generated registration binds with
// builders.NewSubresource.
var Handler = Hook{Params: []Param{{"ctx", Context}, {"obj", T}, {"req", R}}, Results: []string{Object, "error"}}

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

// With returns the hook's parameters with t for T and r for R.
func (h Hook) With(t, r string) []Param {
	out := make([]Param, len(h.Params))
	for i, p := range h.Params {
		out[i] = p
		switch p.Type {
		case T:
			out[i].Type = t
		case R:
			out[i].Type = r
		}
	}
	return out
}

// Key spells the hook's function type as a key, with t for T and r for R,
// as KeyOf spells a function type.
func (h Hook) Key(t, r string) string {
	var in []string
	for _, p := range h.With(t, r) {
		in = append(in, p.Type)
	}
	return "func(" + strings.Join(in, ", ") + ") (" + strings.Join(h.Results, ", ") + ")"
}

// KeyOf spells a type of the running program as the table spells types
// (full package paths); a function type as Hook.Key does. It reads the
// runtime's signatures in the tests that hold them to the table.
func KeyOf(t reflect.Type) string {
	if t.Name() != "" && t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + KeyOf(t.Elem())
	case reflect.Slice:
		return "[]" + KeyOf(t.Elem())
	case reflect.Map:
		return "map[" + KeyOf(t.Key()) + "]" + KeyOf(t.Elem())
	case reflect.Func:
		var in, out []string
		for i := range t.NumIn() {
			in = append(in, KeyOf(t.In(i)))
		}
		for i := range t.NumOut() {
			out = append(out, KeyOf(t.Out(i)))
		}
		return "func(" + strings.Join(in, ", ") + ") (" + strings.Join(out, ", ") + ")"
	}
	return t.String()
}

// Signature spells a strategy hook's type as reflect does, with t for T and
// package names for paths: "func(context.Context, *stable.CronTab) field.ErrorList".
func (h Hook) Signature(t string) string {
	var in, out []string
	for _, p := range h.With(t, "") {
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
