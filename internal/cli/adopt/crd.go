package adopt

import (
	"context"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/retry"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// servedAnnotation records, on a CRD the switch set unserved, the versions
// it served: --rollback serves them again.
const servedAnnotation = "adoption.apiserver-boot.io/served"

func servedVersions(crd *apiextv1.CustomResourceDefinition) []string {
	var out []string
	for _, v := range crd.Spec.Versions {
		if v.Served {
			out = append(out, v.Name)
		}
	}
	return out
}

func storageVersion(crd *apiextv1.CustomResourceDefinition) string {
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			return v.Name
		}
	}
	return ""
}

// recordedServed is what servedAnnotation holds (nil when absent).
func recordedServed(crd *apiextv1.CustomResourceDefinition) []string {
	s := crd.Annotations[servedAnnotation]
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// updateCRD applies change to the CRD's latest copy, retrying conflicts.
// Only what change may touch (each version's served, the annotations) is
// written back, onto the CRD as read: a field of a newer kube-apiserver
// that the vendored types lack is kept.
func (r *run) updateCRD(ctx context.Context, t *target, change func(*apiextv1.CustomResourceDefinition) bool) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		u, err := r.c.Dynamic.Resource(crdGVR).Get(ctx, t.crd.Name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("reading the CRD %s: %w", t.crd.Name, err)
		}
		if t.crd, err = toCRD(u); err != nil {
			return err
		}
		if !change(t.crd) {
			return nil
		}
		if err := applyServed(u, t.crd); err != nil {
			return err
		}
		out, err := r.c.Dynamic.Resource(crdGVR).Update(ctx, u, metav1.UpdateOptions{})
		if err != nil {
			return err
		}
		crd, err := toCRD(out)
		if err == nil {
			t.crd = crd
		}
		return err
	})
}

// unserve sets every version of the CRD served: false, recording which
// were served. The CRD and its objects stay.
func (r *run) unserve(ctx context.Context, t *target) error {
	err := r.updateCRD(ctx, t, func(crd *apiextv1.CustomResourceDefinition) bool {
		served := servedVersions(crd)
		if len(served) == 0 {
			return false
		}
		if crd.Annotations == nil {
			crd.Annotations = map[string]string{}
		}
		crd.Annotations[servedAnnotation] = strings.Join(served, ",")
		for i := range crd.Spec.Versions {
			crd.Spec.Versions[i].Served = false
		}
		return true
	})
	if err != nil {
		return fmt.Errorf("setting the versions of the CRD %s served: false: %w", t.crd.Name, err)
	}
	return nil
}

// reserve serves again the versions unserve recorded (every version when
// the record is missing) and drops the record.
func (r *run) reserve(ctx context.Context, t *target) error {
	err := r.updateCRD(ctx, t, func(crd *apiextv1.CustomResourceDefinition) bool {
		rec := recordedServed(crd)
		if len(rec) == 0 && len(servedVersions(crd)) > 0 {
			return false
		}
		for i := range crd.Spec.Versions {
			if len(rec) == 0 || slices.Contains(rec, crd.Spec.Versions[i].Name) {
				crd.Spec.Versions[i].Served = true
			}
		}
		delete(crd.Annotations, servedAnnotation)
		return true
	})
	if err != nil {
		return fmt.Errorf("serving the versions of the CRD %s again: %w", t.crd.Name, err)
	}
	return nil
}

// applyServed writes crd's served flags (by version name) and annotations
// onto u, the same CRD as read.
func applyServed(u *unstructured.Unstructured, crd *apiextv1.CustomResourceDefinition) error {
	versions, _, err := unstructured.NestedSlice(u.Object, "spec", "versions")
	if err != nil {
		return fmt.Errorf("the CRD %s: spec.versions: %w", crd.Name, err)
	}
	for i, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("the CRD %s: spec.versions[%d] is not an object", crd.Name, i)
		}
		for _, cv := range crd.Spec.Versions {
			if cv.Name == m["name"] {
				m["served"] = cv.Served
			}
		}
	}
	if err := unstructured.SetNestedSlice(u.Object, versions, "spec", "versions"); err != nil {
		return err
	}
	u.SetAnnotations(crd.Annotations)
	return nil
}
