package server

import (
	"context"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"

	corev1 "k8s.io/api/core/v1"
	apiextensionsopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// widgetsGVR are a namespaced kind of a test group, with ConfigMap's Go type
// standing in for generated types.
var widgetsGVR = schema.GroupVersionResource{Group: "test.example.com", Version: "v1", Resource: "widgets"}

func widgetGroup() *builders.APIGroup {
	gv := widgetsGVR.GroupVersion()
	return &builders.APIGroup{
		Name: gv.Group, Versions: []string{"v1"}, StorageVersion: "v1",
		AddToScheme: func(s *runtime.Scheme) error {
			for _, v := range []schema.GroupVersion{gv, {Group: gv.Group, Version: runtime.APIVersionInternal}} {
				s.AddKnownTypeWithName(v.WithKind("Widget"), &corev1.ConfigMap{})
				s.AddKnownTypeWithName(v.WithKind("WidgetList"), &corev1.ConfigMapList{})
			}
			metav1.AddToGroupVersion(s, gv)
			return nil
		},
		Resources: []*builders.Resource{builders.NewResource[*corev1.ConfigMap](builders.Resource{
			Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true, Versions: []string{"v1"},
			New:     func() runtime.Object { return &corev1.ConfigMap{} },
			NewList: func() runtime.Object { return &corev1.ConfigMapList{} },
		}, nil)},
	}
}

// widgetDefinitions are k8s.io/apimachinery's definitions (as a project's
// openapi-gen writes them) and the test kind's.
func widgetDefinitions(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
	defs := map[string]common.OpenAPIDefinition{}
	for name, d := range apiextensionsopenapi.GetOpenAPIDefinitions(ref) {
		if strings.HasPrefix(name, "io.k8s.apimachinery.") {
			defs[name] = d
		}
	}
	str := spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"string"}}}
	defs[corev1.ConfigMap{}.OpenAPIModelName()] = common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(metav1.ObjectMeta{}.OpenAPIModelName())}},
		"data":     {SchemaProps: spec.SchemaProps{Type: []string{"object"}, AdditionalProperties: &spec.SchemaOrBool{Allows: true, Schema: &str}}},
	}}}, Dependencies: []string{metav1.ObjectMeta{}.OpenAPIModelName()}}
	defs[corev1.ConfigMapList{}.OpenAPIModelName()] = common.OpenAPIDefinition{Schema: spec.Schema{SchemaProps: spec.SchemaProps{Type: []string{"object"}, Properties: map[string]spec.Schema{
		"apiVersion": str, "kind": str,
		"metadata": {SchemaProps: spec.SchemaProps{Default: map[string]any{}, Ref: ref(metav1.ListMeta{}.OpenAPIModelName())}},
		"items":    {SchemaProps: spec.SchemaProps{Type: []string{"array"}, Items: &spec.SchemaOrArray{Schema: &spec.Schema{SchemaProps: spec.SchemaProps{Ref: ref(corev1.ConfigMap{}.OpenAPIModelName())}}}}},
	}}}, Dependencies: []string{metav1.ListMeta{}.OpenAPIModelName(), corev1.ConfigMap{}.OpenAPIModelName()}}
	return defs
}

// startStandalone runs a standalone server of the widget group on an
// embedded etcd and returns a config for it.
func startStandalone(t *testing.T) *rest.Config {
	t.Helper()
	cfg, stop := startStandaloneIn(t, t.TempDir())
	t.Cleanup(stop)
	return cfg
}

// startStandaloneIn is startStandalone with its data (etcd, certificates)
// in dir; stop stops the server and waits until it has.
func startStandaloneIn(t *testing.T, dir string) (cfg *rest.Config, stop func()) {
	t.Helper()
	return startStandaloneWith(t, dir, widgetGroup())
}

// startStandaloneWith is startStandaloneIn serving groups.
func startStandaloneWith(t *testing.T, dir string, groups ...*builders.APIGroup) (cfg *rest.Config, stop func()) {
	t.Helper()
	o := standaloneOptions(t, dir)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = Run(ctx, Project{Name: "widgets", Groups: groups, OpenAPIDefinitions: widgetDefinitions}, o)
	}()
	stop = func() {
		cancel()
		select {
		case <-done:
		case <-time.After(time.Minute):
			t.Error("the server did not stop within a minute")
		}
	}
	defer func() {
		if cfg == nil {
			stop()
		}
	}()
	cfg = waitServing(t, o.WriteKubeconfig, done, func() error { return runErr })
	return cfg, stop
}

