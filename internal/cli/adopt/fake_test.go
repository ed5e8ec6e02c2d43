package adopt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	admv1 "k8s.io/api/admissionregistration/v1"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggfake "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset/fake"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

const (
	group    = "stable.example.com"
	plural   = "crontabs"
	resource = plural + "." + group
	testUser = "alice"
)

var (
	crontabs = schema.GroupVersionResource{Group: group, Version: "v1", Resource: plural}
	pauseMsg = PauseMessage([]string{resource})
)

// fakeCluster is kube-apiserver (client-go fakes) with a CRD of crontabs,
// and the project's apiserver (an httptest server answering the adoption
// API, with a store of its own). Lists and writes of crontabs go where the
// APIService v1.stable.example.com routes them, as kube-aggregator would;
// both sides enforce the pause policy.
type fakeCluster struct {
	t    *testing.T
	kube *kubefake.Clientset
	agg  *aggfake.Clientset
	dyn  *dynfake.FakeDynamicClient
	srv  *httptest.Server
	dir  string

	mu          sync.Mutex
	project     map[string]*unstructured.Unstructured // the project's store
	rv          int
	sealed      bool
	floor       string            // the store's floor, as the server keeps it (Seal sets it; State reports it)
	corrupt     bool              // the store loses each object's finalizers
	storeFails  string            // the name of an object the store refuses
	ignorePause bool              // the project's admission does not enforce the pause
	refuse      map[string]string // name → "field: message" the project's validation answers
	forbidAdopt bool
	noResource  bool
	denied      map[string]bool // "verb group resource" SelfSubjectAccessReview denies
	projVers    []string
	writes      []string // writes the CRD side took, "verb key"
	// schemas are the project's schemas by version, as its adoption API
	// answers them (a version without one: no schema); crontabSchema for
	// v1 unless a test changes it.
	schemas map[string]*apiextv1.JSONSchemaProps
	// oldBuild: the project's apiserver predates the schemas endpoint
	// (it answers 404 there, as such a build does).
	oldBuild bool
	// manifest is where the project read its schemas from ("": its markers).
	manifest string
}

// crontabSchema is the CRD's openAPIV3Schema of v1.
func crontabSchema() *apiextv1.JSONSchemaProps {
	return &apiextv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{
		"apiVersion": {Type: "string"}, "kind": {Type: "string"}, "metadata": {Type: "object"},
		"spec":   {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"schedule": {Type: "string", Description: "a cron expression"}}},
		"status": {Type: "object", Properties: map[string]apiextv1.JSONSchemaProps{"active": {Type: "integer"}}},
	}}
}

func crd(served bool) *apiextv1.CustomResourceDefinition {
	return &apiextv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: resource},
		Spec: apiextv1.CustomResourceDefinitionSpec{
			Group: group, Scope: apiextv1.NamespaceScoped,
			Names: apiextv1.CustomResourceDefinitionNames{Plural: plural, Kind: "CronTab", ListKind: "CronTabList", Singular: "crontab"},
			Versions: []apiextv1.CustomResourceDefinitionVersion{{
				Name: "v1", Served: served, Storage: true,
				Schema:       &apiextv1.CustomResourceValidation{OpenAPIV3Schema: crontabSchema()},
				Subresources: &apiextv1.CustomResourceSubresources{Status: &apiextv1.CustomResourceSubresourceStatus{}},
			}},
		},
	}
}

func crontab(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": group + "/v1", "kind": "CronTab",
		"metadata": map[string]any{
			"name": name, "namespace": "default", "uid": "uid-" + name, "resourceVersion": "1000",
			"creationTimestamp": "2026-01-02T03:04:05Z", "generation": int64(3),
			"labels": map[string]any{"app": name}, "finalizers": []any{"example.com/keep"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "owner-uid"}},
		},
		"spec":   map[string]any{"schedule": "* * * * *"},
		"status": map[string]any{"active": int64(1)},
	}}
	return u
}

