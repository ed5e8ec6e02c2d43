package server

import (
	"context"
	"fmt"
	"strings"

	autoscalingv1 "k8s.io/api/autoscaling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/validation"
)

// addScaleToScheme registers autoscaling/v1 Scale, also as its own internal
// version: the same Go type on both sides means no conversion is needed.
func addScaleToScheme(scheme *runtime.Scheme) {
	scheme.AddKnownTypes(autoscalingv1.SchemeGroupVersion, &autoscalingv1.Scale{})
	scheme.AddKnownTypes(schema.GroupVersion{Group: autoscalingv1.GroupName, Version: runtime.APIVersionInternal}, &autoscalingv1.Scale{})
}

// scaleREST serves <plural>/<name>/scale, reading and writing the replica
// counts at the resource's configured paths, as CRDs do.
type scaleREST struct {
	store   *genericregistry.Store
	paths   builders.Scale
	content jsoncontent.Kind
}

var (
	_ rest.Patcher                  = &scaleREST{}
	_ rest.GroupVersionKindProvider = &scaleREST{}
)

func (r *scaleREST) GroupVersionKind(schema.GroupVersion) schema.GroupVersionKind {
	return autoscalingv1.SchemeGroupVersion.WithKind("Scale")
}
func (r *scaleREST) New() runtime.Object { return &autoscalingv1.Scale{} }
func (r *scaleREST) Destroy()            {}

func (r *scaleREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.store.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	return r.toScale(obj)
}

func (r *scaleREST) Update(ctx context.Context, name string, objInfo rest.UpdatedObjectInfo, createValidation rest.ValidateObjectFunc, updateValidation rest.ValidateObjectUpdateFunc, forceAllowCreate bool, options *metav1.UpdateOptions) (runtime.Object, bool, error) {
	info := &scaleUpdate{objInfo: objInfo, rest: r}
	obj, _, err := r.store.Update(ctx, name, info,
		func(ctx context.Context, obj runtime.Object) error {
			s, err := r.toScale(obj)
			if err != nil {
				return err
			}
			return createValidation(ctx, s)
		},
		func(ctx context.Context, obj, old runtime.Object) error {
			s, err := r.toScale(obj)
			if err != nil {
				return err
			}
			oldScale, err := r.toScale(old)
			if err != nil {
				return err
			}
			return updateValidation(ctx, s, oldScale)
		}, false, options)
	if err != nil {
		return nil, false, err
	}
	s, err := r.toScale(obj)
	return s, false, err
}

func jsonPath(p string) []string { return strings.Split(strings.TrimPrefix(p, "."), ".") }

func (r *scaleREST) toScale(obj runtime.Object) (*autoscalingv1.Scale, error) {
	u, err := r.content.ToMap(obj)
	if err != nil {
		return nil, err
	}
	spec, _, err := unstructured.NestedInt64(u, jsonPath(r.paths.SpecReplicasPath)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.paths.SpecReplicasPath, err)
	}
	status, _, err := unstructured.NestedInt64(u, jsonPath(r.paths.StatusReplicasPath)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.paths.StatusReplicasPath, err)
	}
	var selector string
	if r.paths.LabelSelectorPath != "" {
		selector, _, _ = unstructured.NestedString(u, jsonPath(r.paths.LabelSelectorPath)...)
	}
	m := obj.(metav1.Object)
	return &autoscalingv1.Scale{
		TypeMeta: metav1.TypeMeta{APIVersion: "autoscaling/v1", Kind: "Scale"},
		ObjectMeta: metav1.ObjectMeta{
			Name: m.GetName(), Namespace: m.GetNamespace(), UID: m.GetUID(),
			ResourceVersion: m.GetResourceVersion(), CreationTimestamp: m.GetCreationTimestamp(),
		},
		Spec:   autoscalingv1.ScaleSpec{Replicas: int32(spec)},
		Status: autoscalingv1.ScaleStatus{Replicas: int32(status), Selector: selector},
	}, nil
}

// scaleUpdate turns an update of the Scale into an update of the object.
type scaleUpdate struct {
	objInfo rest.UpdatedObjectInfo
	rest    *scaleREST
}

func (s *scaleUpdate) Preconditions() *metav1.Preconditions { return s.objInfo.Preconditions() }

func (s *scaleUpdate) UpdatedObject(ctx context.Context, oldObj runtime.Object) (runtime.Object, error) {
	oldScale, err := s.rest.toScale(oldObj)
	if err != nil {
		return nil, err
	}
	obj, err := s.objInfo.UpdatedObject(ctx, oldScale)
	if err != nil {
		return nil, err
	}
	scale, ok := obj.(*autoscalingv1.Scale)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("expected an autoscaling/v1 Scale, got %T", obj))
	}
	if scale.Spec.Replicas < 0 {
		return nil, apierrors.NewInvalid(autoscalingv1.SchemeGroupVersion.WithKind("Scale").GroupKind(), scale.Name,
			field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), scale.Spec.Replicas, "must be greater than or equal to 0")})
	}
	u, err := s.rest.content.ToMap(oldObj)
	if err != nil {
		return nil, err
	}
	if err := unstructured.SetNestedField(u, int64(scale.Spec.Replicas), jsonPath(s.rest.paths.SpecReplicasPath)...); err != nil {
		return nil, err
	}
	if sent := validation.RecordFrom(ctx); sent != nil {
		// What the schema validation sees of the write, as a CRD's: the
		// replicas even where the Go field drops a zero.
		m := map[string]any{}
		if err := unstructured.SetNestedField(m, int64(scale.Spec.Replicas), jsonPath(s.rest.paths.SpecReplicasPath)...); err == nil {
			if err := sent.Scaled(m); err != nil {
				return nil, err
			}
		}
	}
	updated := s.rest.store.New()
	if err := s.rest.content.FromMap(u, updated); err != nil {
		return nil, err
	}
	// A resourceVersion on the Scale is a precondition on the object.
	if scale.ResourceVersion != "" {
		updated.(metav1.Object).SetResourceVersion(scale.ResourceVersion)
	}
	return updated, nil
}
