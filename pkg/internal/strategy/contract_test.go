package strategy

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/hooks"
)

// TestHookContract: the strategy binds exactly the hooks of the contract
// generate checks (internal/shared/hooks.Strategy), each with the
// signature the contract gives: a hook taking the object in two forms, the
// internal type first and then runtime.Object, any other in one.
func TestHookContract(t *testing.T) {
	bind := binders[*widget](&Strategy{})
	internal := reflectKey(reflect.TypeFor[*widget]())
	for _, h := range hooks.Strategy {
		forms, ok := bind[h.Name]
		if !ok {
			t.Errorf("the contract lists the hook %s, which the strategy does not bind", h.Name)
			continue
		}
		want := []string{contractKey(h, internal)}
		if h.UsesT() {
			want = append(want, contractKey(h, hooks.Object))
		}
		var got []string
		for _, f := range forms {
			if f.iface.NumMethod() != 1 || f.iface.Method(0).Name != h.Name {
				t.Errorf("a form of %s is %s, not the one method %s", h.Name, f.iface, h.Name)
				continue
			}
			got = append(got, reflectKey(f.iface.Method(0).Type))
		}
		if !slices.Equal(got, want) {
			t.Errorf("the strategy binds %s as\n\t%s\nthe contract says\n\t%s", h.Name, strings.Join(got, "\n\t"), strings.Join(want, "\n\t"))
		}
	}
	for name := range bind {
		if _, ok := hooks.Find(name); !ok {
			t.Errorf("the strategy binds the hook %s, which the contract does not list: generate does not check it", name)
		}
	}
}

// contractKey spells the hook's signature with t for T, in type keys.
func contractKey(h hooks.Hook, t string) string {
	var in []string
	for _, p := range h.With(t) {
		in = append(in, p.Type)
	}
	return "func(" + strings.Join(in, ", ") + ") (" + strings.Join(h.Results, ", ") + ")"
}

// reflectKey spells a type as a key of the contract (full package paths);
// a function type as contractKey does.
func reflectKey(t reflect.Type) string {
	if t.Name() != "" && t.PkgPath() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + reflectKey(t.Elem())
	case reflect.Slice:
		return "[]" + reflectKey(t.Elem())
	case reflect.Map:
		return "map[" + reflectKey(t.Key()) + "]" + reflectKey(t.Elem())
	case reflect.Func:
		var in, out []string
		for i := range t.NumIn() {
			in = append(in, reflectKey(t.In(i)))
		}
		for i := range t.NumOut() {
			out = append(out, reflectKey(t.Out(i)))
		}
		return "func(" + strings.Join(in, ", ") + ") (" + strings.Join(out, ", ") + ")"
	}
	return t.String()
}