func newFakeCluster(t *testing.T, objs ...*unstructured.Unstructured) *fakeCluster {
	f := &fakeCluster{t: t, project: map[string]*unstructured.Unstructured{}, refuse: map[string]string{}, denied: map[string]bool{}, projVers: []string{"v1"}, rv: 10,
		schemas: map[string]*apiextv1.JSONSchemaProps{"v1": crontabSchema()}}
	f.dir = t.TempDir()
	as := `apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.stable.example.com
spec:
  group: stable.example.com
  version: v1
  service: {namespace: crontab-system, name: crontab-apiserver, port: 443}
  caBundle: Y2E=
  groupPriorityMinimum: 2000
  versionPriority: 100
`
	if err := os.WriteFile(filepath.Join(f.dir, "apiservice.yaml"), []byte(as), 0o644); err != nil {
		t.Fatal(err)
	}
	u, err := fromCRD(crd(true))
	if err != nil {
		t.Fatal(err)
	}
	rt := []runtime.Object{u}
	for _, o := range objs {
		rt = append(rt, o)
	}
	f.dyn = dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		crdGVR: "CustomResourceDefinitionList", crontabs: "CronTabList",
	}, rt...)
	f.kube = kubefake.NewSimpleClientset()
	f.agg = aggfake.NewSimpleClientset(&apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1." + group, Labels: map[string]string{automanagedLabel: "true"}},
		Spec:       apiregv1.APIServiceSpec{Group: group, Version: "v1", GroupPriorityMinimum: 1000, VersionPriority: 100},
	})
	f.reactors()
	f.srv = httptest.NewServer(http.HandlerFunc(f.serveAdoption))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeCluster) reactors() {
	f.kube.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authzv1.SelfSubjectAccessReview)
		ra := r.Spec.ResourceAttributes
		res := ra.Resource
		if ra.Subresource != "" {
			res += "/" + ra.Subresource
		}
		r.Status.Allowed = !f.denied[ra.Verb+" "+ra.Group+" "+res]
		return true, r, nil
	})
	f.kube.PrependReactor("create", "selfsubjectreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		return true, &authnv1.SelfSubjectReview{Status: authnv1.SelfSubjectReviewStatus{UserInfo: authnv1.UserInfo{Username: testUser}}}, nil
	})
	available := func(a k8stesting.Action) (bool, runtime.Object, error) {
		var as *apiregv1.APIService
		switch a := a.(type) {
		case k8stesting.CreateAction:
			as = a.GetObject().(*apiregv1.APIService)
		case k8stesting.UpdateAction:
			as = a.GetObject().(*apiregv1.APIService)
		}
		reason := "Passed"
		if as.Spec.Service == nil {
			reason = "Local"
		}
		as.Status.Conditions = []apiregv1.APIServiceCondition{{Type: apiregv1.Available, Status: apiregv1.ConditionTrue, Reason: reason}}
		return false, nil, nil
	}
	f.agg.PrependReactor("create", "apiservices", available)
	f.agg.PrependReactor("update", "apiservices", available)
	f.dyn.PrependReactor("*", plural, f.route)
}

// routed tells whether kube-apiserver routes crontabs to the project.
func (f *fakeCluster) routed() bool {
	o, err := f.agg.Tracker().Get(apiregv1.SchemeGroupVersion.WithResource("apiservices"), "", "v1."+group)
	if err != nil {
		return false
	}
	as := o.(*apiregv1.APIService)
	_, auto := as.Labels[automanagedLabel]
	return as.Spec.Service != nil && !auto
}

