package builders

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// APIGroup is everything the apiserver needs to serve one API group.
type APIGroup struct {
	// Name is the full group name, e.g. "stable.example.com".
	Name string
	// Versions lists the served versions, most preferred first.
	Versions []string
	// StorageVersion is the most preferred version a resource of the group is
	// stored in (each Resource names its own).
	StorageVersion string
	// AddToScheme registers the internal type and every versioned type,
	// with their conversions and defaulters.
	AddToScheme func(*runtime.Scheme) error
	// Resources are the REST resources of the group.
	Resources []*Resource
}

// PrioritizedVersions returns the group's versions as GroupVersions, most preferred first.
func (g *APIGroup) PrioritizedVersions() []schema.GroupVersion {
	out := make([]schema.GroupVersion, 0, len(g.Versions))
	for _, v := range g.Versions {
		out = append(out, schema.GroupVersion{Group: g.Name, Version: v})
	}
	return out
}

// StorageGroupVersion is the group version r is encoded in in etcd.
func (g *APIGroup) StorageGroupVersion(r *Resource) schema.GroupVersion {
	if r.StorageVersion != "" {
		return schema.GroupVersion{Group: g.Name, Version: r.StorageVersion}
	}
	return schema.GroupVersion{Group: g.Name, Version: g.StorageVersion}
}

// Resource describes one REST resource, backed by the internal (unversioned) type.
type Resource struct {
	Kind       string
	Plural     string
	Singular   string
	ShortNames []string
	Categories []string
	Namespaced bool
	// Versions lists the versions that serve this resource.
	Versions []string
	// StorageVersion is the version objects are encoded in when written to
	// etcd; empty means the group's.
	StorageVersion string
	// StatusSubresource serves /status with status-only update semantics.
	StatusSubresource bool
	// Scale, when set, serves /scale as autoscaling/v1 Scale.
	Scale *Scale

	// Subresources are custom REST subresources (POST <plural>/<name>/<path>).
	Subresources []Subresource

	// PrintColumns are the extra columns of `kubectl get`, from +printcolumn markers.
	PrintColumns []Column
	// ExactColumns: PrintColumns are all the columns after NAME, as a CRD's
	// additionalPrinterColumns are (+kubebuilder:printcolumn); otherwise AGE
	// comes last, unless a column shows metadata.creationTimestamp.
	ExactColumns bool
	// SelectableFields are JSON paths (".spec.cronSpec") usable in field selectors,
	// besides metadata.name and metadata.namespace.
	SelectableFields []string

	// Schemas are the kind's OpenAPI v3 schemas by version, generated from
	// its types and markers: objects are validated against them as
	// kube-apiserver validates custom resources.
	Schemas map[string]Schema

	// New and NewList return empty internal objects.
	New     func() runtime.Object
	NewList func() runtime.Object

	// strategy builds the REST strategy once the scheme is known.
	strategy func(scheme *runtime.Scheme, group string) (*Strategy, error)
	hooks    any
}

// Subresource is a custom subresource: POST <plural>/<name>/<Path> with a
// request object calls Handle with the named object and the request.
type Subresource struct {
	Path       string
	NewRequest func() runtime.Object
	Handle     func(ctx context.Context, obj, request runtime.Object) (runtime.Object, error)
}

// NewSubresource binds a typed handler, such as a method declared on
// <Kind>Strategy, taking the internal object and the internal request.
func NewSubresource[T, R runtime.Object](path string, newRequest func() runtime.Object, handle func(context.Context, T, R) (runtime.Object, error)) Subresource {
	return Subresource{Path: path, NewRequest: newRequest, Handle: func(ctx context.Context, obj, request runtime.Object) (runtime.Object, error) {
		return handle(ctx, obj.(T), request.(R))
	}}
}

// Column is a printer column: what `kubectl get` shows besides NAME and AGE.
type Column struct {
	Name        string
	Type        string // integer, number, string, boolean or date
	Format      string
	Description string
	JSONPath    string
	// Priority 0 columns are always shown; higher ones with -o wide.
	Priority int32
}

// Hooks returns the user's strategy hooks value, for optional hooks such as ConvertToTable.
func (r *Resource) Hooks() any { return r.hooks }

// Scale locates a resource's replica counts for the /scale subresource, as
// JSON paths in the object (e.g. ".spec.replicas").
type Scale struct {
	SpecReplicasPath   string
	StatusReplicasPath string
	// LabelSelectorPath is optional: where the status holds the pods' selector, for autoscalers.
	LabelSelectorPath string
}

// NewResource describes a resource whose internal type is T. hooks is a
// pointer to the user's <Kind>Strategy value: any hook declared on it (with a
// T or runtime.Object argument) replaces the default behaviour.
func NewResource[T runtime.Object](r Resource, hooks any) *Resource {
	r.hooks = hooks
	r.strategy = func(scheme *runtime.Scheme, group string) (*Strategy, error) {
		return newStrategy[T](scheme, schema.GroupResource{Group: group, Resource: r.Plural}, r.Namespaced, r.StatusSubresource, r.Versions, hooks)
	}
	return &r
}

// Strategy returns the REST strategy for the resource in the given group.
func (r *Resource) Strategy(scheme *runtime.Scheme, group string) (*Strategy, error) {
	if r.strategy == nil {
		return nil, fmt.Errorf("resource %s was not built with builders.NewResource", r.Kind)
	}
	return r.strategy(scheme, group)
}