// standaloneOptions are a standalone server's on a free loopback port, with
// its certificates, embedded etcd, token and kubeconfig in dir.
func standaloneOptions(t *testing.T, dir string) *Options {
	t.Helper()
	port, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	o := NewOptions()
	o.SecureServing.BindPort = port
	o.SecureServing.ServerCert.CertDirectory = filepath.Join(dir, "certs")
	o.EmbeddedEtcd.DataDir = filepath.Join(dir, "etcd")
	o.TokenFile = filepath.Join(dir, "token")
	o.WriteKubeconfig = filepath.Join(dir, "kubeconfig")
	return o
}

// waitServing waits until the server that writes kubeconfig answers
// /readyz with 200, and returns its client configuration; it fails the test
// when done closes first (the server stopped, runErr says why) or after 2
// minutes.
func waitServing(t *testing.T, kubeconfig string, done <-chan struct{}, runErr func() error) *rest.Config {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case <-done:
			t.Fatalf("the server stopped: %v", runErr())
		default:
		}
		cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
		if err != nil {
			continue
		}
		client, err := rest.HTTPClientFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if resp, err := client.Get(cfg.Host + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return cfg
			}
		}
	}
	t.Fatal("the server was not ready within 2 minutes")
	return nil
}

func nsWidget(name string, finalizers ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "test.example.com/v1", "kind": "Widget", "metadata": map[string]any{"name": name}}}
	u.SetFinalizers(finalizers)
	return u
}

