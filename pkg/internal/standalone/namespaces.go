package standalone

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"
	"k8s.io/apiserver/pkg/storage/names"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	backend "github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// Standalone mode serves the core v1 namespaces itself (in delegated mode
// kube-apiserver owns them): the NamespaceLifecycle admission plugin then
// refuses objects in a namespace that does not exist, or is being deleted,
// as a cluster does, and `kubectl create namespace` works. Namespaces are
// stored as kube-apiserver stores them: protobuf in v1, under
// <prefix>/namespaces/<name>. Deleting one marks it Terminating (the
// "kubernetes" finalizer of spec.finalizers, set at create); the server then
// deletes the project's objects in it and, once none is left (objects with
// finalizers of their own wait for them), the namespace.

var (
	coreV1       = schema.GroupVersion{Version: "v1"}
	coreInternal = schema.GroupVersion{Version: runtime.APIVersionInternal}
)

// systemNamespaces exist from the start and cannot be deleted, as in a cluster.
var systemNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic}

// addNamespacesToScheme registers Namespace and NamespaceList of k8s.io/api
// in v1 and, as the same Go types, as the internal version the generic
// server converts through (no conversion is needed then).
func addNamespacesToScheme(s *runtime.Scheme) error {
	for _, gv := range []schema.GroupVersion{coreV1, coreInternal} {
		s.AddKnownTypes(gv, &corev1.Namespace{}, &corev1.NamespaceList{})
	}
	if err := s.SetVersionPriority(coreV1); err != nil {
		return err
	}
	return s.AddFieldLabelConversionFunc(coreV1.WithKind("Namespace"), func(label, value string) (string, string, error) {
		switch label {
		case "metadata.name", "status.phase":
			return label, value, nil
		}
		return "", "", fmt.Errorf("field label not supported for namespaces: %s", label)
	})
}

type namespaceStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

func (namespaceStrategy) NamespaceScoped() bool { return false }

// PrepareForCreate starts a namespace Active, with the finalizer under which
// the server deletes its content, and the kubernetes.io/metadata.name label
// kube-apiserver sets.
func (namespaceStrategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	ns := obj.(*corev1.Namespace)
	ns.Status = corev1.NamespaceStatus{Phase: corev1.NamespaceActive}
	if !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, corev1.FinalizerKubernetes)
	}
	nameLabel(ns)
}

// PrepareForUpdate keeps the finalizers and status: the server's to change.
func (namespaceStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	ns.Spec.Finalizers = oldNS.Spec.Finalizers
	ns.Status = oldNS.Status
	nameLabel(ns)
}

func nameLabel(ns *corev1.Namespace) {
	if ns.Labels == nil {
		ns.Labels = map[string]string{}
	}
	ns.Labels[corev1.LabelMetadataName] = ns.Name
}

func (namespaceStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	ns := obj.(*corev1.Namespace)
	errs := apivalidation.ValidateObjectMeta(&ns.ObjectMeta, false, apivalidation.ValidateNamespaceName, field.NewPath("metadata"))
	for i, f := range ns.Spec.Finalizers {
		errs = append(errs, apivalidation.ValidateFinalizerName(string(f), field.NewPath("spec", "finalizers").Index(i))...)
	}
	return errs
}

func (s namespaceStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	ns, oldNS := obj.(*corev1.Namespace), old.(*corev1.Namespace)
	return append(apivalidation.ValidateObjectMetaUpdate(&ns.ObjectMeta, &oldNS.ObjectMeta, field.NewPath("metadata")), s.Validate(ctx, obj)...)
}

func (namespaceStrategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	return nil
}
func (namespaceStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}
func (namespaceStrategy) Canonicalize(obj runtime.Object)                   {}
func (namespaceStrategy) AllowCreateOnUpdate(ctx context.Context) bool      { return false }
func (namespaceStrategy) AllowUnconditionalUpdate(ctx context.Context) bool { return true }
func (namespaceStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{"v1": fieldpath.NewSet(fieldpath.MakePathOrDie("status"))}
}

func namespaceAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	ns, ok := obj.(*corev1.Namespace)
	if !ok {
		return nil, nil, fmt.Errorf("not a Namespace: %T", obj)
	}
	return ns.Labels, fields.Set{"metadata.name": ns.Name, "status.phase": string(ns.Status.Phase)}, nil
}

// namespaceREST serves /api/v1/namespaces: create, get, list, watch,
// update, patch and delete (no deletecollection, as kube-apiserver).
type namespaceREST struct {
	store *genericregistry.Store
}

var (
	_ rest.Creater              = &namespaceREST{}
	_ rest.Lister               = &namespaceREST{}
	_ rest.Getter               = &namespaceREST{}
	_ rest.Watcher              = &namespaceREST{}
	_ rest.Updater              = &namespaceREST{}
	_ rest.GracefulDeleter      = &namespaceREST{}
	_ rest.ShortNamesProvider   = &namespaceREST{}
	_ rest.SingularNameProvider = &namespaceREST{}
	_ rest.ResetFieldsStrategy  = &namespaceREST{}
	_ rest.TableConvertor       = &namespaceREST{}
	_ rest.Scoper               = &namespaceREST{}
	_ rest.Storage              = &namespaceREST{}
)

func newNamespaceREST(scheme *runtime.Scheme, optsGetter generic.RESTOptionsGetter) (*namespaceREST, error) {
	strategy := namespaceStrategy{ObjectTyper: scheme, NameGenerator: names.SimpleNameGenerator}
	store := &genericregistry.Store{
		NewFunc:                   func() runtime.Object { return &corev1.Namespace{} },
		NewListFunc:               func() runtime.Object { return &corev1.NamespaceList{} },
		DefaultQualifiedResource:  corev1.Resource("namespaces"),
		SingularQualifiedResource: corev1.Resource("namespace"),
		CreateStrategy:            strategy,
		UpdateStrategy:            strategy,
		DeleteStrategy:            strategy,
		ResetFieldsStrategy:       strategy,
		ReturnDeletedObject:       true,
		TableConvertor:            namespaceTable{},
	}
	if err := store.CompleteWithOptions(&generic.StoreOptions{RESTOptions: optsGetter, AttrFunc: namespaceAttrs}); err != nil {
		return nil, err
	}
	return &namespaceREST{store: store}, nil
}

func (r *namespaceREST) New() runtime.Object     { return r.store.New() }
func (r *namespaceREST) NewList() runtime.Object { return r.store.NewList() }
func (r *namespaceREST) Destroy()                { r.store.Destroy() }
func (r *namespaceREST) NamespaceScoped() bool   { return false }
func (r *namespaceREST) ShortNames() []string    { return []string{"ns"} }
func (r *namespaceREST) GetSingularName() string { return "namespace" }
func (r *namespaceREST) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return r.store.GetResetFields()
}
func (r *namespaceREST) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	return r.store.ConvertToTable(ctx, obj, opts)
}
func (r *namespaceREST) Create(ctx context.Context, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	return r.store.Create(ctx, obj, createValidation, options)
}
func (r *namespaceREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	return r.store.Get(ctx, name, options)
}
func (r *namespaceREST) List(ctx context.Context, options *metainternalversion.ListOptions) (runtime.Object, error) {
	return r.store.List(ctx, options)
}
func (r *namespaceREST) Watch(ctx context.Context, options *metainternalversion.ListOptions) (watch.Interface, error) {
	return r.store.Watch(ctx, options)
}
func (r *namespaceREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	return r.store.Update(ctx, name, objInfo, createValidation, updateValidation, false, options)
}

