package strategy

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/hooks"
)

// form is one signature a hook may be declared with: the one-method
// interface a hooks value has when it declares the hook so, and what binds
// it to the strategy then.
type form struct {
	iface reflect.Type
	bind  func(hooks any) bool
}

// formOf is the form of interface I; set binds a hooks value having it.
func formOf[I any](set func(I)) form {
	return form{iface: reflect.TypeFor[I](), bind: func(hooks any) bool {
		h, ok := hooks.(I)
		if ok {
			set(h)
		}
		return ok
	}}
}

// binders are the forms of every hook of hooks.Strategy the strategy of
// internal type T calls, by name; a hook taking the object has the form
// taking T first, then the one taking runtime.Object.
func binders[T runtime.Object](s *Strategy) map[string][]form {
	return map[string][]form{
		"PrepareForCreate": {
			formOf(func(h interface{ PrepareForCreate(context.Context, T) }) {
				s.prepareForCreate = func(ctx context.Context, obj runtime.Object) { h.PrepareForCreate(ctx, obj.(T)) }
			}),
			formOf(func(h interface {
				PrepareForCreate(context.Context, runtime.Object)
			}) {
				s.prepareForCreate = h.PrepareForCreate
			}),
		},
		"PrepareForUpdate": {
			formOf(func(h interface{ PrepareForUpdate(context.Context, T, T) }) {
				s.prepareForUpdate = func(ctx context.Context, obj, old runtime.Object) { h.PrepareForUpdate(ctx, obj.(T), old.(T)) }
			}),
			formOf(func(h interface {
				PrepareForUpdate(context.Context, runtime.Object, runtime.Object)
			}) {
				s.prepareForUpdate = h.PrepareForUpdate
			}),
		},
		"Validate": {
			formOf(func(h interface {
				Validate(context.Context, T) field.ErrorList
			}) {
				s.validate = func(ctx context.Context, obj runtime.Object) field.ErrorList { return h.Validate(ctx, obj.(T)) }
			}),
			formOf(func(h interface {
				Validate(context.Context, runtime.Object) field.ErrorList
			}) {
				s.validate = h.Validate
			}),
		},
		"ValidateUpdate": {
			formOf(func(h interface {
				ValidateUpdate(context.Context, T, T) field.ErrorList
			}) {
				s.validateUpdate = func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
					return h.ValidateUpdate(ctx, obj.(T), old.(T))
				}
			}),
			formOf(func(h interface {
				ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList
			}) {
				s.validateUpdate = h.ValidateUpdate
			}),
		},
		"Canonicalize": {
			formOf(func(h interface{ Canonicalize(T) }) {
				s.canonicalize = func(obj runtime.Object) { h.Canonicalize(obj.(T)) }
			}),
			formOf(func(h interface{ Canonicalize(runtime.Object) }) { s.canonicalize = h.Canonicalize }),
		},
		"DeclarativeValidationOptions": {
			formOf(func(h interface {
				DeclarativeValidationOptions(context.Context) map[string]bool
			}) {
				s.validationOptions = h.DeclarativeValidationOptions
			}),
		},
		"ValidateName": {
			formOf(func(h interface{ ValidateName(string, bool) []string }) { s.nameRule = h.ValidateName }),
		},
	}
}

// New returns the strategy of the resource gr, whose internal type is T,
// calling the hooks hooks declares (nil: none). A hook may take T or
// runtime.Object; a method named like a hook (hooks.Strategy) with any
// other signature is an error at start-up rather than a silently ignored
// method. A hook not declared does nothing.
func New[T runtime.Object](scheme *runtime.Scheme, gr schema.GroupResource, namespaced, statusSubresource bool, versions []string, hooksValue any) (*Strategy, error) {
	if hooksValue == nil {
		hooksValue = struct{}{}
	}
	var zero T
	s := &Strategy{
		ObjectTyper:       scheme,
		NameGenerator:     names.SimpleNameGenerator,
		resource:          gr,
		namespaced:        namespaced,
		statusSubresource: statusSubresource,
		versions:          versions,
		resetFields:       topLevelFields(reflect.TypeOf(zero)),
		prepareForCreate:  func(context.Context, runtime.Object) {},
		prepareForUpdate:  func(context.Context, runtime.Object, runtime.Object) {},
		validate:          func(context.Context, runtime.Object) field.ErrorList { return nil },
		validateUpdate:    func(context.Context, runtime.Object, runtime.Object) field.ErrorList { return nil },
		canonicalize:      func(runtime.Object) {},
	}
	bind := binders[T](s)
	var errs []string
	for _, h := range hooks.Strategy {
		if !bindHook(bind[h.Name], hooksValue) && hasMethod(hooksValue, h.Name) {
			errs = append(errs, hookError(hooksValue, h.Name, h.Signature(reflect.TypeOf(zero).String())).Error())
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("strategy hooks for %s: %s", gr, strings.Join(errs, "; "))
	}
	return s, nil
}

// bindHook binds the first of forms hooks has; false when it has none.
func bindHook(forms []form, hooks any) bool {
	for _, f := range forms {
		if f.bind(hooks) {
			return true
		}
	}
	return false
}

// hookError reports a hook declared with a signature the framework cannot call.
func hookError(hooks any, name, want string) error {
	m, _ := reflect.TypeOf(hooks).MethodByName(name)
	// m.Type has the receiver as its first argument: spell the method without it.
	var in, out []string
	for i := 1; i < m.Type.NumIn(); i++ {
		in = append(in, m.Type.In(i).String())
	}
	for i := range m.Type.NumOut() {
		out = append(out, m.Type.Out(i).String())
	}
	got := "func(" + strings.Join(in, ", ") + ")"
	switch len(out) {
	case 0:
	case 1:
		got += " " + out[0]
	default:
		got += " (" + strings.Join(out, ", ") + ")"
	}
	return fmt.Errorf("%T.%s has signature %s; want %s", hooks, name, got, want)
}

func hasMethod(hooks any, name string) bool {
	_, ok := reflect.TypeOf(hooks).MethodByName(name)
	return ok
}
