package adoption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/client-go/util/workqueue"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

var groupVersion = schema.GroupVersion{Group: adoption.Group, Version: adoption.Version}

// ServeHTTP serves the group's discovery (an APIGroup, and an
// APIResourceList without resources: dotted names would confuse discovery
// clients, and kube-apiserver's availability check of an APIService needs
// a 200), then GET and POST of Path(group, resource) and GET of
// SchemasPath(group, resource).
func (a *api) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	rest := strings.TrimSuffix(strings.TrimPrefix(req.URL.Path, groupPath), "/")
	switch {
	case rest == "" && req.Method == http.MethodGet:
		v := metav1.GroupVersionForDiscovery{GroupVersion: groupVersion.String(), Version: adoption.Version}
		responsewriters.WriteRawJSON(http.StatusOK, metav1.APIGroup{TypeMeta: metav1.TypeMeta{Kind: "APIGroup", APIVersion: "v1"},
			Name: adoption.Group, Versions: []metav1.GroupVersionForDiscovery{v}, PreferredVersion: v}, w)
		return
	case rest == "/"+adoption.Version && req.Method == http.MethodGet:
		responsewriters.WriteRawJSON(http.StatusOK, metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
			GroupVersion: groupVersion.String(), APIResources: []metav1.APIResource{}}, w)
		return
	}
	name, _ := strings.CutPrefix(rest, "/"+adoption.Version+"/")
	name, sub, _ := strings.Cut(name, "/")
	group, resource, _ := adoption.ParseResource(name)
	r := a.resources[schema.GroupResource{Group: group, Resource: resource}]
	if r == nil || (sub != "" && sub != adoption.SchemasSuffix) {
		a.fail(w, req, &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
			Message: fmt.Sprintf("%s is not an adoption endpoint: want %s of one of the project's resources", req.URL.Path, adoption.Path("<group>", "<plural>"))}})
		return
	}
	if sub == adoption.SchemasSuffix {
		if req.Method != http.MethodGet {
			a.fail(w, req, apierrors.NewMethodNotSupported(groupVersion.WithResource(name+"/"+sub).GroupResource(), strings.ToLower(req.Method)))
			return
		}
		responsewriters.WriteRawJSON(http.StatusOK, &adoption.Schemas{TypeMeta: metav1.TypeMeta{Kind: "Schemas", APIVersion: groupVersion.String()},
			Group: r.Group, Resource: r.Plural, Versions: r.schemas()}, w)
		return
	}
	switch req.Method {
	case http.MethodGet:
		state, err := a.state(req.Context(), r)
		if err != nil {
			a.fail(w, req, err)
			return
		}
		responsewriters.WriteRawJSON(http.StatusOK, state, w)
	case http.MethodPost:
		a.serveBatch(w, req, r)
	default:
		a.fail(w, req, apierrors.NewMethodNotSupported(groupVersion.WithResource(name).GroupResource(), strings.ToLower(req.Method)))
	}
}

// schemas are r's schemas by served version, in the order of r.Versions:
// a version without a schema has none.
func (r *Resource) schemas() []adoption.VersionSchema {
	out := []adoption.VersionSchema{}
	for _, v := range r.Versions {
		vs := adoption.VersionSchema{Version: v}
		if s, ok := r.Schemas[v]; ok {
			vs.Manifest = s.Manifest
			if s.OpenAPIV3 != "" {
				vs.OpenAPIV3Schema = json.RawMessage(s.OpenAPIV3)
			}
		}
		out = append(out, vs)
	}
	return out
}

func (a *api) fail(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, a.Codecs, schema.GroupVersion{}, w, req)
}