// Delete marks a namespace with finalizers Terminating (as kube-apiserver:
// deletionTimestamp set, status.phase Terminating) and returns it; the
// namespace finalizer deletes it once its content is gone. A namespace
// without finalizers is deleted at once.
func (r *namespaceREST) Delete(ctx context.Context, name string, deleteValidation rest.ValidateObjectFunc, options *metav1.DeleteOptions) (runtime.Object, bool, error) {
	obj, err := r.store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, false, err
	}
	ns := obj.(*corev1.Namespace)
	if options == nil {
		options = metav1.NewDeleteOptions(0)
	}
	if options.Preconditions == nil {
		options.Preconditions = &metav1.Preconditions{}
	}
	if options.Preconditions.UID == nil {
		options.Preconditions.UID = &ns.UID
	} else if *options.Preconditions.UID != ns.UID {
		return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
			fmt.Errorf("precondition failed: UID in precondition: %v, UID in object meta: %v", *options.Preconditions.UID, ns.UID))
	}
	if rv := options.Preconditions.ResourceVersion; rv != nil && *rv != ns.ResourceVersion {
		return nil, false, apierrors.NewConflict(corev1.Resource("namespaces"), name,
			fmt.Errorf("precondition failed: ResourceVersion in precondition: %v, ResourceVersion in object meta: %v", *rv, ns.ResourceVersion))
	}
	if len(ns.Spec.Finalizers) == 0 {
		return r.store.Delete(ctx, name, deleteValidation, options)
	}
	if ns.DeletionTimestamp != nil {
		return ns, false, nil // being finalized
	}
	if deleteValidation != nil {
		if err := deleteValidation(ctx, ns); err != nil {
			return nil, false, err
		}
	}
	key, err := r.store.KeyFunc(ctx, name)
	if err != nil {
		return nil, false, err
	}
	out := r.store.NewFunc()
	preconditions := storage.Preconditions{UID: options.Preconditions.UID, ResourceVersion: options.Preconditions.ResourceVersion}
	err = r.store.Storage.GuaranteedUpdate(ctx, key, out, false, &preconditions,
		storage.SimpleUpdate(func(existing runtime.Object) (runtime.Object, error) {
			ns := existing.(*corev1.Namespace)
			if ns.DeletionTimestamp == nil {
				now := metav1.Now()
				ns.DeletionTimestamp = &now
				ns.DeletionGracePeriodSeconds = new(int64)
			}
			ns.Status.Phase = corev1.NamespaceTerminating
			return ns, nil
		}), len(options.DryRun) > 0, nil)
	if err != nil {
		return nil, false, storeErr(err, name)
	}
	return out, false, nil
}

// storeErr gives storage errors the API status kube-apiserver answers with.
func storeErr(err error, name string) error {
	return storeerr.InterpretUpdateError(err, corev1.Resource("namespaces"), name)
}

// finalize removes the "kubernetes" finalizer of a terminating namespace;
// a namespace left without finalizers is deleted.
func (r *namespaceREST) finalize(ctx context.Context, name string) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	key, err := r.store.KeyFunc(ctx, name)
	if err != nil {
		return err
	}
	out := r.store.NewFunc()
	err = r.store.Storage.GuaranteedUpdate(ctx, key, out, false, nil,
		storage.SimpleUpdate(func(existing runtime.Object) (runtime.Object, error) {
			ns := existing.(*corev1.Namespace)
			ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == corev1.FinalizerKubernetes })
			return ns, nil
		}), false, nil)
	if err != nil {
		return storeErr(err, name)
	}
	if len(out.(*corev1.Namespace).Spec.Finalizers) > 0 {
		return nil // another finalizer's turn
	}
	_, _, err = r.store.Delete(ctx, name, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	return err
}

// ensureSystemNamespaces creates default, kube-system and kube-public. On
// the first start that serves namespaces (no default namespace yet: a new
// project, or one whose objects were written by a server that did not serve
// namespaces), it first creates every namespace that already holds objects
// of the project's kinds, so that stored objects stay in a namespace that
// exists and new objects can be created next to them; default comes last,
// so that it exists only once they do. A kind that cannot be listed is
// retried; once giveUp is set it is skipped, with an error in the log, so
// that one undecodable object cannot keep the server from serving.
func (r *namespaceREST) ensureSystemNamespaces(ctx context.Context, contents []*genericregistry.Store, giveUp bool) error {
	ctx = genericapirequest.WithNamespace(ctx, metav1.NamespaceNone)
	var names []string
	if _, err := r.store.Get(ctx, metav1.NamespaceDefault, &metav1.GetOptions{}); apierrors.IsNotFound(err) {
		held, err := namespacesHoldingObjects(ctx, contents, giveUp)
		if err != nil {
			return err
		}
		if len(held) > 0 {
			klog.InfoS("Creating the namespaces that stored objects are in", "namespaces", held)
		}
		names = held
	} else if err != nil {
		return err
	}
	// default last: it marks the namespaces of stored objects as created.
	names = append(names, metav1.NamespaceSystem, metav1.NamespacePublic, metav1.NamespaceDefault)
	for _, name := range names {
		_, err := r.store.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating namespace %s: %w", name, err)
		}
	}
	return nil
}

