package adoption

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	pathvalidation "k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/endpoints/request"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// identity are the metadata fields a dry-run create would refuse or reset,
// dropped before Validate sends an object.
var identity = []string{"resourceVersion", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation", "managedFields"}

// validate dry-run creates one object (dryRun=All) through the very handler
// a client's create reaches, /apis/<group>/<its version>/[namespaces/<ns>/]<plural>,
// as the requesting user: decoding, the schema and CEL rules, the kind's
// hooks and the project's admission all run, and nothing is stored. Field
// validation is strict: a field the project's types lack would be dropped
// when the object is stored, so it is refused by name instead. The
// Result's Error is the Status that create answered.
func (a *api) validate(ctx context.Context, r *Resource, raw []byte) adoption.Result {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return failed(raw, apierrors.NewBadRequest(fmt.Sprintf("not an object: %v", err)))
	}
	res := adoption.Result{Namespace: u.GetNamespace(), Name: u.GetName()}
	version, err := r.version(u.GetAPIVersion(), u.GetKind())
	if err != nil {
		return failed(raw, err)
	}
	for _, f := range identity {
		unstructured.RemoveNestedField(u.Object, "metadata", f)
	}
	body, err := u.MarshalJSON()
	if err != nil {
		return failed(raw, err)
	}
	path := "/apis/" + r.Group + "/" + version + "/"
	if r.Namespaced {
		ns := u.GetNamespace()
		if msgs := pathvalidation.IsValidPathSegmentName(ns); ns == "" || len(msgs) > 0 {
			gk := schema.GroupKind{Group: r.Group, Kind: r.Kind}
			return failed(raw, apierrors.NewInvalid(gk, u.GetName(), field.ErrorList{field.Invalid(field.NewPath("metadata", "namespace"), ns, fmt.Sprintf("%s is namespaced: want a namespace's name", r.groupResource()))}))
		}
		path += "namespaces/" + ns + "/"
	}
	req, err := http.NewRequest(http.MethodPost, path+r.Plural+"?dryRun=All&fieldValidation=Strict", bytes.NewReader(body))
	if err != nil {
		return failed(raw, apierrors.NewBadRequest(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	info, err := a.RequestInfo.NewRequestInfo(req)
	if err != nil {
		return failed(raw, err)
	}
	user, _ := request.UserFrom(ctx)
	w := httptest.NewRecorder()
	a.Create.ServeHTTP(w, req.WithContext(request.WithRequestInfo(request.WithUser(ctx, user), info)))
	if w.Code < 300 {
		return res
	}
	var status metav1.Status
	if err := json.Unmarshal(w.Body.Bytes(), &status); err != nil || status.Kind != "Status" {
		status = apierrors.NewInternalError(fmt.Errorf("the dry-run create answered %d: %s", w.Code, w.Body.String())).Status()
	}
	res.Error = &status
	return res
}
