package builders

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-boot/apiserver-boot/pkg/internal/strategy"
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

// Resource describes one REST resource, backed by the internal (unversioned)
// type. Build it with NewResource: the apiserver serves only resources
// built so.
type Resource struct {
	// Kind is the kind's name, e.g. "CronTab".
	Kind string
	// Plural is the resource's name in URLs, e.g. "crontabs".
	Plural string
	// Singular is the name kubectl accepts for one object, e.g. "crontab".
	Singular string
	// ShortNames are the aliases kubectl accepts, e.g. "ct".
	ShortNames []string
	// Categories are the names kubectl get accepts for a set of resources
	// this one belongs to, e.g. "all".
	Categories []string
	// Namespaced: objects live in a namespace; otherwise cluster-scoped.
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

	// binding is what NewResource binds: the hooks value and the
	// strategy's constructor, which the apiserver reads
	// (pkg/internal/strategy).
	binding
}

// binding names strategy.Binding for an unexported embedded field.
type binding = strategy.Binding

// Subresource is a custom subresource: POST <plural>/<name>/<Path> with a
// request object calls Handle with the named object and the request.
type Subresource struct {
	// Path is the subresource's name in the URL, e.g. "restart".
	Path string
	// NewRequest returns an empty internal request object.
	NewRequest func() runtime.Object
	// Handle answers a request: obj is the named object, request the
	// decoded body; what it returns is answered in the request's version.
	Handle func(ctx context.Context, obj, request runtime.Object) (runtime.Object, error)
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
	// Name is the column's header.
	Name string
	// Type is integer, number, string, boolean or date.
	Type string
	// Format is the OpenAPI format of the value, e.g. "int32"; optional.
	Format string
	// Description is the column's description in the Table; optional.
	Description string
	// JSONPath selects the value in the object, e.g. ".spec.replicas".
	JSONPath string
	// Priority 0 columns are always shown; higher ones with -o wide.
	Priority int32
}

// Scale locates a resource's replica counts for the /scale subresource, as
// JSON paths in the object (e.g. ".spec.replicas").
type Scale struct {
	// SpecReplicasPath is where the spec holds the desired count.
	SpecReplicasPath string
	// StatusReplicasPath is where the status holds the observed count.
	StatusReplicasPath string
	// LabelSelectorPath is optional: where the status holds the pods' selector, for autoscalers.
	LabelSelectorPath string
}

// NewResource describes a resource whose internal type is T. hooks is a
// pointer to the user's <Kind>Strategy value: any hook declared on it (with a
// T or runtime.Object argument) replaces the default behaviour.
func NewResource[T runtime.Object](r Resource, hooks any) *Resource {
	p := &r
	p.binding = strategy.Bind(hooks, func(scheme *runtime.Scheme, group string) (*strategy.Strategy, error) {
		return strategy.New[T](scheme, schema.GroupResource{Group: group, Resource: p.Plural}, p.Namespaced, p.StatusSubresource, p.Versions, hooks)
	})
	return p
}