// namespacesHoldingObjects lists, a page at a time, the stored objects of
// the namespaced stores and returns the namespaces they are in (sorted, the
// system namespaces left out). A store that cannot be listed is an error,
// or, with skipFailing, logged and left out.
func namespacesHoldingObjects(ctx context.Context, contents []*genericregistry.Store, skipFailing bool) ([]string, error) {
	found := sets.New[string]()
	all := genericapirequest.WithNamespace(ctx, metav1.NamespaceAll)
	for _, s := range contents {
		if !s.NamespaceScoped() {
			continue
		}
		if err := eachNamespace(all, s, func(ns string) { found.Insert(ns) }); err != nil {
			if !skipFailing {
				return nil, fmt.Errorf("listing %s: %w", s.DefaultQualifiedResource, err)
			}
			klog.ErrorS(err, "The namespaces of stored objects of a resource that cannot be listed are not created: create them with kubectl create namespace", "resource", s.DefaultQualifiedResource.String())
		}
	}
	found.Delete(systemNamespaces...)
	found.Delete("")
	return sets.List(found), nil
}

// eachNamespace calls f with the namespace of every object of s, listing a
// page at a time.
func eachNamespace(ctx context.Context, s *genericregistry.Store, f func(string)) error {
	opts := &metainternalversion.ListOptions{Limit: 500}
	for {
		list, err := s.List(ctx, opts)
		if err != nil {
			return err
		}
		if err := meta.EachListItem(list, func(obj runtime.Object) error {
			m, err := meta.Accessor(obj)
			if err != nil {
				return err
			}
			f(m.GetNamespace())
			return nil
		}); err != nil {
			return err
		}
		lm, err := meta.ListAccessor(list)
		if err != nil {
			return err
		}
		if lm.GetContinue() == "" {
			return nil
		}
		opts = &metainternalversion.ListOptions{Limit: 500, Continue: lm.GetContinue()}
	}
}

// namespaceTable is kubectl's NAME STATUS AGE.
type namespaceTable struct{}

func (namespaceTable) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opt, ok := tableOptions.(*metav1.TableOptions); !ok || opt == nil || !opt.NoHeaders {
		table.ColumnDefinitions = []metav1.TableColumnDefinition{
			{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
			{Name: "Status", Type: "string", Description: "The status of the namespace"},
			{Name: "Age", Type: "string", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]},
		}
	}
	if l, ok := obj.(*corev1.NamespaceList); ok {
		table.ResourceVersion, table.Continue, table.RemainingItemCount = l.ResourceVersion, l.Continue, l.RemainingItemCount
	} else if ns, ok := obj.(*corev1.Namespace); ok {
		table.ResourceVersion = ns.ResourceVersion
	}
	var err error
	table.Rows, err = metatable.MetaToTableRow(obj, func(obj runtime.Object, m metav1.Object, name, age string) ([]any, error) {
		return []any{name, string(obj.(*corev1.Namespace).Status.Phase), age}, nil
	})
	return table, err
}

// namespaceFinalizer deletes the project's objects in terminating
// namespaces, then the namespaces: kube-controller-manager's namespace
// controller, for a server that serves only the project's kinds.
type namespaceFinalizer struct {
	namespaces *namespaceREST
	// contents are the stores of the project's namespaced resources.
	contents []*genericregistry.Store
	queue    workqueue.TypedRateLimitingInterface[string]
}

