package server

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// customREST serves a custom subresource: POST <plural>/<name>/<path> with
// the request object; the handler gets the named object and the request.
type customREST struct {
	store *genericregistry.Store
	sub   builders.Subresource
}

var _ rest.NamedCreater = &customREST{}

func (r *customREST) New() runtime.Object { return r.sub.NewRequest() }
func (r *customREST) Destroy()            {}

func (r *customREST) Create(ctx context.Context, name string, obj runtime.Object, createValidation rest.ValidateObjectFunc, options *metav1.CreateOptions) (runtime.Object, error) {
	if createValidation != nil {
		if err := createValidation(ctx, obj); err != nil {
			return nil, err
		}
	}
	parent, err := r.store.Get(ctx, name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out, err := r.sub.Handle(ctx, parent, obj)
	if err != nil {
		if _, ok := err.(apierrors.APIStatus); ok {
			return nil, err
		}
		return nil, apierrors.NewInternalError(fmt.Errorf("%s/%s: %w", name, r.sub.Path, err))
	}
	return out, nil
}
