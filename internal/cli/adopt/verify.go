package adopt

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// identityFields are the fields the move keeps exactly.
var identityFields = [][]string{
	{"metadata", "uid"}, {"metadata", "creationTimestamp"}, {"metadata", "generation"}, {"metadata", "labels"},
	{"metadata", "annotations"}, {"metadata", "finalizers"}, {"metadata", "ownerReferences"},
	{"metadata", "managedFields"}, {"status"}, {"metadata", "deletionTimestamp"}, {"metadata", "deletionGracePeriodSeconds"},
}

// Compare checks got (served after the switch) against read (the objects
// moved): every object there, each identity field equal, nothing extra.
// Spec differences (a conversion's defaults) are warnings.
func Compare(resource string, read, got []*unstructured.Unstructured) (problems, specWarnings []string) {
	byKey := map[string]*unstructured.Unstructured{}
	for _, o := range got {
		byKey[objKey(o)] = o
	}
	for _, want := range read {
		k := objKey(want)
		have, ok := byKey[k]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s %s: missing", resource, k))
			continue
		}
		delete(byKey, k)
		for _, f := range identityFields {
			a, _, _ := unstructured.NestedFieldNoCopy(want.Object, f...)
			b, _, _ := unstructured.NestedFieldNoCopy(have.Object, f...)
			if !equality.Semantic.DeepEqual(a, b) && !(isEmpty(a) && isEmpty(b)) {
				problems = append(problems, fmt.Sprintf("%s %s: %s is %v, was %v", resource, k, strings.Join(f, "."), b, a))
			}
		}
		a, _, _ := unstructured.NestedFieldNoCopy(want.Object, "spec")
		b, _, _ := unstructured.NestedFieldNoCopy(have.Object, "spec")
		if !equality.Semantic.DeepEqual(a, b) {
			specWarnings = append(specWarnings, fmt.Sprintf("%s %s: spec is %v, was %v", resource, k, b, a))
		}
	}
	for k := range byKey {
		problems = append(problems, fmt.Sprintf("%s %s: an object that was not moved", resource, k))
	}
	return problems, specWarnings
}

func isEmpty(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// servedByProject tells whether a list answered after the switch comes
// from the project's apiserver: every object's resourceVersion is its
// stored copy's. Until kube-apiserver routes the group there it answers
// from the CRD, 404 or 503.
func servedByProject(t *target, got []*unstructured.Unstructured) bool {
	for _, o := range got {
		if t.stored[objKey(o)] != o.GetResourceVersion() {
			return false
		}
	}
	return true
}

// verify lists each target through kube-apiserver, in the version it was
// read in, once kube-apiserver routes to the project, and compares.
func (r *run) verify(ctx context.Context) error {
	var problems []string
	for _, t := range r.targets {
		var got []*unstructured.Unstructured
		err := r.wait(ctx, "kube-apiserver to serve "+t.name()+" from the project's apiserver", func() (bool, string, error) {
			var err error
			got, err = r.list(ctx, t)
			if apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err) {
				return false, err.Error(), nil
			} else if err != nil {
				return false, "", err
			}
			return servedByProject(t, got), "objects still carry the CRD's resourceVersions", nil
		})
		if err != nil {
			return err
		}
		p, warn := Compare(t.name(), t.read, got)
		problems = append(problems, p...)
		if len(warn) > 0 {
			r.printf("warning: %s: %d objects' spec differs from what was read (a conversion's defaults?), e.g.:", t.name(), len(warn))
			for _, w := range warn[:min(3, len(warn))] {
				r.printf("warning:   %s", w)
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("the project's apiserver does not serve what was moved (%d differences):\n%s", len(problems), strings.Join(problems, "\n"))
	}
	return nil
}
