package server

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	clientdiscovery "k8s.io/client-go/discovery"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// twoVersionWidgets is the widget group served in v1 and v2, Widget stored
// in storage, with a status subresource.
func twoVersionWidgets(storage string) *builders.APIGroup {
	g := widgetGroup()
	group := g.Name
	g.Versions, g.StorageVersion = []string{"v2", "v1"}, storage
	g.AddToScheme = func(s *runtime.Scheme) error {
		for _, v := range []string{"v1", "v2", runtime.APIVersionInternal} {
			gv := schema.GroupVersion{Group: group, Version: v}
			s.AddKnownTypeWithName(gv.WithKind("Widget"), &corev1.ConfigMap{})
			s.AddKnownTypeWithName(gv.WithKind("WidgetList"), &corev1.ConfigMapList{})
			if v != runtime.APIVersionInternal {
				metav1.AddToGroupVersion(s, gv)
			}
		}
		return nil
	}
	r := g.Resources[0]
	r.Versions, r.StorageVersion, r.StatusSubresource = []string{"v2", "v1"}, storage, true
	return g
}

// TestDiscoveryStorageVersionHash: /apis/<group>/<version> gives each
// resource the storageVersionHash kube-apiserver gives its own (what the
// storage version migrator and clients watch for a storage version change):
// the hash of the storage version's group/version/kind, the same in every
// version of the kind, none on subresources (as kube-apiserver), and a new
// one when the storage version moves.
func TestDiscoveryStorageVersionHash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts an apiserver")
	}
	dir := t.TempDir()
	served := map[string]string{}
	for _, storage := range []string{"v1", "v2"} {
		cfg, stop := startStandaloneWith(t, dir, twoVersionWidgets(storage))
		client, err := clientdiscovery.NewDiscoveryClientForConfig(cfg)
		if err != nil {
			stop()
			t.Fatal(err)
		}
		want := discovery.StorageVersionHash("test.example.com", storage, "Widget")
		for _, v := range []string{"v1", "v2"} {
			list, err := client.ServerResourcesForGroupVersion("test.example.com/" + v)
			if err != nil {
				stop()
				t.Fatal(err)
			}
			hashes := map[string]string{}
			for _, r := range list.APIResources {
				hashes[r.Name] = r.StorageVersionHash
			}
			served[storage] = hashes["widgets"]
			if hashes["widgets"] == "" || hashes["widgets"] != want {
				t.Errorf("Widget stored in %s, discovery of %s: widgets storageVersionHash %q, want %q", storage, v, hashes["widgets"], want)
			}
			if h, ok := hashes["widgets/status"]; !ok || h != "" {
				t.Errorf("Widget stored in %s, discovery of %s: widgets/status listed %v with storageVersionHash %q, want listed without", storage, v, ok, h)
			}
		}
		stop()
	}
	// What the server published, not what the test computed.
	if served["v1"] == served["v2"] {
		t.Errorf("the storageVersionHash served did not change with the storage version: %q", served["v1"])
	}
}
