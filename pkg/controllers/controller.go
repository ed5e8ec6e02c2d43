// Package controllers is the controller runtime of generated projects: a
// level-based loop that feeds object keys from an informer into a rate-limited
// work queue and calls the user's Reconcile with the current object.
package controllers

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
)

// SharedInformers hands informers to controllers; informers for the same
// resource are shared by every controller of the process.
type SharedInformers struct {
	Dynamic dynamicinformer.DynamicSharedInformerFactory
}

// NewSharedInformers returns informers for the server behind config.
func NewSharedInformers(config *rest.Config, resync time.Duration) (*SharedInformers, error) {
	client, err := dynamic.NewForConfig(config)
	if err != nil {
		return nil, err
	}
	return &SharedInformers{Dynamic: dynamicinformer.NewDynamicSharedInformerFactory(client, resync)}, nil
}

// Start starts every informer requested so far.
func (si *SharedInformers) Start(ctx context.Context) { si.Dynamic.Start(ctx.Done()) }

// Reconciler is what a scaffolded <Kind>ControllerImpl implements.
type Reconciler[T runtime.Object] interface {
	// Init is called once, before any Reconcile, to set up clients and extra watches.
	Init(config *rest.Config, si *SharedInformers, queue workqueue.TypedRateLimitingInterface[string])
	// Reconcile drives the world towards the object's current spec. An error requeues the key with back-off.
	Reconcile(obj T) error
}

// Controller is a controller the controller-manager runs.
type Controller interface {
	Name() string
	Init(config *rest.Config, si *SharedInformers) error
	Run(ctx context.Context, workers int)
}

// New returns the controller for objects of resource gvr, decoded into T.
func New[T runtime.Object](name string, gvr schema.GroupVersionResource, impl Reconciler[T], newObj func() T) Controller {
	return &controller[T]{name: name, gvr: gvr, impl: impl, newObj: newObj}
}

type controller[T runtime.Object] struct {
	name     string
	gvr      schema.GroupVersionResource
	impl     Reconciler[T]
	newObj   func() T
	queue    workqueue.TypedRateLimitingInterface[string]
	informer cache.SharedIndexInformer
}

func (c *controller[T]) Name() string { return c.name }

func (c *controller[T]) Init(config *rest.Config, si *SharedInformers) error {
	c.queue = workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: c.name})
	c.informer = si.Dynamic.ForResource(c.gvr).Informer()
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

func (c *controller[T]) Run(ctx context.Context, workers int) {
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

func (c *controller[T]) processNext() bool {
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

// reconcile looks the object up from the informer's cache: reconciling is
// level based, so only the current state matters and deleted objects are skipped.
func (c *controller[T]) reconcile(key string) error {
	item, exists, err := c.informer.GetIndexer().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	u, ok := item.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected %T in the informer cache", item)
	}
	obj := c.newObj()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.UnstructuredContent(), obj); err != nil {
		return err
	}
	return c.impl.Reconcile(obj)
}
