package server

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/adoption"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/strategy"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/validation"
)

// resourceREST is the main endpoint of a resource: the generic etcd-backed
// store plus the discovery details kubectl reads (short names, categories).
type resourceREST struct {
	*genericregistry.Store
	shortNames []string
	categories []string
}

var (
	_ rest.ShortNamesProvider = &resourceREST{}
	_ rest.CategoriesProvider = &resourceREST{}
)

func (r *resourceREST) ShortNames() []string { return r.shortNames }
func (r *resourceREST) Categories() []string { return r.categories }

// statusREST serves <plural>/<name>/status: get and update only.
type statusREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Patcher              = &statusREST{}
	_ rest.ResetFieldsStrategy  = &statusREST{}
	_ rest.SingularNameProvider = &statusREST{}
	_ rest.StandardStorage      = &resourceREST{}
)

func (r *statusREST) New() runtime.Object { return r.store.New() }
func (r *statusREST) Destroy()            {} // the main store owns the storage
func (r *statusREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}

// Update only changes status: the store's UpdateStrategy is the status strategy.
func (r *statusREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	// Subresources never create their parent.
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}
func (r *statusREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}
func (r *statusREST) ReadinessCheck() error   { return r.store.ReadinessCheck() }
func (r *statusREST) GetSingularName() string { return r.store.GetSingularName() }
func (r *statusREST) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, opts)
}

// NewStore builds the etcd-backed store of a resource's main endpoint, as the
// server does; conformance tests use it directly.
func NewStore(r *builders.Resource, group string, scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*genericregistry.Store, error) {
	storage, err := newStorage(r, group, scheme, optsGetter, nil)
	if err != nil {
		return nil, err
	}
	return storage[r.Plural].(*resourceREST).Store, nil
}

// newStorage builds the REST storage of one resource: "<plural>" and, when
// enabled, "<plural>/status"; with floors, its storage answers LIST and
// WATCH at a resourceVersion it never gave with 410 Gone (adoption.Guard).
func newStorage(r *builders.Resource, group string, scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter, floors *adoption.Floors) (map[string]rest.Storage, error) {
	st, err := strategy.For(r, scheme, group)
	if err != nil {
		return nil, err
	}
	if len(r.Schemas) > 0 {
		v, err := validation.New(scheme, group, r, st.NameRule())
		if err != nil {
			return nil, err
		}
		st.SetSchemaValidation(v)
	}
	gr := schema.GroupResource{Group: group, Resource: r.Plural}
	content := jsoncontent.ForKind(scheme, group, r)
	table, err := newTableConvertor(r, content)
	if err != nil {
		return nil, err
	}
	if err := addFieldLabelConversions(scheme, group, r); err != nil {
		return nil, err
	}
	// The store's strategies: with the kind's declarative validation, when
	// it has some (rest.DeclarativeValidationStrategy).
	var main interface {
		rest.RESTCreateStrategy
		rest.RESTUpdateStrategy
		rest.RESTDeleteStrategy
		rest.ResetFieldsStrategy
	} = st
	var statusStrategy interface {
		rest.RESTUpdateStrategy
		rest.ResetFieldsStrategy
	} = strategy.NewStatusStrategy(st)
	if d := newDeclarative(scheme, group, r, st.ValidationOptions()); d != nil {
		main = declarativeStrategy{st, d}
		statusStrategy = declarativeStatusStrategy{strategy.NewStatusStrategy(st), d}
	}
	store := &genericregistry.Store{
		NewFunc:                   r.New,
		NewListFunc:               r.NewList,
		DefaultQualifiedResource:  gr,
		SingularQualifiedResource: schema.GroupResource{Group: group, Resource: r.Singular},
		CreateStrategy:            main,
		UpdateStrategy:            main,
		DeleteStrategy:            main,
		ResetFieldsStrategy:       main,
		TableConvertor:            table,
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: attrFunc(r, content)}); err != nil {
		return nil, err
	}
	if floors != nil {
		store.Storage.Storage = adoption.Guard(store.Storage.Storage, gr, floors)
	}
	out := map[string]rest.Storage{
		r.Plural: &resourceREST{Store: store, shortNames: r.ShortNames, categories: r.Categories},
	}
	if r.StatusSubresource {
		statusStore := *store
		statusStore.UpdateStrategy = statusStrategy
		statusStore.ResetFieldsStrategy = statusStrategy
		out[r.Plural+"/status"] = &statusREST{store: &statusStore}
	}
	if r.Scale != nil {
		out[r.Plural+"/scale"] = &scaleREST{store: store, paths: *r.Scale, content: content}
	}
	for _, sub := range r.Subresources {
		out[r.Plural+"/"+sub.Path] = &customREST{store: store, sub: sub}
	}
	return out, nil
}
