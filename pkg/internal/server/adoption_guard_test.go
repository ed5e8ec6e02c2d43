package server

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
	pkgadoption "github.com/apiserver-boot/apiserver-boot/pkg/internal/adoption"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// TestAdoptionResourceVersionGuard: a LIST or WATCH at a resourceVersion
// above the store's revision (a CRD's, far ahead of the project's own
// store) or below the floor that Seal set answers 410 Gone, and an
// informer that synced against the CRD relists instead of waiting in
// silence; resourceVersions of the store keep working. With etcd and with
// kine on SQLite, with the watch cache and without.
func TestAdoptionResourceVersionGuard(t *testing.T) {
	backends := map[string]func(o *Options, dir string){
		"etcd, watch cache":           func(*Options, string) {},
		"etcd, no watch cache":        func(o *Options, _ string) { o.Etcd.EnableWatchCache = false },
		"kine on SQLite, watch cache": func(o *Options, dir string) { o.SQL.Endpoint = "sqlite://" + filepath.Join(dir, "state.db") },
		"kine on SQLite, no watch cache": func(o *Options, dir string) {
			o.SQL.Endpoint, o.Etcd.EnableWatchCache = "sqlite://"+filepath.Join(dir, "state.db"), false
		},
	}
	for name, tune := range backends {
		t.Run(name, func(t *testing.T) {
			env := startAdoption(t, tune)
			testGuard(t, env)
		})
	}
}

func testGuard(t *testing.T, env *adoptEnv) {
	ctx := context.Background()
	widgets := dynamicFor(t, env.admin).Resource(adoptWidgets).Namespace("default")
	create := func(name string) {
		t.Helper()
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": adoptGroupName + "/v1", "kind": "Widget", "metadata": map[string]any{"name": name}}}
		if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("w1")
	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rv := list.GetResourceVersion()
	far := strconv.FormatInt(atoi(t, rv)+99999, 10)
	gone(t, "a watch above the store's revision", watchErr(widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: far})))
	gone(t, "a list above the store's revision", listErr(widgets.List(ctx, metav1.ListOptions{ResourceVersion: far, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})))
	gone(t, "an exact list above the store's revision", listErr(widgets.List(ctx, metav1.ListOptions{ResourceVersion: far, ResourceVersionMatch: metav1.ResourceVersionMatchExact})))
	informerRelists(t, widgets, far, "w1")
	ok(t, "a watch at the store's revision", watchErr(widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})))

	// Sealed after another write: rv is below the floor.
	create("w2")
	floor := mustBatch(t, raw(t, env.admin), adoptWidgets, adoption.Batch{Seal: true}).Floor
	if atoi(t, floor) <= atoi(t, rv) {
		t.Fatalf("floor %s, want above %s", floor, rv)
	}
	gone(t, "a watch below the floor", watchErr(widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: rv})))
	gone(t, "a list below the floor", listErr(widgets.List(ctx, metav1.ListOptions{ResourceVersion: rv, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})))
	ok(t, "a watch at the floor", watchErr(widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: floor})))
	ok(t, "a list at the floor", listErr(widgets.List(ctx, metav1.ListOptions{ResourceVersion: floor, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})))
	ok(t, "a list from the watch cache", listErr(widgets.List(ctx, metav1.ListOptions{ResourceVersion: "0"})))

	// A floor above the store's revision is another store's (a copy or a
	// restored backup carried the key): ignored, or every client would
	// relist forever.
	tr := env.o.Etcd.StorageConfig.Transport
	client, err := storage.NewClient(storage.Etcd{Servers: tr.ServerList, CAFile: tr.TrustedCAFile, CertFile: tr.CertFile, KeyFile: tr.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	gr := schema.GroupResource{Group: adoptGroupName, Resource: "widgets"}
	if err := pkgadoption.NewFloors(client, env.o.Etcd.StorageConfig.Prefix).Set(ctx, gr, uint64(atoi(t, floor))+99999); err != nil {
		t.Fatal(err)
	}
	ok(t, "a watch at the floor under a floor from another store", watchErr(widgets.Watch(ctx, metav1.ListOptions{ResourceVersion: floor})))
}

func watchErr(w watch.Interface, err error) error {
	if w != nil {
		w.Stop()
	}
	return err
}

func listErr(_ *unstructured.UnstructuredList, err error) error { return err }

func gone(t *testing.T, what string, err error) {
	t.Helper()
	if !apierrors.IsResourceExpired(err) || !strings.Contains(err.Error(), "is not one of this store's (") {
		t.Errorf("%s: %v, want 410 Gone (Expired) saying the resourceVersion is not the store's", what, err)
	}
}

func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

// crdEraListWatch lists first what the CRD served: no object, at
// resourceVersion rv (the CRD's); then the project's apiserver.
type crdEraListWatch struct {
	client dynamic.ResourceInterface
	rv     string
	lists  atomic.Int32
}

func (l *crdEraListWatch) List(opts metav1.ListOptions) (runtime.Object, error) {
	if l.lists.Add(1) == 1 {
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": adoptGroupName + "/v1", "kind": "WidgetList"}}
		list.SetResourceVersion(l.rv)
		return list, nil
	}
	return l.client.List(context.Background(), opts)
}

func (l *crdEraListWatch) Watch(opts metav1.ListOptions) (watch.Interface, error) {
	return l.client.Watch(context.Background(), opts)
}

// IsWatchListSemanticsUnSupported: the informer lists, then watches from
// the list's resourceVersion (as one that synced against the CRD resumes).
func (l *crdEraListWatch) IsWatchListSemanticsUnSupported() bool { return true }

// informerRelists: an informer whose last resourceVersion is rv, from the
// CRD, gets name (stored in the project's apiserver) by relisting.
func informerRelists(t *testing.T, client dynamic.ResourceInterface, rv, name string) {
	t.Helper()
	lw := &crdEraListWatch{client: client, rv: rv}
	store, controller := cache.NewInformerWithOptions(cache.InformerOptions{ListerWatcher: lw, ObjectType: &unstructured.Unstructured{}, Handler: cache.ResourceEventHandlerFuncs{}})
	stop := make(chan struct{})
	defer close(stop)
	go controller.Run(stop)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, exists, _ := store.GetByKey("default/" + name); exists {
			if lw.lists.Load() < 2 {
				t.Errorf("the informer has %s without relisting", name)
			}
			return
		}
	}
	t.Errorf("an informer at the CRD's resourceVersion %s did not get %s in 20s (lists: %d): it never relisted", rv, name, lw.lists.Load())
}