// state lists every object of r in the store (at once, from the storage:
// what the CLI compares with the CRD's), with the store's revision and
// the resource's floor.
func (a *api) state(ctx context.Context, r *Resource) (*adoption.State, error) {
	ctx = request.WithNamespace(ctx, metav1.NamespaceAll)
	list := r.Store.NewListFunc()
	opts := storage.ListOptions{Recursive: true, Predicate: storage.Everything}
	if err := r.Store.Storage.GetList(ctx, r.Store.KeyRootFunc(ctx), opts, list); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	s := &adoption.State{
		TypeMeta: metav1.TypeMeta{Kind: "State", APIVersion: groupVersion.String()},
		Group:    r.Group, Resource: r.Plural, KindName: r.Kind, Namespaced: r.Namespaced,
		StorageVersion: r.StorageVersion, Versions: r.Versions, Objects: []adoption.Key{},
	}
	for _, item := range items {
		m, err := meta.Accessor(item)
		if err != nil {
			return nil, err
		}
		s.Objects = append(s.Objects, adoption.Key{Namespace: m.GetNamespace(), Name: m.GetName(), UID: m.GetUID()})
	}
	s.ResourceVersion, s.Floor, err = a.revisions(ctx, r)
	return s, err
}

// revisions are the store's current revision and r's floor ("" when none).
func (a *api) revisions(ctx context.Context, r *Resource) (current, floor string, err error) {
	cur, err := r.Store.Storage.Storage.GetCurrentResourceVersion(ctx)
	if err != nil {
		return "", "", err
	}
	f, err := a.Floors.Get(ctx, r.groupResource())
	if err != nil {
		return "", "", err
	}
	if f > 0 {
		floor = strconv.FormatUint(f, 10)
	}
	return strconv.FormatUint(cur, 10), floor, nil
}

// readBatch reads a Batch, refusing what the protocol refuses as a whole.
func readBatch(w http.ResponseWriter, req *http.Request) (*adoption.Batch, error) {
	data, err := io.ReadAll(http.MaxBytesReader(w, req.Body, adoption.MaxBody))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("a Batch may be at most %d bytes: send fewer objects per Batch", adoption.MaxBody))
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("reading the Batch: %v", err))
	}
	var b adoption.Batch
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the body is not a Batch (JSON): %v", err))
	}
	if b.Kind != "" && b.Kind != "Batch" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("kind %q: want Batch", b.Kind))
	}
	if b.Validate && (len(b.Remove) > 0 || b.Seal) {
		return nil, apierrors.NewBadRequest("a Batch with validate may not remove or seal: validate stores and removes nothing")
	}
	if len(b.Objects) > adoption.MaxBatch {
		return nil, apierrors.NewRequestEntityTooLargeError(fmt.Sprintf("%d objects: a Batch may hold at most %d", len(b.Objects), adoption.MaxBatch))
	}
	return &b, nil
}

// serveBatch validates the objects of a Batch, or stores them, removes the
// stale copies it names and seals the resource, in that order; the first
// whole-request failure (removing, sealing) ends it.
// batchWorkers is how many objects of a Batch are stored or validated at
// once.
const batchWorkers = 8

func (a *api) serveBatch(w http.ResponseWriter, req *http.Request, r *Resource) {
	b, err := readBatch(w, req)
	if err != nil {
		a.fail(w, req, err)
		return
	}
	ctx := req.Context()
	res := &adoption.BatchResult{TypeMeta: metav1.TypeMeta{Kind: "BatchResult", APIVersion: groupVersion.String()}, Results: make([]adoption.Result, len(b.Objects))}
	each := a.store
	if b.Validate {
		each = a.validate
	}
	// Objects are independent (one key each): batchWorkers at a time, as
	// many clients would send them; the results keep the batch's order.
	workqueue.ParallelizeUntil(ctx, batchWorkers, len(b.Objects), func(i int) {
		res.Results[i] = each(ctx, r, b.Objects[i].Raw)
	})
	for _, k := range b.Remove {
		if err := a.remove(ctx, r, k); err != nil {
			a.fail(w, req, err)
			return
		}
	}
	if b.Seal {
		cur, err := r.Store.Storage.Storage.GetCurrentResourceVersion(ctx)
		if err == nil {
			err = a.Floors.Set(ctx, r.groupResource(), cur)
		}
		if err != nil {
			a.fail(w, req, fmt.Errorf("sealing %s: %w", r.groupResource(), err))
			return
		}
	}
	if res.ResourceVersion, res.Floor, err = a.revisions(ctx, r); err != nil {
		a.fail(w, req, err)
		return
	}
	responsewriters.WriteRawJSON(http.StatusOK, res, w)
}
