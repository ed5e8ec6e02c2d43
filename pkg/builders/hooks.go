package builders

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultStrategy is embedded in every generated <Kind>Strategy. Its hooks do
// nothing: the semantics every resource needs (status is written only through
// /status, metadata.generation counts spec changes) are enforced by the
// apiserver's strategy around the hooks, so an override can never lose them.
//
// Override a hook by declaring it on <Kind>Strategy, with either the internal
// type or runtime.Object as the object argument (docs/hooks.md lists the
// hooks, and generate checks their signatures):
//
//	func (*CronTabStrategy) Validate(ctx context.Context, obj *stable.CronTab) field.ErrorList
type DefaultStrategy struct{}

// PrepareForCreate runs before validation on create; the status is already cleared.
func (DefaultStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {}

// PrepareForUpdate runs before validation on update; the old status is already restored.
func (DefaultStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {}

// Validate returns the field errors of a new object (metadata is validated by the server).
func (DefaultStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList { return nil }

// ValidateUpdate returns the field errors of an update.
func (DefaultStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return nil
}

// Canonicalize normalises an object after validation, before it is stored.
func (DefaultStrategy) Canonicalize(obj runtime.Object) {}

// DefaultSchemeFns is embedded in every generated <Kind>SchemeFns.
type DefaultSchemeFns struct{}

// DefaultingFunction sets defaults on a versioned object; override it on <Kind>SchemeFns.
func (DefaultSchemeFns) DefaultingFunction(obj interface{}) {}
