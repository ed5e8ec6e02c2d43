package server

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// adoptedWidget is a widget as the CRD served it, in v1 (the project
// stores v2), with every field an adoption keeps.
func adoptedWidget(name, uid string) map[string]any {
	return map[string]any{
		"apiVersion": adoptGroupName + "/v1", "kind": "Widget",
		"metadata": map[string]any{
			"name": name, "namespace": "default", "uid": uid, "resourceVersion": "987654",
			"creationTimestamp": "2020-01-02T03:04:05Z", "generation": 7,
			"labels":      map[string]any{"app": "shop"},
			"annotations": map[string]any{"note": "from the CRD"},
			"finalizers":  []any{"example.com/keep"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
				"uid": "99999999-0000-0000-0000-000000000001", "controller": true, "blockOwnerDeletion": true}},
			"managedFields": []any{map[string]any{"manager": "crd-era-controller", "operation": "Update", "apiVersion": adoptGroupName + "/v1",
				"time": "2021-02-03T04:05:06Z", "fieldsType": "FieldsV1", "fieldsV1": map[string]any{"f:data": map[string]any{"f:size": map[string]any{}}}}},
		},
		"data": map[string]any{"size": "small"},
	}
}

func rawObjects(t *testing.T, objs ...map[string]any) []runtime.RawExtension {
	t.Helper()
	var out []runtime.RawExtension
	for _, o := range objs {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, runtime.RawExtension{Raw: b})
	}
	return out
}

// normalized is obj as a client reads it back (JSON numbers as int64),
// without its resourceVersion.
func normalized(t *testing.T, obj map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	unstructured.RemoveNestedField(u.Object, "metadata", "resourceVersion")
	return u.Object
}

func postBatch(ctx context.Context, c *rest.RESTClient, gvr schema.GroupVersionResource, b adoption.Batch) (*adoption.BatchResult, error) {
	body, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	data, err := rawOf(c.Post().AbsPath(adoption.Path(gvr.Group, gvr.Resource)).SetHeader("Content-Type", "application/json").Body(body).Do(ctx))
	if err != nil {
		return nil, err
	}
	var res adoption.BatchResult
	return &res, json.Unmarshal(data, &res)
}

// rawOf is a result's body, or the Status it answered as an error.
func rawOf(r rest.Result) ([]byte, error) {
	if err := r.Error(); err != nil {
		return nil, err
	}
	return r.Raw()
}

func mustBatch(t *testing.T, c *rest.RESTClient, gvr schema.GroupVersionResource, b adoption.Batch) *adoption.BatchResult {
	t.Helper()
	res, err := postBatch(context.Background(), c, gvr, b)
	if err != nil {
		t.Fatalf("POST %s: %v", adoption.Path(gvr.Group, gvr.Resource), err)
	}
	if len(res.Results) != len(b.Objects) {
		t.Fatalf("%d results for %d objects", len(res.Results), len(b.Objects))
	}
	return res
}

func getState(ctx context.Context, c *rest.RESTClient, gvr schema.GroupVersionResource) (*adoption.State, error) {
	data, err := rawOf(c.Get().AbsPath(adoption.Path(gvr.Group, gvr.Resource)).Do(ctx))
	if err != nil {
		return nil, err
	}
	var s adoption.State
	return &s, json.Unmarshal(data, &s)
}

