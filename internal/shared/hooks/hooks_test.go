package hooks

import (
	"context"
	"reflect"
	"testing"
)

// TestSignature: a hook is spelled as reflect spells a method's type, with
// the object type given for T and package names for paths.
func TestSignature(t *testing.T) {
	for name, want := range map[string]string{
		"PrepareForUpdate": "func(context.Context, *stable.CronTab, *stable.CronTab)",
		"Validate":         "func(context.Context, *stable.CronTab) field.ErrorList",
		"ValidateName":     "func(string, bool) []string",
	} {
		h, ok := Find(name)
		if !ok {
			t.Fatalf("no hook %s", name)
		}
		if got := h.Signature("*example.com/m/pkg/apis/stable.CronTab"); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if _, ok := Find("DefaultingFunction"); ok {
		t.Error("DefaultingFunction is a hook of <Kind>SchemeFns, not of the strategy")
	}
}

// TestKeyOf: a function type of the running program is spelled as Hook.Key
// spells the table's.
func TestKeyOf(t *testing.T) {
	got := KeyOf(reflect.TypeFor[func(context.Context, *Param, []string) (map[string]bool, error)]())
	want := Hook{Params: []Param{{"ctx", Context}, {"obj", T}, {"names", "[]string"}}, Results: []string{"map[string]bool", "error"}}.
		Key("*github.com/apiserver-boot/apiserver-boot/internal/shared/hooks.Param", "")
	if got != want {
		t.Errorf("KeyOf: %s, want %s", got, want)
	}
}