func newNamespaceFinalizer(namespaces *namespaceREST, contents []*genericregistry.Store) *namespaceFinalizer {
	return &namespaceFinalizer{namespaces: namespaces, contents: contents, queue: workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](100*time.Millisecond, 5*time.Second),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "namespace-finalizer"})}
}

// watch enqueues every namespace being deleted that the informer sees.
func (f *namespaceFinalizer) watch(informer cache.SharedIndexInformer) error {
	enqueue := func(obj any) {
		if ns, ok := obj.(*corev1.Namespace); ok && ns.DeletionTimestamp != nil {
			f.queue.Add(ns.Name)
		}
	}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, obj any) { enqueue(obj) }})
	return err
}

func (f *namespaceFinalizer) run(ctx context.Context) {
	go func() { <-ctx.Done(); f.queue.ShutDown() }()
	for {
		name, shutdown := f.queue.Get()
		if shutdown {
			return
		}
		if err := f.sync(ctx, name); err != nil {
			klog.InfoS("Namespace not finalized yet", "namespace", name, "reason", err)
			f.queue.AddRateLimited(name)
		} else {
			f.queue.Forget(name)
		}
		f.queue.Done(name)
	}
}

// sync deletes what namespace name holds and, once it holds nothing, the
// namespace. Objects with finalizers are marked deleted and waited for.
func (f *namespaceFinalizer) sync(ctx context.Context, name string) error {
	obj, err := f.namespaces.store.Get(ctx, name, &metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	ns := obj.(*corev1.Namespace)
	if ns.DeletionTimestamp == nil || !slices.Contains(ns.Spec.Finalizers, corev1.FinalizerKubernetes) {
		return nil
	}
	inNS := genericapirequest.WithNamespace(ctx, name)
	remaining := 0
	for _, s := range f.contents {
		if _, err := s.DeleteCollection(inNS, rest.ValidateAllObjectFunc, &metav1.DeleteOptions{}, &metainternalversion.ListOptions{}); err != nil {
			return fmt.Errorf("deleting %s: %w", s.DefaultQualifiedResource, err)
		}
		list, err := s.List(inNS, &metainternalversion.ListOptions{})
		if err != nil {
			return err
		}
		if n := meta.LenList(list); n > 0 {
			remaining += n
			klog.InfoS("Waiting for objects with finalizers", "namespace", name, "resource", s.DefaultQualifiedResource.String(), "count", n)
		}
	}
	if remaining > 0 {
		return fmt.Errorf("%d objects left, waiting for their finalizers", remaining)
	}
	if err := f.namespaces.finalize(ctx, name); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	klog.InfoS("Namespace deleted", "namespace", name)
	return nil
}

// loopbackInformers are the informers of a standalone server's namespaces,
// through a client of the server itself (its loopback), and the
// connections that client dialled.
type loopbackInformers struct {
	informers.SharedInformerFactory
	conns *dialedConns
}

// namespaceAdmission wires namespaces into a standalone server's config:
// a client and informers of the server itself (its loopback), and
// NamespaceLifecycle admission with them.
func namespaceAdmission(c *genericapiserver.RecommendedConfig) (*loopbackInformers, error) {
	conns := &dialedConns{}
	config := restclient.CopyConfig(c.LoopbackClientConfig)
	config.Dial = conns.dial
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	plugin, err := lifecycle.NewLifecycle(sets.New(systemNamespaces...))
	if err != nil {
		return nil, err
	}
	plugin.SetExternalKubeInformerFactory(factory)
	plugin.SetExternalKubeClientSet(client)
	if err := plugin.ValidateInitialization(); err != nil {
		return nil, err
	}
	c.SharedInformerFactory = factory
	c.AdmissionControl = admission.NewChainHandler(plugin)
	return &loopbackInformers{SharedInformerFactory: factory, conns: conns}, nil
}

// hangUpOnStop makes the server's stop close the loopback client's
// connections once the informers have stopped (they stop with the HTTP
// server). Left open, a connection holds the stop of the HTTP server for a
// second: HTTP/2's GOAWAY waits that long for a client to hang up (run
// local's restart waited for it at each reload).
func (l *loopbackInformers) hangUpOnStop(server *genericapiserver.GenericAPIServer) {
	server.AddPostStartHookOrDie("loopback-hang-up-on-stop", func(hook genericapiserver.PostStartHookContext) error {
		go l.hangUpAfter(hook)
		return nil
	})
}

// hangUpAfter waits for ctx's end (the informers' stop), then for every
// informer to have stopped, and closes the client's connections.
func (l *loopbackInformers) hangUpAfter(ctx context.Context) {
	<-ctx.Done()
	l.Shutdown()
	l.conns.closeAll()
}

// dialedConns are the connections a client dialled (its
// restclient.Config's Dial), to be closed at once when the server stops:
// closing only the idle ones would leave one whose cancelled watch the
// server has yet to acknowledge. The server has stopped taking requests
// then; a NamespaceLifecycle lookup of a request still draining that is
// under way on the connection fails with it, as any new one already did.
type dialedConns struct {
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
}

func (d *dialedConns) dial(ctx context.Context, network, address string) (net.Conn, error) {
	conn, err := (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext(ctx, network, address)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		conn.Close()
		return nil, errors.New("the server is stopping")
	}
	if d.conns == nil {
		d.conns = map[net.Conn]bool{}
	}
	d.conns[conn] = true
	return &dialedConn{Conn: conn, d: d}, nil
}

// closeAll closes every connection and refuses new ones.
func (d *dialedConns) closeAll() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	for c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

// dialedConn forgets itself when closed.
type dialedConn struct {
	net.Conn
	d    *dialedConns
	once sync.Once
}

func (c *dialedConn) Close() error {
	c.once.Do(func() {
		c.d.mu.Lock()
		delete(c.d.conns, c.Conn)
		c.d.mu.Unlock()
	})
	return c.Conn.Close()
}

// installNamespaces serves namespaces on server: the system namespaces are
// created at start and terminating namespaces are finalized.
func installNamespaces(server *genericapiserver.GenericAPIServer, scheme *runtime.Scheme, codecs serializer.CodecFactory, optsGetter generic.RESTOptionsGetter, factory informers.SharedInformerFactory, contents []*genericregistry.Store) error {
	opts := backend.VersionOptions{RESTOptionsGetter: optsGetter, Codec: backend.Codec(codecs, coreV1), GroupVersion: coreV1}
	namespaces, err := newNamespaceREST(scheme, opts)
	if err != nil {
		return err
	}
	info := genericapiserver.NewDefaultAPIGroupInfo("", scheme, metav1.ParameterCodec, codecs)
	info.PrioritizedVersions = []schema.GroupVersion{coreV1}
	info.VersionedResourcesStorageMap["v1"] = map[string]rest.Storage{"namespaces": namespaces}
	if err := server.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, &info); err != nil {
		return fmt.Errorf("installing namespaces: %w", err)
	}
	finalizer := newNamespaceFinalizer(namespaces, contents)
	if err := finalizer.watch(factory.Core().V1().Namespaces().Informer()); err != nil {
		return err
	}
	server.AddPostStartHookOrDie("system-namespaces", func(hook genericapiserver.PostStartHookContext) error {
		// Until they exist (etcd may be unreachable for a while), /readyz
		// fails on this hook, as kube-apiserver's does on its own.
		ctx := hook
		// Listing the stored objects is retried for a minute; past that, a
		// kind that still cannot be listed is skipped.
		giveUp := time.Now().Add(time.Minute)
		err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
			if err := namespaces.ensureSystemNamespaces(ctx, contents, time.Now().After(giveUp)); err != nil {
				klog.InfoS("System namespaces not created yet", "err", err)
				return false, nil
			}
			return true, nil
		})
		if err != nil {
			return err
		}
		go finalizer.run(ctx)
		return nil
	})
	return nil
}

