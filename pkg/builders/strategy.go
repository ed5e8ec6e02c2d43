package builders

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// DefaultStrategy is embedded in every generated <Kind>Strategy. Its hooks do
// nothing: the semantics every resource needs (status is written only through
// /status, metadata.generation counts spec changes) are enforced by Strategy
// around the hooks, so an override can never lose them.
//
// Override a hook by declaring it on <Kind>Strategy, with either the internal
// type or runtime.Object as the object argument:
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

// Strategy implements the create, update and delete strategies of
// k8s.io/apiserver's generic registry for one resource, calling the user's hooks.
type Strategy struct {
	runtime.ObjectTyper
	names.NameGenerator

	resource          schema.GroupResource
	namespaced        bool
	statusSubresource bool
	versions          []string
	resetFields       []string // top-level JSON fields other than metadata and status

	prepareForCreate func(context.Context, runtime.Object)
	prepareForUpdate func(ctx context.Context, obj, old runtime.Object)
	validate         func(context.Context, runtime.Object) field.ErrorList
	validateUpdate   func(ctx context.Context, obj, old runtime.Object) field.ErrorList
	canonicalize     func(runtime.Object)
	nameRule         func(name string, prefix bool) []string
	// schema validates objects against the kind's schemas; nil without.
	schema SchemaValidation
	// validationOptions is the DeclarativeValidationOptions hook: the
	// options the +k8s:ifEnabled / +k8s:ifDisabled tags name; nil without.
	validationOptions func(context.Context) map[string]bool
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

// newStrategy binds the user's hooks for internal type T. A hook may take T or
// runtime.Object; a hook with any other signature is an error at start-up
// rather than a silently ignored method.
func newStrategy[T runtime.Object](scheme *runtime.Scheme, gr schema.GroupResource, namespaced, statusSubresource bool, versions []string, hooks any) (*Strategy, error) {
	var def DefaultStrategy
	if hooks == nil {
		hooks = def
	}
	var zero T
	typeName := reflect.TypeOf(zero).String()
	s := &Strategy{
		ObjectTyper:       scheme,
		NameGenerator:     names.SimpleNameGenerator,
		resource:          gr,
		namespaced:        namespaced,
		statusSubresource: statusSubresource,
		versions:          versions,
		resetFields:       topLevelFields(reflect.TypeOf(zero)),
	}
	var errs []string
	bad := func(name, sig string) {
		if hasMethod(hooks, name) {
			errs = append(errs, hookError(hooks, name, fmt.Sprintf(sig, typeName)).Error())
		}
	}

	bindPrepareHooks[T](s, hooks, bad)
	bindValidateHooks[T](s, hooks, bad)
	bindOtherHooks[T](s, hooks, bad)
	if len(errs) > 0 {
		return nil, fmt.Errorf("strategy hooks for %s: %s", gr, strings.Join(errs, "; "))
	}
	return s, nil
}

// bindPrepareHooks binds PrepareForCreate and PrepareForUpdate, taking T or
// runtime.Object; bad reports a method of the name with another signature.
func bindPrepareHooks[T runtime.Object](s *Strategy, hooks any, bad func(name, sig string)) {
	var def DefaultStrategy
	switch h := hooks.(type) {
	case interface{ PrepareForCreate(context.Context, T) }:
		s.prepareForCreate = func(ctx context.Context, obj runtime.Object) { h.PrepareForCreate(ctx, obj.(T)) }
	case interface {
		PrepareForCreate(context.Context, runtime.Object)
	}:
		s.prepareForCreate = h.PrepareForCreate
	default:
		bad("PrepareForCreate", "func(context.Context, %s)")
		s.prepareForCreate = def.PrepareForCreate
	}
	switch h := hooks.(type) {
	case interface{ PrepareForUpdate(context.Context, T, T) }:
		s.prepareForUpdate = func(ctx context.Context, obj, old runtime.Object) { h.PrepareForUpdate(ctx, obj.(T), old.(T)) }
	case interface {
		PrepareForUpdate(context.Context, runtime.Object, runtime.Object)
	}:
		s.prepareForUpdate = h.PrepareForUpdate
	default:
		bad("PrepareForUpdate", "func(ctx context.Context, obj, old %[1]s)")
		s.prepareForUpdate = def.PrepareForUpdate
	}
}

// bindValidateHooks binds Validate and ValidateUpdate.
func bindValidateHooks[T runtime.Object](s *Strategy, hooks any, bad func(name, sig string)) {
	var def DefaultStrategy
	switch h := hooks.(type) {
	case interface {
		Validate(context.Context, T) field.ErrorList
	}:
		s.validate = func(ctx context.Context, obj runtime.Object) field.ErrorList { return h.Validate(ctx, obj.(T)) }
	case interface {
		Validate(context.Context, runtime.Object) field.ErrorList
	}:
		s.validate = h.Validate
	default:
		bad("Validate", "func(context.Context, %s) field.ErrorList")
		s.validate = def.Validate
	}
	switch h := hooks.(type) {
	case interface {
		ValidateUpdate(context.Context, T, T) field.ErrorList
	}:
		s.validateUpdate = func(ctx context.Context, obj, old runtime.Object) field.ErrorList {
			return h.ValidateUpdate(ctx, obj.(T), old.(T))
		}
	case interface {
		ValidateUpdate(context.Context, runtime.Object, runtime.Object) field.ErrorList
	}:
		s.validateUpdate = h.ValidateUpdate
	default:
		bad("ValidateUpdate", "func(ctx context.Context, obj, old %[1]s) field.ErrorList")
		s.validateUpdate = def.ValidateUpdate
	}
}

// bindOtherHooks binds Canonicalize, DeclarativeValidationOptions and
// ValidateName.
func bindOtherHooks[T runtime.Object](s *Strategy, hooks any, bad func(name, sig string)) {
	var def DefaultStrategy
	switch h := hooks.(type) {
	case interface{ Canonicalize(T) }:
		s.canonicalize = func(obj runtime.Object) { h.Canonicalize(obj.(T)) }
	case interface{ Canonicalize(runtime.Object) }:
		s.canonicalize = h.Canonicalize
	default:
		bad("Canonicalize", "func(%s)")
		s.canonicalize = def.Canonicalize
	}
	switch h := hooks.(type) {
	case interface {
		DeclarativeValidationOptions(context.Context) map[string]bool
	}:
		s.validationOptions = h.DeclarativeValidationOptions
	default:
		bad("DeclarativeValidationOptions", "func(ctx context.Context) map[string]bool")
	}
	switch h := hooks.(type) {
	case interface{ ValidateName(string, bool) []string }:
		s.nameRule = h.ValidateName
	default:
		bad("ValidateName", "func(name string, prefix bool) []string")
	}
}

// NameRule is the ValidateName hook: the rule metadata.name (and, with
// prefix, metadata.generateName) follows instead of a DNS subdomain; nil
// without the hook.
func (s *Strategy) NameRule() func(name string, prefix bool) []string { return s.nameRule }

// ValidationOptions is the DeclarativeValidationOptions hook: the options
// of the kind's declarative validation (+k8s:ifEnabled(Option)); nil
// without the hook.
func (s *Strategy) ValidationOptions() func(context.Context) map[string]bool {
	return s.validationOptions
}

// NamespaceScoped reports whether objects live in a namespace.
func (s *Strategy) NamespaceScoped() bool { return s.namespaced }

// PrepareForCreate clears the status (when /status is served), starts
// metadata.generation at 1 and fills the schema's defaults of fields the
// client left out that the Go types cannot leave out, then calls the
// PrepareForCreate hook.
func (s *Strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	if s.statusSubresource {
		clearStatus(obj)
	}
	if m, err := meta.Accessor(obj); err == nil {
		m.SetGeneration(1)
	}
	s.defaultAbsent(ctx, obj, nil)
	s.prepareForCreate(ctx, obj)
}

// PrepareForUpdate keeps the stored status (when /status is served),
// fills defaults as PrepareForCreate does, bumps metadata.generation when
// anything but metadata and status changed, then calls the PrepareForUpdate
// hook.
func (s *Strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	if s.statusSubresource {
		copyStatus(obj, old)
	}
	s.defaultAbsent(ctx, obj, old)
	bumpGeneration(obj, old)
	s.prepareForUpdate(ctx, obj, old)
}

// defaultAbsent gives the fields the client left out that the Go types
// write as their zero value (no omitempty) the default of the kind's
// schema, as a CRD stores it (SchemaValidation's DefaultAbsent).
func (s *Strategy) defaultAbsent(ctx context.Context, obj, old runtime.Object) {
	if d, ok := s.schema.(interface {
		DefaultAbsent(ctx context.Context, obj, old runtime.Object)
	}); ok {
		d.DefaultAbsent(ctx, obj, old)
	}
}

// Validate validates the object against its kind's schema, as
// kube-apiserver validates a custom resource (SchemaValidation), then calls
// the Validate hook.
func (s *Strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	var errs field.ErrorList
	if s.schema != nil {
		errs = s.schema.Validate(ctx, obj)
	}
	return append(errs, s.validate(ctx, obj)...)
}

// ValidateUpdate validates the update against the kind's schema, as
// kube-apiserver validates a custom resource update (values left unchanged
// are not re-rejected), then calls the ValidateUpdate hook.
func (s *Strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	var errs field.ErrorList
	if s.schema != nil {
		errs = s.schema.ValidateUpdate(ctx, obj, old)
	}
	return append(errs, s.validateUpdate(ctx, obj, old)...)
}

// Canonicalize calls the Canonicalize hook.
func (s *Strategy) Canonicalize(obj runtime.Object) { s.canonicalize(obj) }

// WarningsOnCreate returns no warnings.
func (s *Strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

// WarningsOnUpdate returns no warnings.
func (s *Strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// AllowCreateOnUpdate is false: PUT to a missing object is 404, as for built-in kinds.
func (s *Strategy) AllowCreateOnUpdate(ctx context.Context) bool { return false }

// AllowUnconditionalUpdate lets updates without a resourceVersion through.
func (s *Strategy) AllowUnconditionalUpdate(ctx context.Context) bool { return true }

// GetResetFields tells server-side apply that status belongs to /status.
func (s *Strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	if !s.statusSubresource {
		return nil
	}
	return s.fieldSets("status")
}

func (s *Strategy) fieldSets(fields ...string) map[fieldpath.APIVersion]*fieldpath.Set {
	out := map[fieldpath.APIVersion]*fieldpath.Set{}
	for _, v := range s.versions {
		set := fieldpath.NewSet()
		for _, f := range fields {
			set.Insert(fieldpath.MakePathOrDie(f))
		}
		out[fieldpath.APIVersion(schema.GroupVersion{Group: s.resource.Group, Version: v}.String())] = set
	}
	return out
}

// StatusStrategy is the update strategy of /status: only status and metadata
// may change there.
type StatusStrategy struct{ *Strategy }

// NewStatusStrategy returns the /status update strategy for s.
func NewStatusStrategy(s *Strategy) *StatusStrategy { return &StatusStrategy{s} }

// PrepareForUpdate keeps everything but metadata and status from the
// stored object, and defaults the status fields left out.
func (s *StatusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	copyAllButMetaAndStatus(obj, old)
	// The status fields the write left out that the Go types cannot leave
	// out get the schema's default, as the status of a CRD does.
	if d, ok := s.schema.(interface {
		DefaultAbsentStatus(ctx context.Context, obj, old runtime.Object)
	}); ok {
		d.DefaultAbsentStatus(ctx, obj, old)
	}
	bumpGeneration(obj, old) // nothing but status changed: keeps the stored generation
}

// ValidateUpdate validates the status against its schema, as kube-apiserver
// validates a custom resource's /status (spec is kept from the stored
// object).
func (s *StatusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	if s.schema == nil {
		return nil
	}
	return s.schema.ValidateStatusUpdate(ctx, obj, old)
}

// GetResetFields tells server-side apply that only status is owned here.
func (s *StatusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return s.fieldSets(s.resetFields...)
}