// paused is the pause as enforced for testUser ("" when it lets it through).
func (f *fakeCluster) paused() string {
	o, err := f.kube.Tracker().Get(admv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"), "", PauseName(group))
	if err != nil {
		return ""
	}
	if _, err := f.kube.Tracker().Get(admv1.SchemeGroupVersion.WithResource("validatingadmissionpolicybindings"), "", PauseName(group)); err != nil {
		return ""
	}
	p := o.(*admv1.ValidatingAdmissionPolicy)
	for _, c := range p.Spec.MatchConditions {
		if strings.Contains(c.Expression, strconv.Quote(testUser)) {
			return ""
		}
	}
	return fmt.Sprintf("ValidatingAdmissionPolicy '%s' with binding '%s' denied request: %s", p.Name, p.Name, p.Spec.Validations[0].Message)
}

func (f *fakeCluster) crdServed() bool {
	o, err := f.dyn.Tracker().Get(crdGVR, "", resource)
	if err != nil {
		f.t.Fatal(err)
	}
	c, err := toCRD(o.(*unstructured.Unstructured))
	if err != nil {
		f.t.Fatal(err)
	}
	return len(servedVersions(c)) > 0
}

// route answers crontabs as kube-apiserver would: from the project when
// routed there, else from the CRD (404 when it serves no version).
func (f *fakeCluster) route(a k8stesting.Action) (bool, runtime.Object, error) {
	write := a.GetVerb() != "list" && a.GetVerb() != "get" && a.GetVerb() != "watch"
	if msg := f.paused(); write && msg != "" {
		return true, nil, apierrors.NewForbidden(crontabs.GroupResource(), "", fmt.Errorf("%s", msg))
	}
	if f.routed() {
		return f.projectAnswer(a)
	}
	if !f.crdServed() {
		return true, nil, apierrors.NewNotFound(crontabs.GroupResource(), "")
	}
	if c, ok := a.(k8stesting.CreateActionImpl); ok && len(c.CreateOptions.DryRun) > 0 {
		return true, c.Object, nil
	}
	if c, ok := a.(k8stesting.CreateActionImpl); ok {
		u := c.Object.(*unstructured.Unstructured)
		u.SetUID(types.UID("new-" + u.GetName()))
		u.SetResourceVersion("2000")
	}
	if write {
		f.mu.Lock()
		f.writes = append(f.writes, a.GetVerb()+" "+a.GetSubresource())
		f.mu.Unlock()
	}
	return false, nil, nil
}

func (f *fakeCluster) projectAnswer(a k8stesting.Action) (bool, runtime.Object, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch a := a.(type) {
	case k8stesting.ListAction:
		l := &unstructured.UnstructuredList{}
		l.SetAPIVersion(group + "/v1")
		l.SetKind("CronTabList")
		for _, o := range f.sorted() {
			l.Items = append(l.Items, *o.DeepCopy())
		}
		return true, l, nil
	case k8stesting.CreateAction:
		return true, a.GetObject(), nil // dry-run probes only
	}
	return true, nil, fmt.Errorf("the fake project takes no %s", a.GetVerb())
}

func (f *fakeCluster) sorted() []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, k := range sortedKeys(f.project) {
		out = append(out, f.project[k])
	}
	return out
}

func sortedKeys(m map[string]*unstructured.Unstructured) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks {
		for j := i + 1; j < len(ks); j++ {
			if ks[j] < ks[i] {
				ks[i], ks[j] = ks[j], ks[i]
			}
		}
	}
	return ks
}

func writeStatus(w http.ResponseWriter, s *metav1.Status) {
	s.APIVersion, s.Kind, s.Status = "v1", "Status", metav1.StatusFailure
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	_ = json.NewEncoder(w).Encode(s)
}