// namespaceDefinitions are the OpenAPI definitions of the namespace types,
// with the documentation k8s.io/api carries (SwaggerDoc).
func namespaceDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	str := func(doc string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}, Default: "", Description: doc}}
	}
	obj := func(doc string, props map[string]spec.Schema, deps ...string) common.OpenAPIDefinition {
		return common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Description: doc, Type: []string{"object"}, Properties: props}}, Dependencies: deps}
	}
	refTo := func(doc, name string) spec.Schema {
		return spec.Schema{SchemaProps: spec.SchemaProps{Description: doc, Default: map[string]any{}, Ref: ref(name)}}
	}
	atomicList := func(doc string, items spec.Schema, ext spec.Extensions) spec.Schema {
		return spec.Schema{VendorExtensible: spec.VendorExtensible{Extensions: ext}, SchemaProps: spec.SchemaProps{
			Description: doc, Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &items}}}
	}
	objectMeta, listMeta, metaTime := metav1.ObjectMeta{}.OpenAPIModelName(), metav1.ListMeta{}.OpenAPIModelName(), metav1.Time{}.OpenAPIModelName()
	namespace, list, nsSpec, nsStatus, condition := corev1.Namespace{}.OpenAPIModelName(), corev1.NamespaceList{}.OpenAPIModelName(),
		corev1.NamespaceSpec{}.OpenAPIModelName(), corev1.NamespaceStatus{}.OpenAPIModelName(), corev1.NamespaceCondition{}.OpenAPIModelName()
	nsDoc, specDoc, statusDoc, condDoc, listDoc := corev1.Namespace{}.SwaggerDoc(), corev1.NamespaceSpec{}.SwaggerDoc(), corev1.NamespaceStatus{}.SwaggerDoc(), corev1.NamespaceCondition{}.SwaggerDoc(), corev1.NamespaceList{}.SwaggerDoc()
	typeMeta := func(props map[string]spec.Schema) map[string]spec.Schema {
		props["apiVersion"] = str(metav1.TypeMeta{}.SwaggerDoc()["apiVersion"])
		props["kind"] = str(metav1.TypeMeta{}.SwaggerDoc()["kind"])
		return props
	}
	return map[string]common.OpenAPIDefinition{
		namespace: obj(nsDoc[""], typeMeta(map[string]spec.Schema{
			"metadata": refTo(nsDoc["metadata"], objectMeta),
			"spec":     refTo(nsDoc["spec"], nsSpec),
			"status":   refTo(nsDoc["status"], nsStatus),
		}), objectMeta, nsSpec, nsStatus),
		list: func() common.OpenAPIDefinition {
			d := obj(listDoc[""], typeMeta(map[string]spec.Schema{
				"metadata": refTo(listDoc["metadata"], listMeta),
				"items":    atomicList(listDoc["items"], refTo("", namespace), nil),
			}), listMeta, namespace)
			d.Schema.Required = []string{"items"}
			return d
		}(),
		nsSpec: obj(specDoc[""], map[string]spec.Schema{
			"finalizers": atomicList(specDoc["finalizers"], str(""), spec.Extensions{"x-kubernetes-list-type": "atomic"}),
		}),
		nsStatus: obj(statusDoc[""], map[string]spec.Schema{
			"phase": str(statusDoc["phase"]),
			"conditions": atomicList(statusDoc["conditions"], refTo("", condition), spec.Extensions{
				"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
				"x-kubernetes-patch-merge-key": "type", "x-kubernetes-patch-strategy": "merge"}),
		}, condition),
		condition: func() common.OpenAPIDefinition {
			d := obj(condDoc[""], map[string]spec.Schema{
				"type":               str(condDoc["type"]),
				"status":             str(condDoc["status"]),
				"lastTransitionTime": refTo(condDoc["lastTransitionTime"], metaTime),
				"reason":             str(condDoc["reason"]),
				"message":            str(condDoc["message"]),
			}, metaTime)
			d.Schema.Required = []string{"type", "status"}
			return d
		}(),
	}
}

// withNamespaceDefinitions adds the namespace types to definitions.
func withNamespaceDefinitions(definitions common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions {
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		defs := definitions(ref)
		for k, v := range namespaceDefinitions(ref) {
			defs[k] = v
		}
		return defs
	}
}
