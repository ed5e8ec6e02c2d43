// Package controllers is the controller runtime of generated projects: a
// level-based loop that feeds object keys from a shared informer into a
// rate-limited work queue, looks each object up from its lister and calls
// the user's Reconcile with it.
package controllers

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// Informers is what a project's generated sharedinformers.SharedInformers
// gives the controller-manager: informers shared by every controller.
type Informers interface {
	// Start starts the informers requested so far, until ctx is done.
	Start(ctx context.Context)
	// WaitForCacheSync waits until every started informer has synced; false
	// when ctx is done first.
	WaitForCacheSync(ctx context.Context) bool
}

// NewInformers creates a project's Informers, resyncing every resync
// (generated: sharedinformers.NewInformers).
type NewInformers func(config *rest.Config, resync time.Duration) (Informers, error)

// Reconciler is what a scaffolded <Kind>ControllerImpl implements; S is the
// project's *sharedinformers.SharedInformers.
type Reconciler[T runtime.Object, S any] interface {
	// Init is called once, before any Reconcile, to set up clients and extra watches.
	Init(config *rest.Config, si S, queue workqueue.TypedRateLimitingInterface[string])
	// Reconcile drives the world towards the object's current spec. An error requeues the key with back-off.
	Reconcile(obj T) error
}

// Watch returns, from the shared informers, the informer of a controller's
// objects and how to get one from its lister by namespace and name.
type Watch[T runtime.Object, S any] func(si S) (cache.SharedIndexInformer, func(namespace, name string) (T, error))

// Controller is a controller the controller-manager runs; New makes one.
type Controller interface {
	// Name names the controller in logs and in its
	// --concurrent-<name>-syncs flag.
	Name() string
	// Init is called once, before Run, with the shared informers.
	Init(config *rest.Config, si Informers) error
	// Run reconciles with workers goroutines until ctx is done.
	Run(ctx context.Context, workers int)
}

// Option configures a controller made by New.
type Option func(*options)

type options struct {
	resource *watched
}

// watched is the kind a controller reconciles and the resource serving it.
type watched struct {
	schema.GroupVersionResource
	Kind string
}

// String is "apps/v1 Deployment" ("v1 Pod" for the core group).
func (r watched) String() string {
	return r.GroupVersion().String() + " " + r.Kind
}

// Watches records the kind a controller reconciles, served as resource gvr:
// the controller-manager checks at start that the apiserver serves it
// (generated wiring sets it).
func Watches(gvr schema.GroupVersionResource, kind string) Option {
	return func(o *options) { o.resource = &watched{GroupVersionResource: gvr, Kind: kind} }
}

// watchesKind is implemented by controllers that say what they reconcile.
type watchesKind interface {
	Watches() (watched, bool)
}

// New returns the controller named name, reconciling the objects watch selects.
func New[T runtime.Object, S Informers](name string, impl Reconciler[T, S], watch Watch[T, S], opts ...Option) Controller {
	c := &controller[T, S]{name: name, impl: impl, watch: watch}
	for _, o := range opts {
		o(&c.options)
	}
	return c
}

type controller[T runtime.Object, S Informers] struct {
	options
	name     string
	impl     Reconciler[T, S]
	watch    Watch[T, S]
	get      func(namespace, name string) (T, error)
	queue    workqueue.TypedRateLimitingInterface[string]
	informer cache.SharedIndexInformer
}

func (c *controller[T, S]) Name() string { return c.name }

func (c *controller[T, S]) Watches() (watched, bool) {
	if c.resource == nil {
		return watched{}, false
	}
	return *c.resource, true
}

func (c *controller[T, S]) Init(config *rest.Config, informers Informers) error {
	si, ok := informers.(S)
	if !ok {
		return fmt.Errorf("controller %s: informers are %T, want %T", c.name, informers, si)
	}
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: c.name})
	c.informer, c.get = c.watch(si)
	enqueue := func(obj any) {
		key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
		if err != nil {
			utilruntime.HandleError(err)
			return
		}
		c.queue.Add(key)
	}
	if _, err := c.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: enqueue,
	}); err != nil {
		return err
	}
	c.impl.Init(config, si, c.queue)
	return nil
}

func (c *controller[T, S]) Run(ctx context.Context, workers int) {
	defer c.queue.ShutDown()
	klog.InfoS("Starting controller", "controller", c.name, "workers", workers)
	if !cache.WaitForCacheSync(ctx.Done(), c.informer.HasSynced) {
		return
	}
	for i := 0; i < workers; i++ {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNext() {
			}
		}, time.Second)
	}
	<-ctx.Done()
	klog.InfoS("Stopping controller", "controller", c.name)
}

func (c *controller[T, S]) processNext() bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)
	if err := c.reconcile(key); err != nil {
		utilruntime.HandleError(fmt.Errorf("%s: reconciling %q: %w", c.name, key, err))
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// reconcile looks the object up from the lister: reconciling is level
// based, so only the current state matters and deleted objects are skipped.
func (c *controller[T, S]) reconcile(key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil // not ours to retry
	}
	obj, err := c.get(namespace, name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	return c.impl.Reconcile(obj)
}