// serveAdoption is the project's adoption API.
func (f *fakeCluster) serveAdoption(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == adoption.SchemasPath(group, plural) && !f.oldBuild {
		f.serveSchemas(w, req)
		return
	}
	if req.URL.Path != adoption.Path(group, plural) {
		writeStatus(w, &apierrors.NewNotFound(schema.GroupResource{Group: adoption.Group}, req.URL.Path).ErrStatus)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.forbidAdopt:
		writeStatus(w, &apierrors.NewForbidden(crontabs.GroupResource(), "", fmt.Errorf("user %q cannot adopt", testUser)).ErrStatus)
		return
	case f.noResource:
		writeStatus(w, &apierrors.NewNotFound(crontabs.GroupResource(), "").ErrStatus)
		return
	}
	var out any
	if req.Method == http.MethodGet {
		s := &adoption.State{Group: group, Resource: plural, KindName: "CronTab", Namespaced: true, StorageVersion: "v1", Versions: f.projVers, ResourceVersion: strconv.Itoa(f.rv), Floor: f.floor}
		for _, k := range sortedKeys(f.project) {
			o := f.project[k]
			s.Objects = append(s.Objects, adoption.Key{Namespace: o.GetNamespace(), Name: o.GetName(), UID: o.GetUID()})
		}
		out = s
	} else {
		b := &adoption.Batch{}
		if err := json.NewDecoder(req.Body).Decode(b); err != nil {
			writeStatus(w, &apierrors.NewBadRequest(err.Error()).ErrStatus)
			return
		}
		out = f.batch(b)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// serveSchemas answers GET of the schemas endpoint.
func (f *fakeCluster) serveSchemas(w http.ResponseWriter, req *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case req.Method != http.MethodGet:
		writeStatus(w, &apierrors.NewMethodNotSupported(crontabs.GroupResource(), req.Method).ErrStatus)
		return
	case f.forbidAdopt:
		writeStatus(w, &apierrors.NewForbidden(crontabs.GroupResource(), "", fmt.Errorf("user %q cannot adopt", testUser)).ErrStatus)
		return
	}
	s := &adoption.Schemas{Group: group, Resource: plural}
	for _, v := range f.projVers {
		vs := adoption.VersionSchema{Version: v, Manifest: f.manifest}
		if p := f.schemas[v]; p != nil {
			b, err := json.Marshal(p)
			if err != nil {
				f.t.Error(err)
			}
			vs.OpenAPIV3Schema = b
		}
		s.Versions = append(s.Versions, vs)
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(s)
}

func (f *fakeCluster) batch(b *adoption.Batch) *adoption.BatchResult {
	res := &adoption.BatchResult{}
	for _, raw := range b.Objects {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(raw.Raw); err != nil {
			f.t.Errorf("an object of a batch: %v", err)
		}
		x := adoption.Result{Namespace: u.GetNamespace(), Name: u.GetName()}
		// As the real create: the schema and hooks, then admission.
		switch msg := f.paused(); {
		case b.Validate && f.refuse[u.GetName()] != "":
			field, m, _ := strings.Cut(f.refuse[u.GetName()], ": ")
			x.Error = &metav1.Status{Message: "invalid", Code: 422, Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Field: field, Message: m}}}}
		case b.Validate && msg != "" && !f.ignorePause:
			x.Error = &metav1.Status{Message: msg, Code: 403}
		case b.Validate && f.project[objKey(u)] != nil:
			// The real dry-run create: valid, but the store holds the name.
			x.Error = &apierrors.NewAlreadyExists(crontabs.GroupResource(), u.GetName()).ErrStatus
		case !b.Validate && u.GetName() == f.storeFails:
			x.Error = &metav1.Status{Message: "etcdserver: request is too large", Code: 500}
		case !b.Validate:
			f.rv++
			u.SetResourceVersion(strconv.Itoa(f.rv))
			if f.corrupt {
				u.SetFinalizers(nil)
			}
			f.project[objKey(u)] = u
			x.ResourceVersion = u.GetResourceVersion()
		}
		res.Results = append(res.Results, x)
	}
	for _, k := range b.Remove {
		delete(f.project, key(k.Namespace, k.Name))
	}
	if b.Seal {
		f.sealed, f.floor = true, strconv.Itoa(f.rv)
	}
	res.ResourceVersion = strconv.Itoa(f.rv)
	return res
}

func (f *fakeCluster) clients() *Clients {
	rc, err := AdoptionClient(&rest.Config{Host: f.srv.URL})
	if err != nil {
		f.t.Fatal(err)
	}
	return &Clients{Kube: f.kube, Aggregator: f.agg, Dynamic: f.dyn, Adoption: rc}
}

func (f *fakeCluster) run(o Options) (string, error) {
	var out bytes.Buffer
	o.Out, o.ConfigDir, o.SamplesDir = &out, f.dir, filepath.Join(f.dir, "samples")
	o.Timeout, o.Poll, o.Settle = 2*time.Second, 10*time.Millisecond, time.Millisecond
	err := Run(context.Background(), f.clients(), o)
	return out.String(), err
}

// crdObjects are the objects the CRD's store holds.
func (f *fakeCluster) crdObjects() map[string]*unstructured.Unstructured {
	l, err := f.dyn.Tracker().List(crontabs, crontabs.GroupVersion().WithKind("CronTab"), "")
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]*unstructured.Unstructured{}
	for _, o := range l.(*unstructured.UnstructuredList).Items {
		out[objKey(&o)] = o.DeepCopy()
	}
	return out
}

func (f *fakeCluster) pauseExists() bool {
	_, err := f.kube.Tracker().Get(admv1.SchemeGroupVersion.WithResource("validatingadmissionpolicies"), "", PauseName(group))
	return err == nil
}

func (f *fakeCluster) tempExists() bool {
	_, err := f.agg.Tracker().Get(apiregv1.SchemeGroupVersion.WithResource("apiservices"), "", TempAPIService)
	return err == nil
}

// fromCRD is crd as the dynamic client holds it.
func fromCRD(crd *apiextv1.CustomResourceDefinition) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetAPIVersion(apiextv1.SchemeGroupVersion.String())
	u.SetKind("CustomResourceDefinition")
	return u, nil
}
