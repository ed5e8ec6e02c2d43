package builders

import (
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/hooks"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/strategy"
)

type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
}

func (w *widget) DeepCopyObject() runtime.Object { c := *w; return &c }

// TestDefaultStrategyBinds: every method of DefaultStrategy, which each
// generated <Kind>Strategy embeds, is a hook of the contract, declared as
// the runtime binds it: a resource with no hooks of its own gets its
// strategy, and the apiserver finds the hooks value NewResource was given.
func TestDefaultStrategyBinds(t *testing.T) {
	typ := reflect.TypeFor[DefaultStrategy]()
	for i := range typ.NumMethod() {
		if _, ok := hooks.Find(typ.Method(i).Name); !ok {
			t.Errorf("DefaultStrategy.%s is not a hook of the contract (internal/shared/hooks)", typ.Method(i).Name)
		}
	}
	type widgetStrategy struct{ DefaultStrategy }
	h := &widgetStrategy{}
	r := NewResource[*widget](Resource{Kind: "Widget", Plural: "widgets", Namespaced: true, Versions: []string{"v1"}}, h)
	if _, err := strategy.For(r, runtime.NewScheme(), "example.com"); err != nil {
		t.Fatal(err)
	}
	if strategy.Hooks(r) != any(h) {
		t.Errorf("the resource's hooks are %v, want the value given to NewResource", strategy.Hooks(r))
	}
	if _, err := strategy.For(&Resource{Kind: "Widget"}, runtime.NewScheme(), "example.com"); err == nil {
		t.Error("a resource not built with NewResource got a strategy")
	}
}

// TestSubresourceHandlerContract: NewSubresource binds handlers of the
// signature generate checks (hooks.Handler).
func TestSubresourceHandlerContract(t *testing.T) {
	type restart struct{ widget }
	handle := reflect.TypeOf(NewSubresource[*widget, *restart]).In(2)
	obj, req := hooks.KeyOf(reflect.TypeFor[*widget]()), hooks.KeyOf(reflect.TypeFor[*restart]())
	if got, want := hooks.KeyOf(handle), hooks.Handler.Key(obj, req); got != want {
		t.Errorf("NewSubresource binds handlers of type\n\t%s\nthe contract says\n\t%s", got, want)
	}
}
