package builders

import (
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
	// StorageVersion is the version objects are encoded in when written to etcd.
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
	// StatusSubresource serves /status with status-only update semantics.
	StatusSubresource bool

	// New and NewList return empty internal objects.
	New     func() runtime.Object
	NewList func() runtime.Object

	// strategy builds the REST strategy once the scheme is known.
	strategy func(scheme *runtime.Scheme, group string) (*Strategy, error)
}

// NewResource describes a resource whose internal type is T. hooks is a
// pointer to the user's <Kind>Strategy value: any hook declared on it (with a
// T or runtime.Object argument) replaces the default behaviour.
func NewResource[T runtime.Object](r Resource, hooks any) *Resource {
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
