package adoption

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/storage"
	storeerr "k8s.io/apiserver/pkg/storage/errors"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// version checks that an object's apiVersion and kind are r's, in a
// version the project serves, and returns that version.
func (r *Resource) version(apiVersion, kind string) (string, error) {
	gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil || gv.Group != r.Group || !slices.Contains(r.Versions, gv.Version) {
		var served []string
		for _, v := range r.Versions {
			served = append(served, r.Group+"/"+v)
		}
		return "", apierrors.NewInvalid(gk, "", field.ErrorList{field.NotSupported(field.NewPath("apiVersion"), apiVersion, served)})
	}
	if kind != r.Kind {
		return "", apierrors.NewInvalid(gk, "", field.ErrorList{field.NotSupported(field.NewPath("kind"), kind, []string{r.Kind})})
	}
	return gv.Version, nil
}

// decode reads an object to store: r's kind in a served version, named,
// with a uid, in a namespace exactly when r is namespaced; decoded into the
// internal version as the storage decodes it.
func (a *api) decode(r *Resource, raw []byte) (runtime.Object, metav1.Object, error) {
	gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("not a JSON object: %v", err))
	}
	if _, err := r.version(tm.APIVersion, tm.Kind); err != nil {
		return nil, nil, err
	}
	obj, err := runtime.Decode(a.Decoder, raw)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("decoding %s: %v", gk, err))
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil, err
	}
	var errs field.ErrorList
	md := field.NewPath("metadata")
	if m.GetName() == "" {
		errs = append(errs, field.Required(md.Child("name"), "an adopted object keeps its name"))
	}
	if m.GetUID() == "" {
		errs = append(errs, field.Required(md.Child("uid"), "an adopted object keeps its uid"))
	}
	if r.Namespaced && m.GetNamespace() == "" {
		errs = append(errs, field.Required(md.Child("namespace"), fmt.Sprintf("%s is namespaced", r.groupResource())))
	}
	if !r.Namespaced && m.GetNamespace() != "" {
		errs = append(errs, field.Forbidden(md.Child("namespace"), fmt.Sprintf("%s is cluster-scoped", r.groupResource())))
	}
	if len(errs) > 0 {
		return nil, nil, apierrors.NewInvalid(gk, m.GetName(), errs)
	}
	return obj, m, nil
}

// store writes one object into r's storage with its identity, encoded in
// the storage version by the store's codec: created, or replacing whatever
// copy is there, unconditionally. No strategy, no admission: the objects
// were validated by the plan (Validate), and the pause holds writes.
func (a *api) store(ctx context.Context, r *Resource, raw []byte) adoption.Result {
	obj, m, err := a.decode(r, raw)
	if err != nil {
		return failed(raw, err)
	}
	res := adoption.Result{Namespace: m.GetNamespace(), Name: m.GetName()}
	ctx = request.WithNamespace(ctx, m.GetNamespace())
	key, err := r.Store.KeyFunc(ctx, m.GetName())
	if err != nil {
		return failed(raw, err)
	}
	m.SetResourceVersion("") // the store gives the revision
	out := r.Store.NewFunc()
	err = r.Store.Storage.GuaranteedUpdate(ctx, key, out, true, nil, func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) {
		return obj, nil, nil
	}, false, nil)
	if err != nil {
		return failed(raw, storeerr.InterpretUpdateError(err, r.groupResource(), m.GetName()))
	}
	if om, err := meta.Accessor(out); err == nil {
		res.ResourceVersion = om.GetResourceVersion()
	}
	return res
}

// remove deletes one object of r from its storage outright (a stale copy
// of an earlier adoption), only if its uid is k's, when k names one; one
// that is gone already is no error.
func (a *api) remove(ctx context.Context, r *Resource, k adoption.Key) error {
	ctx = request.WithNamespace(ctx, k.Namespace)
	key, err := r.Store.KeyFunc(ctx, k.Name)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("remove %s/%s: %v", k.Namespace, k.Name, err))
	}
	var pre *storage.Preconditions
	if k.UID != "" {
		pre = storage.NewUIDPreconditions(string(k.UID))
	}
	err = r.Store.Storage.Delete(ctx, key, r.Store.NewFunc(), pre, storage.ValidateAllObjectFunc, false, nil, storage.DeleteOptions{})
	if storage.IsNotFound(err) {
		return nil
	}
	return storeerr.InterpretDeleteError(err, r.groupResource(), k.Name)
}

// failed is the Result of an object refused with err, named as far as its
// JSON names it.
func failed(raw []byte, err error) adoption.Result {
	var u struct {
		Metadata struct{ Namespace, Name string } `json:"metadata"`
	}
	_ = json.Unmarshal(raw, &u)
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		status = apierrors.NewInternalError(err)
	}
	s := status.Status()
	return adoption.Result{Namespace: u.Metadata.Namespace, Name: u.Metadata.Name, Error: &s}
}
