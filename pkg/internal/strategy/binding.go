package strategy

import (
	"errors"

	"k8s.io/apimachinery/pkg/runtime"
)

// Binding is the part of a builders.Resource that builders.NewResource
// sets: the user's hooks value, and how to build the resource's strategy
// once the scheme is known. builders.Resource embeds it under an
// unexported name; it has no exported fields or methods, so nothing of it
// shows in builders' API, and For and Hooks read it from a
// *builders.Resource.
type Binding struct {
	hooks any
	build func(scheme *runtime.Scheme, group string) (*Strategy, error)
}

// Bind returns the binding of the hooks value: build makes the strategy.
func Bind(hooks any, build func(scheme *runtime.Scheme, group string) (*Strategy, error)) Binding {
	return Binding{hooks: hooks, build: build}
}

func (b *Binding) resourceBinding() *Binding { return b }

// Bound is what embeds a Binding: a *builders.Resource.
type Bound interface{ resourceBinding() *Binding }

// For returns the strategy of the resource r in group, with its hooks bound.
func For(r Bound, scheme *runtime.Scheme, group string) (*Strategy, error) {
	b := r.resourceBinding()
	if b.build == nil {
		return nil, errors.New("the resource was not built with builders.NewResource")
	}
	return b.build(scheme, group)
}

// Hooks returns the user's hooks value of the resource r (a pointer to its
// <Kind>Strategy), for optional hooks such as ConvertToTable; nil without.
func Hooks(r Bound) any { return r.resourceBinding().hooks }
