// Package conformance runs the upstream REST storage tests
// (k8s.io/apiserver/pkg/registry/rest/resttest, through its generic registry
// wrapper) against a generated resource's storage on an embedded etcd
// (Run), the fuzzed round trip of a group's kinds through every version and
// encoding (RoundTrip), and the check that today's code reads what recorded
// releases wrote (Compatibility). apiserver-boot generates the tests calling
// them.
package conformance

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"
	etcd3testing "k8s.io/apiserver/pkg/storage/etcd3/testing"
	"k8s.io/apiserver/pkg/storage/storagebackend"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/apigroup"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/server"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// Valid returns a valid object of the resource in namespace (empty for
// cluster-scoped kinds), named "foo" as the upstream tests expect. nil means
// an otherwise empty object: enough until markers or hooks require fields.
type Valid func(namespace string) runtime.Object

// Run tests create, update, delete, get, list and watch of the resource
// plural in group. Each step gets a fresh store under its own key prefix, on
// one embedded etcd, because the upstream tests do not clean up after themselves.
func Run(t *testing.T, groups []*builders.APIGroup, group, plural string, valid Valid) {
	g, r := find(t, groups, group, plural)
	scheme, err := server.NewScheme(groups)
	if err != nil {
		t.Fatal(err)
	}
	codecs := serializer.NewCodecFactory(scheme)
	_, config := etcd3testing.NewUnsecuredEtcd3TestClientServer(t)
	config.Codec = storage.Codec(codecs, apigroup.StorageVersion(g, r))

	newObject := func(ns string) runtime.Object {
		if valid != nil {
			return valid(ns)
		}
		obj := r.New()
		m := obj.(metav1.Object)
		m.SetName("foo")
		m.SetNamespace(ns)
		return obj
	}
	steps := []struct {
		name string
		run  func(*genericregistrytest.Tester)
	}{
		{"Create", func(tt *genericregistrytest.Tester) { tt.TestCreate(newObject(tt.TestNamespace())) }},
		{"Update", func(tt *genericregistrytest.Tester) {
			tt.TestUpdate(newObject(tt.TestNamespace()), func(obj runtime.Object) runtime.Object {
				obj.(metav1.Object).SetLabels(map[string]string{"conformance": "updated"})
				return obj
			})
		}},
		{"Delete", func(tt *genericregistrytest.Tester) { tt.TestDelete(newObject(tt.TestNamespace())) }},
		{"Get", func(tt *genericregistrytest.Tester) { tt.TestGet(newObject(tt.TestNamespace())) }},
		{"List", func(tt *genericregistrytest.Tester) { tt.TestList(newObject(tt.TestNamespace())) }},
		{"Watch", func(tt *genericregistrytest.Tester) {
			tt.TestWatch(newObject(tt.TestNamespace()),
				[]labels.Set{}, []labels.Set{{"conformance": "other"}},
				[]fields.Set{{"metadata.name": "foo"}}, []fields.Set{{"metadata.name": "bar"}})
		}},
	}
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			store := newStore(t, r, g.Name, scheme, config, fmt.Sprintf("/conformance-%d", i))
			tt := genericregistrytest.New(t, store)
			if !r.Namespaced {
				tt = tt.ClusterScope()
			}
			step.run(tt)
		})
	}
}

func find(t *testing.T, groups []*builders.APIGroup, group, plural string) (*builders.APIGroup, *builders.Resource) {
	t.Helper()
	for _, g := range groups {
		for _, r := range g.Resources {
			if g.Name == group && r.Plural == plural {
				return g, r
			}
		}
	}
	t.Fatalf("no resource %s in group %s", plural, group)
	return nil, nil
}

func newStore(t *testing.T, r *builders.Resource, group string, scheme *runtime.Scheme, config *storagebackend.Config, prefix string) *genericregistry.Store {
	t.Helper()
	c := *config
	c.Prefix = prefix
	gr := schema.GroupResource{Group: group, Resource: r.Plural}
	store, err := server.NewStore(r, group, scheme, generic.RESTOptions{
		StorageConfig:           c.ForResource(gr),
		Decorator:               generic.UndecoratedStorage,
		DeleteCollectionWorkers: 1,
		ResourcePrefix:          gr.Group + "/" + gr.Resource,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.DestroyFunc)
	return store
}