// storedVersion is the apiVersion of the bytes of key in the backend.
func storedVersion(t *testing.T, o *Options, key string) string {
	t.Helper()
	tr := o.Etcd.StorageConfig.Transport
	client, err := storage.NewClient(storage.Etcd{Servers: tr.ServerList, CAFile: tr.TrustedCAFile, CertFile: tr.CertFile, KeyFile: tr.KeyFile})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	resp, err := client.Get(context.Background(), o.Etcd.StorageConfig.Prefix+key, clientv3.WithLimit(1))
	if err != nil || len(resp.Kvs) == 0 {
		t.Fatalf("reading %s from the backend: %v (%d keys)", key, err, len(resp.Kvs))
	}
	value := resp.Kvs[0].Value
	if pb, ok := bytes.CutPrefix(value, []byte("k8s\x00")); ok {
		var u runtime.Unknown
		if err := u.Unmarshal(pb); err != nil {
			t.Fatal(err)
		}
		return u.APIVersion
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(value, &tm); err != nil {
		t.Fatal(err)
	}
	return tm.APIVersion
}

// TestAdoptionStoreWithIdentity: a Batch stores objects with every field
// an adoption keeps (read back through the ordinary GET, only the
// resourceVersion differs), in the storage version when sent in another;
// a second store replaces the copy unconditionally, Remove removes it,
// State lists what is stored, and Seal sets the floor.
func TestAdoptionStoreWithIdentity(t *testing.T) {
	env := startAdoption(t, nil)
	ctx := context.Background()
	admin, widgets := raw(t, env.admin), dynamicFor(t, env.admin).Resource(adoptWidgets).Namespace("default")

	sent := adoptedWidget("a", "11111111-1111-1111-1111-111111111111")
	res := mustBatch(t, admin, adoptWidgets, adoption.Batch{Objects: rawObjects(t, sent)})
	if r := res.Results[0]; r.Error != nil || r.ResourceVersion == "" || r.Name != "a" || r.Namespace != "default" {
		t.Fatalf("storing a: %+v", r)
	}
	got, err := widgets.Get(ctx, "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetResourceVersion() != res.Results[0].ResourceVersion {
		t.Errorf("resourceVersion %s, the Result said %s", got.GetResourceVersion(), res.Results[0].ResourceVersion)
	}
	if diff := cmp.Diff(normalized(t, sent), normalized(t, got.Object)); diff != "" {
		t.Errorf("a read back differs from what was sent (-sent +read):\n%s", diff)
	}
	if v := storedVersion(t, env.o, "/adopt.example.com/widgets/default/a"); v != adoptGroupName+"/v2" {
		t.Errorf("a sent in v1 is stored in %q, want the storage version %s/v2", v, adoptGroupName)
	}

	// A second store replaces whatever is there, whatever its uid.
	again := adoptedWidget("a", "22222222-2222-2222-2222-222222222222")
	again["metadata"].(map[string]any)["labels"] = map[string]any{"round": "2"}
	mustBatch(t, admin, adoptWidgets, adoption.Batch{Objects: rawObjects(t, again)})
	if got, err = widgets.Get(ctx, "a", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(normalized(t, again), normalized(t, got.Object)); diff != "" {
		t.Errorf("a stored again differs from what was sent (-sent +read):\n%s", diff)
	}
	state, err := getState(ctx, admin, adoptWidgets)
	if err != nil {
		t.Fatal(err)
	}
	want := []adoption.Key{{Namespace: "default", Name: "a", UID: "22222222-2222-2222-2222-222222222222"}}
	if diff := cmp.Diff(want, state.Objects); diff != "" || state.ResourceVersion == "" || state.Floor != "" || state.KindName != "Widget" ||
		state.StorageVersion != "v2" || !state.Namespaced || strings.Join(state.Versions, ",") != "v2,v1" {
		t.Errorf("State: %+v (objects -want +got: %s)", state, diff)
	}

	// A cluster-scoped kind keeps its status; objects of the wrong shape
	// are refused one by one, naming the field.
	gadget := map[string]any{"apiVersion": adoptGroupName + "/v1", "kind": "Gadget",
		"metadata": map[string]any{"name": "g", "uid": "33333333-3333-3333-3333-333333333333", "creationTimestamp": "2020-01-02T03:04:05Z", "generation": 2},
		"spec":     map[string]any{"replicas": 2}, "status": map[string]any{"replicas": 3, "observedGeneration": 2}}
	namespacedGadget := map[string]any{"apiVersion": adoptGroupName + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": "h", "namespace": "default", "uid": "4"}}
	noUID := map[string]any{"apiVersion": adoptGroupName + "/v2", "kind": "Gadget", "metadata": map[string]any{"name": "i"}}
	widget := adoptedWidget("w", "5")
	res = mustBatch(t, admin, adoptGadgets, adoption.Batch{Objects: rawObjects(t, gadget, namespacedGadget, noUID, widget)})
	if res.Results[0].Error != nil {
		t.Errorf("storing gadget g: %v", res.Results[0].Error)
	}
	for i, field := range map[int]string{1: "metadata.namespace", 2: "metadata.uid", 3: "kind"} {
		if e := res.Results[i].Error; e == nil || e.Details == nil || len(e.Details.Causes) == 0 || e.Details.Causes[0].Field != field {
			t.Errorf("object %d: %+v, want refused on %s", i, e, field)
		}
	}
	g, err := dynamicFor(t, env.admin).Resource(adoptGadgets).Get(ctx, "g", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(normalized(t, gadget), normalized(t, g.Object)); diff != "" {
		t.Errorf("g read back differs from what was sent (-sent +read):\n%s", diff)
	}

	// Remove: only the copy with the uid named; one gone is no error.
	if _, err := postBatch(ctx, admin, adoptWidgets, adoption.Batch{Remove: []adoption.Key{{Namespace: "default", Name: "a", UID: "11111111-1111-1111-1111-111111111111"}}}); !apierrors.IsConflict(err) {
		t.Errorf("removing a with its old uid: %v, want a conflict", err)
	}
	for range 2 {
		mustBatch(t, admin, adoptWidgets, adoption.Batch{Remove: want})
	}
	if _, err := widgets.Get(ctx, "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a after Remove: %v, want not found", err)
	}

	// Seal.
	before, err := getState(ctx, admin, adoptWidgets)
	if err != nil {
		t.Fatal(err)
	}
	res = mustBatch(t, admin, adoptWidgets, adoption.Batch{Seal: true})
	after, err := getState(ctx, admin, adoptWidgets)
	if err != nil {
		t.Fatal(err)
	}
	if res.Floor == "" || res.Floor != after.Floor || atoi(t, res.Floor) < atoi(t, before.ResourceVersion) {
		t.Errorf("Seal: floor %q (State then: %q), want at least the revision before, %s", res.Floor, after.Floor, before.ResourceVersion)
	}
}

// TestAdoptionPendingDeletion: an object stored with a pending deletion
// (deletionTimestamp, grace 0, a finalizer) is deleted by the store once an
// ordinary update removes its finalizer, as it would have been by the CRD.
func TestAdoptionPendingDeletion(t *testing.T) {
	env := startAdoption(t, nil)
	ctx := context.Background()
	widgets := dynamicFor(t, env.admin).Resource(adoptWidgets).Namespace("default")
	sent := adoptedWidget("p", "66666666-6666-6666-6666-666666666666")
	md := sent["metadata"].(map[string]any)
	md["deletionTimestamp"], md["deletionGracePeriodSeconds"] = "2021-01-01T00:00:00Z", 0
	if r := mustBatch(t, raw(t, env.admin), adoptWidgets, adoption.Batch{Objects: rawObjects(t, sent)}).Results[0]; r.Error != nil {
		t.Fatal(r.Error)
	}
	got, err := widgets.Get(ctx, "p", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(normalized(t, sent), normalized(t, got.Object)); diff != "" {
		t.Errorf("p read back differs from what was sent (-sent +read):\n%s", diff)
	}
	got.SetFinalizers(nil)
	if _, err := widgets.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := widgets.Get(ctx, "p", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("p after its last finalizer was removed: %v, want not found", err)
	}
}

// TestAdoptionValidate: Validate runs each object through the real create
// path as a dry run: what a hook or the schema refuses is refused with the
// field in the Status's causes, a valid object (with the identity fields a
// create would refuse) passes and is not stored; a Batch that validates
// may not remove or seal, and one of too many objects is refused whole.
func TestAdoptionValidate(t *testing.T) {
	env := startAdoption(t, nil)
	ctx := context.Background()
	admin := raw(t, env.admin)
	ok := adoptedWidget("ok", "77777777-7777-7777-7777-777777777777")
	huge := adoptedWidget("huge", "8")
	huge["data"] = map[string]any{"size": "huge"}
	long := adoptedWidget("long", "9")
	long["data"] = map[string]any{"note": "longer than eight"}
	v3 := adoptedWidget("v3", "10")
	v3["apiVersion"] = adoptGroupName + "/v3"
	// A field the project's types do not have would be dropped when stored:
	// the plan refuses it by name (strict field validation).
	unknown := adoptedWidget("unknown", "11")
	unknown["colour"] = "red"
	res := mustBatch(t, admin, adoptWidgets, adoption.Batch{Validate: true, Objects: rawObjects(t, ok, huge, long, v3, unknown)})
	if res.Results[0].Error != nil {
		t.Errorf("ok: %+v", res.Results[0].Error)
	}
	if e := res.Results[4].Error; e == nil || !strings.Contains(e.Message, `unknown field "colour"`) {
		t.Errorf("unknown field: %+v, want refused naming colour", e)
	}
	for i, field := range map[int]string{1: "data.size", 2: "data.note", 3: "apiVersion"} {
		e := res.Results[i].Error
		if e == nil || e.Details == nil || len(e.Details.Causes) == 0 || e.Details.Causes[0].Field != field {
			t.Errorf("%s: %+v, want refused on %s", res.Results[i].Name, e, field)
		}
	}
	if !strings.Contains(res.Results[1].Error.Message, "a widget may not be huge") {
		t.Errorf("huge: %q, want the hook's message", res.Results[1].Error.Message)
	}
	if _, err := dynamicFor(t, env.admin).Resource(adoptWidgets).Namespace("default").Get(ctx, "ok", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("ok after Validate: %v, want not stored", err)
	}
	if _, err := postBatch(ctx, admin, adoptWidgets, adoption.Batch{Validate: true, Seal: true}); !apierrors.IsBadRequest(err) {
		t.Errorf("Validate with Seal: %v, want 400", err)
	}
	many := make([]runtime.RawExtension, adoption.MaxBatch+1)
	for i := range many {
		many[i].Raw = []byte("{}")
	}
	if _, err := postBatch(ctx, admin, adoptWidgets, adoption.Batch{Objects: many}); !apierrors.IsRequestEntityTooLargeError(err) {
		t.Errorf("%d objects: %v, want 413", len(many), err)
	}
}

// TestAdoptionAuthorization: every request of the adoption API is
// authorized as the verb adopt on the resource it names: a user allowed
// everything else gets 403 naming the verb, the resource and the group; a
// resource the project does not serve is refused; discovery is not
// adoption; and an ordinary create that sets uid and creationTimestamp
// gets new ones.
func TestAdoptionAuthorization(t *testing.T) {
	env := startAdoption(t, nil)
	ctx := context.Background()
	alice, admin := raw(t, env.alice), raw(t, env.admin)
	path := adoption.Path(adoptGroupName, "widgets")
	body, _ := json.Marshal(adoption.Batch{Objects: rawObjects(t, adoptedWidget("x", "1"))})
	validate, _ := json.Marshal(adoption.Batch{Validate: true, Objects: rawObjects(t, adoptedWidget("x", "1"))})
	requests := map[string]*rest.Request{
		"GET State":       alice.Get().AbsPath(path),
		"POST a store":    alice.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(body),
		"POST a validate": alice.Post().AbsPath(path).SetHeader("Content-Type", "application/json").Body(validate),
		"GET below":       alice.Get().AbsPath(path, "x"),
	}
	for name, req := range requests {
		err := req.Do(ctx).Error()
		if !apierrors.IsForbidden(err) {
			t.Errorf("alice, %s: %v, want 403", name, err)
			continue
		}
		for _, s := range []string{`verb "adopt"`, `"widgets"`, `API group "adopt.example.com"`} {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("alice, %s: %q does not say %s", name, err, s)
			}
		}
	}
	if _, err := getState(ctx, raw(t, env.bob), adoptWidgets); err != nil {
		t.Errorf("bob, who may adopt widgets: %v", err)
	}
	if err := admin.Get().AbsPath(adoption.Path(adoptGroupName, "nothings")).Do(ctx).Error(); !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "nothings.adopt.example.com") {
		t.Errorf("a resource the project does not serve: %v, want 403 naming it", err)
	}
	var list metav1.APIResourceList
	if data, err := alice.Get().AbsPath("/apis", adoption.Group, adoption.Version).Do(ctx).Raw(); err != nil || json.Unmarshal(data, &list) != nil ||
		list.GroupVersion != adoption.Group+"/"+adoption.Version || len(list.APIResources) != 0 {
		t.Errorf("discovery of %s/%s: %v, %+v", adoption.Group, adoption.Version, err, list)
	}
	var group metav1.APIGroup
	if data, err := alice.Get().AbsPath("/apis", adoption.Group).Do(ctx).Raw(); err != nil || json.Unmarshal(data, &group) != nil || group.PreferredVersion.Version != adoption.Version {
		t.Errorf("discovery of %s: %v, %+v", adoption.Group, err, group)
	}

	// Nobody else writes identity.
	sent := &unstructured.Unstructured{Object: adoptedWidget("ordinary", "12121212-1212-1212-1212-121212121212")}
	sent.SetResourceVersion("")
	sent.SetManagedFields(nil)
	created, err := dynamicFor(t, env.alice).Resource(adoptWidgets).Namespace("default").Create(ctx, sent, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.GetUID() == sent.GetUID() || created.GetCreationTimestamp().Year() == 2020 {
		t.Errorf("an ordinary create kept uid %s and creationTimestamp %s", created.GetUID(), created.GetCreationTimestamp())
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if err := json.Unmarshal([]byte(s), &n); err != nil {
		t.Fatalf("%q is not a revision: %v", s, err)
	}
	return n
}
