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
	internal := hooks.KeyOf(reflect.TypeFor[*widget]())
	for _, h := range hooks.Strategy {
		forms, ok := bind[h.Name]
		if !ok {
			t.Errorf("the contract lists the hook %s, which the strategy does not bind", h.Name)
			continue
		}
		want := []string{h.Key(internal, "")}
		if h.UsesT() {
			want = append(want, h.Key(hooks.Object, ""))
		}
		var got []string
		for _, f := range forms {
			if f.iface.NumMethod() != 1 || f.iface.Method(0).Name != h.Name {
				t.Errorf("a form of %s is %s, not the one method %s", h.Name, f.iface, h.Name)
				continue
			}
			got = append(got, hooks.KeyOf(f.iface.Method(0).Type))
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
