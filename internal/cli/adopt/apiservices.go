package adopt

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

const (
	// TempAPIService routes the adoption API to the project's apiserver.
	TempAPIService = adoption.Version + "." + adoption.Group
	managedByLabel = "app.kubernetes.io/managed-by"
	managedBy      = "apiserver-boot"
	// automanagedLabel marks the APIServices kube-apiserver keeps for CRDs.
	automanagedLabel = "kube-aggregator.kubernetes.io/automanaged"
	// The priorities kube-apiserver's CRD registration gives a CRD's APIService.
	crdGroupPriorityMinimum = 1000
	crdVersionPriority      = 100
	// createdAnnotation marks an APIService adopt created (a version the
	// project serves and the CRD did not): --rollback deletes it again.
	createdAnnotation = "adoption.apiserver-boot.io/created"
)

func apiServiceName(group, version string) string { return version + "." + group }

func (r *run) tempAPIService() *apiregv1.APIService {
	svc := r.cfg.Service
	return &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: TempAPIService, Labels: map[string]string{managedByLabel: managedBy}},
		Spec: apiregv1.APIServiceSpec{
			Group: adoption.Group, Version: adoption.Version,
			Service: &svc, CABundle: r.cfg.CABundle,
			GroupPriorityMinimum: 100, VersionPriority: 1,
		},
	}
}

// ensureTempAPIService creates (or corrects) the temporary APIService and
// waits until kube-apiserver finds the project's apiserver behind it.
func (r *run) ensureTempAPIService(ctx context.Context) error {
	api := r.c.Aggregator.ApiregistrationV1().APIServices()
	want := r.tempAPIService()
	cur, err := api.Get(ctx, TempAPIService, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("creating the APIService %s: %w", TempAPIService, err)
		}
	case err != nil:
		return fmt.Errorf("reading the APIService %s: %w", TempAPIService, err)
	case !sameService(cur.Spec.Service, &r.cfg.Service):
		other := "no Service"
		if s := cur.Spec.Service; s != nil {
			other = "the Service " + s.Namespace + "/" + s.Name
		}
		return fmt.Errorf("%w: another adoption is under way: the APIService %s points at %s, not this project's %s/%s; let it finish (or delete that APIService if it is left from a removed project)",
			ErrRefused, TempAPIService, other, r.cfg.Service.Namespace, r.cfg.Service.Name)
	default:
		cur.Spec = want.Spec
		if _, err := api.Update(ctx, cur, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("updating the APIService %s: %w", TempAPIService, err)
		}
	}
	return r.wait(ctx, "the APIService "+TempAPIService+" to be Available (the project's apiserver reachable through kube-apiserver)", func() (bool, string, error) {
		as, err := api.Get(ctx, TempAPIService, metav1.GetOptions{})
		if err != nil {
			return false, "", fmt.Errorf("reading the APIService %s: %w", TempAPIService, err)
		}
		for _, c := range as.Status.Conditions {
			if c.Type == apiregv1.Available {
				return c.Status == apiregv1.ConditionTrue, fmt.Sprintf("Available %s: %s: %s", c.Status, c.Reason, c.Message), nil
			}
		}
		return false, "no Available condition yet", nil
	})
}

func (r *run) removeTempAPIService(ctx context.Context) error {
	err := r.c.Aggregator.ApiregistrationV1().APIServices().Delete(ctx, TempAPIService, metav1.DeleteOptions{})
	if ignoreNotFound(err) != nil {
		return fmt.Errorf("deleting the APIService %s: %w", TempAPIService, err)
	}
	return nil
}

// atService tells whether an APIService routes to the project's apiserver
// and kube-apiserver's CRD registration has let go of it.
func (r *run) atService(as *apiregv1.APIService) bool {
	if as == nil {
		return false
	}
	_, auto := as.Labels[automanagedLabel]
	return sameService(as.Spec.Service, &r.cfg.Service) && !auto
}

// pointAtProject makes a group version's APIService the config's: at the
// project's Service, without the automanaged label (created if missing).
func (r *run) pointAtProject(ctx context.Context, want *apiregv1.APIService) error {
	api := r.c.Aggregator.ApiregistrationV1().APIServices()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := api.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: want.Name, Labels: maps.Clone(want.Labels), Annotations: map[string]string{createdAnnotation: "true"}}, Spec: want.Spec}
			_, err = api.Create(ctx, as, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		maps.Copy(cur.Labels, want.Labels)
		delete(cur.Labels, automanagedLabel)
		cur.Spec = want.Spec
		_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// pointLocal gives a group version's APIService back to kube-apiserver (its
// CRD): no service, the automanaged label, a CRD's priorities.
func (r *run) pointLocal(ctx context.Context, group, version string) error {
	api := r.c.Aggregator.ApiregistrationV1().APIServices()
	name := apiServiceName(group, version)
	spec := apiregv1.APIServiceSpec{Group: group, Version: version, GroupPriorityMinimum: crdGroupPriorityMinimum, VersionPriority: crdVersionPriority}
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := api.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			as := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{automanagedLabel: "true"}}, Spec: spec}
			_, err = api.Create(ctx, as, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		cur.Labels[automanagedLabel] = "true"
		cur.Spec = spec
		_, err = api.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
}

// getAPIService is nil when the APIService does not exist.
func (r *run) getAPIService(ctx context.Context, name string) (*apiregv1.APIService, error) {
	as, err := r.c.Aggregator.ApiregistrationV1().APIServices().Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the APIService %s: %w", name, err)
	}
	return as, nil
}

// projectVersions are the group versions whose APIServices the switch
// points at the project: the config's.
func (r *run) projectVersions(group string) []string { return r.cfg.Versions(group) }

// servedBefore are the versions a CRD served before the switch (now, or as
// the switch recorded them).
func servedBefore(t *target) []string {
	if v := servedVersions(t.crd); len(v) > 0 {
		return v
	}
	return recordedServed(t.crd)
}

// crdGroupVersions are the versions of the group any of its CRDs serves or served.
func (r *run) crdGroupVersions(group string) []string {
	var out []string
	for _, t := range r.targetsOf(group) {
		for _, v := range servedBefore(t) {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// removeCreated deletes the APIServices of group g that adopt created for
// versions its CRDs do not serve: after a rollback the project's copies
// behind them are stale, and before the adoption those versions were not
// served at all. APIServices of such versions that existed before (build
// config's) are left as they are.
func (r *run) removeCreated(ctx context.Context, g string) error {
	api := r.c.Aggregator.ApiregistrationV1().APIServices()
	for _, v := range r.projectVersions(g) {
		if slices.Contains(r.crdGroupVersions(g), v) {
			continue
		}
		as, err := api.Get(ctx, apiServiceName(g, v), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		} else if err != nil {
			return err
		}
		if as.Annotations[createdAnnotation] != "true" {
			continue
		}
		if err := api.Delete(ctx, as.Name, metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
			return fmt.Errorf("deleting the APIService %s that adopt created: %w", as.Name, err)
		}
	}
	return nil
}