// TestStandaloneNamespaces: a standalone server serves namespaces as a
// cluster does: the system namespaces exist, objects in a namespace that
// does not exist or is being deleted are refused with a cluster's errors,
// and deleting a namespace deletes the project's objects in it, then it.
func TestStandaloneNamespaces(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	cfg := startStandalone(t)
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)

	list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
		if ns.Status.Phase != corev1.NamespaceActive || !slices.Equal(ns.Spec.Finalizers, []corev1.FinalizerName{"kubernetes"}) || ns.Labels[corev1.LabelMetadataName] != ns.Name {
			t.Errorf("namespace %s: phase %q, finalizers %v, labels %v", ns.Name, ns.Status.Phase, ns.Spec.Finalizers, ns.Labels)
		}
	}
	if want := []string{"default", "kube-public", "kube-system"}; !slices.Equal(names, want) {
		t.Errorf("namespaces at start: %v, want %v", names, want)
	}

	_, err = dyn.Resource(widgetsGVR).Namespace("nope").Create(ctx, nsWidget("w"), metav1.CreateOptions{})
	if !apierrors.IsNotFound(err) || err.Error() != `namespaces "nope" not found` {
		t.Fatalf("create in a namespace that does not exist: %v, want NotFound %q", err, `namespaces "nope" not found`)
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a namespace name that is not a DNS label: %v, want Invalid", err)
	}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*unstructured.Unstructured{nsWidget("plain"), nsWidget("held", "test.example.com/hold")} {
		if _, err := dyn.Resource(widgetsGVR).Namespace("team").Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s in a namespace just created: %v", w.GetName(), err)
		}
	}

	if err := kube.CoreV1().Namespaces().Delete(ctx, "default", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "this namespace may not be deleted") {
		t.Errorf("delete default: %v, want Forbidden", err)
	}
	if err := kube.CoreV1().Namespaces().Delete(ctx, "team", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	ns, err := kube.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{})
	if err != nil || ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Fatalf("after delete: %v %+v, want Terminating", err, ns)
	}
	_, err = dyn.Resource(widgetsGVR).Namespace("team").Create(ctx, nsWidget("late"), metav1.CreateOptions{})
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "unable to create new content in namespace team because it is being terminated") {
		t.Errorf("create in a terminating namespace: %v, want Forbidden", err)
	}
	// Content without finalizers goes; the held widget is marked deleted
	// and holds the namespace until its finalizer is removed.
	if !waitFor(30*time.Second, func() bool {
		_, err := dyn.Resource(widgetsGVR).Namespace("team").Get(ctx, "plain", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}) {
		t.Fatal("the namespace's content was not deleted")
	}
	held, err := dyn.Resource(widgetsGVR).Namespace("team").Get(ctx, "held", metav1.GetOptions{})
	if err != nil || held.GetDeletionTimestamp() == nil {
		t.Fatalf("held widget: %v, deleted at %v", err, held.GetDeletionTimestamp())
	}
	if _, err := kube.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{}); err != nil {
		t.Fatalf("the namespace went while it still holds an object: %v", err)
	}
	held.SetFinalizers(nil)
	if _, err := dyn.Resource(widgetsGVR).Namespace("team").Update(ctx, held, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if !waitFor(30*time.Second, func() bool {
		_, err := kube.CoreV1().Namespaces().Get(ctx, "team", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	}) {
		t.Fatal("the namespace was not deleted once empty")
	}
	// The same name can be used again.
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Discovery lists namespaces in the core group, for kubectl.
	resources, err := kube.Discovery().ServerResourcesForGroupVersion("v1")
	if err != nil {
		t.Fatal(err)
	}
	if len(resources.APIResources) != 1 || resources.APIResources[0].Name != "namespaces" || !slices.Equal(resources.APIResources[0].ShortNames, []string{"ns"}) {
		t.Errorf("discovery of v1: %+v", resources.APIResources)
	}
	// The OpenAPI describes them (kubectl explain, server-side apply).
	doc, err := kube.CoreV1().RESTClient().Get().AbsPath("/openapi/v3/api/v1").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"io.k8s.api.core.v1.Namespace"`, `"io.k8s.api.core.v1.NamespaceSpec"`, "Finalizers is an opaque list of values"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("/openapi/v3/api/v1 lacks %s", want)
		}
	}
}

func waitFor(timeout time.Duration, f func() bool) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return f()
}

// TestNamespacesOfStoredObjects: objects stored by a build that served no
// namespaces (here: their namespaces' keys removed from etcd) are in
// namespaces that exist after the first start that serves them, and new
// objects can be created beside them; later starts create none again.
func TestNamespacesOfStoredObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a server")
	}
	dir := t.TempDir()
	ctx := context.Background()
	cfg, stop := startStandaloneIn(t, dir)
	kube := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	for _, ns := range []string{"team-a", "team-b"} {
		if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(widgetsGVR).Namespace(ns).Create(ctx, nsWidget("w"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	stop()

	// What an earlier build left: the objects, no namespaces.
	etcd, stopEtcd, err := storage.Open(ctx, storage.Backend{Embedded: &storage.EmbeddedEtcd{DataDir: filepath.Join(dir, "etcd")}, EmbeddedCertDir: filepath.Join(dir, "etcd-certs")})
	if err != nil {
		t.Fatal(err)
	}
	tlsConfig, err := transport.TLSInfo{CertFile: etcd.CertFile, KeyFile: etcd.KeyFile, TrustedCAFile: etcd.CAFile}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: etcd.Servers, TLS: tlsConfig, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Delete(ctx, "/registry/namespaces/", clientv3.WithPrefix())
	if err != nil || resp.Deleted != 5 {
		t.Fatalf("removing the namespaces from etcd: %v, %d removed, want 5", err, resp.Deleted)
	}
	cli.Close()
	stopEtcd()

	cfg, stop = startStandaloneIn(t, dir)
	defer stop()
	kube = kubernetes.NewForConfigOrDie(cfg)
	dyn = dynamic.NewForConfigOrDie(cfg)
	list, err := kube.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range list.Items {
		names = append(names, ns.Name)
	}
	if want := []string{"default", "kube-public", "kube-system", "team-a", "team-b"}; !slices.Equal(names, want) {
		t.Fatalf("namespaces after the first start that serves them: %v, want %v", names, want)
	}
	if _, err := dyn.Resource(widgetsGVR).Namespace("team-a").Create(ctx, nsWidget("beside"), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create beside a stored object: %v", err)
	}
}
