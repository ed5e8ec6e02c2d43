package strategy

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

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

// Canonicalize calls the Canonicalize hook, then, when the kind's schema is
// its CRD manifest's, removes the fields the manifest does not declare that
// a hook set (SchemaValidation's Prune): the object is stored next.
func (s *Strategy) Canonicalize(obj runtime.Object) {
	s.canonicalize(obj)
	if p, ok := s.schema.(interface{ Prune(runtime.Object) }); ok {
		p.Prune(obj)
	}
}

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
