package adopt

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
)

type summary struct{ total, created, updated, deleted int }

func retriable(err error) bool {
	return apierrors.IsNotFound(err) || apierrors.IsServiceUnavailable(err)
}

// apply writes a rollback's changes to the CRD's objects.
func (r *run) apply(ctx context.Context, t *target, changes []Change, sum *summary) error {
	sum.total += len(t.read)
	for _, c := range changes {
		var err error
		switch {
		case c.Have == nil:
			err = r.create(ctx, t, c.Want)
			sum.created++
		case c.Want == nil:
			err = r.remove(ctx, t, c.Have)
			sum.deleted++
		default:
			err = r.update(ctx, t, c.Want, c.Have)
			sum.updated++
		}
		if err != nil {
			return fmt.Errorf("writing %s %s back to the CRD: %w", t.name(), c.key(), err)
		}
	}
	return nil
}

func (r *run) client(t *target, ns string) dynamic.ResourceInterface {
	return r.c.Dynamic.Resource(t.gvr()).Namespace(ns)
}

// create makes an object created after the switch again: its uid is new.
func (r *run) create(ctx context.Context, t *target, want *unstructured.Unstructured) error {
	obj := want.DeepCopy()
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"} {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	created, err := r.client(t, obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	r.printf("new uid: %s %s (was %s, now %s)", t.name(), objKey(want), want.GetUID(), created.GetUID())
	if err := r.writeStatus(ctx, t, created, want); err != nil {
		return err
	}
	return r.deleteIfPending(ctx, t, want, created)
}

// update writes the project's copy over the CRD's, keeping the identity
// the CRD assigned.
func (r *run) update(ctx context.Context, t *target, want, have *unstructured.Unstructured) error {
	obj := want.DeepCopy()
	obj.SetUID(have.GetUID())
	obj.SetResourceVersion(have.GetResourceVersion())
	obj.SetCreationTimestamp(have.GetCreationTimestamp())
	obj.SetDeletionTimestamp(have.GetDeletionTimestamp())
	obj.SetDeletionGracePeriodSeconds(have.GetDeletionGracePeriodSeconds())
	unstructured.RemoveNestedField(obj.Object, "metadata", "generation")
	updated, err := r.client(t, obj.GetNamespace()).Update(ctx, obj, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) && have.GetDeletionTimestamp() != nil {
		return nil // the finalizers the update removed let the deletion finish
	}
	if err != nil {
		return err
	}
	if want.GetUID() != have.GetUID() {
		r.printf("new uid: %s %s (was %s, now %s)", t.name(), objKey(want), want.GetUID(), have.GetUID())
	}
	if err := r.writeStatus(ctx, t, updated, want); err != nil {
		return err
	}
	return r.deleteIfPending(ctx, t, want, updated)
}

// writeStatus sets the status through /status when the CRD has that
// subresource (the main resource's writes ignore it there).
func (r *run) writeStatus(ctx context.Context, t *target, cur, want *unstructured.Unstructured) error {
	status, ok, _ := unstructured.NestedFieldNoCopy(want.Object, "status")
	have, _, _ := unstructured.NestedFieldNoCopy(cur.Object, "status")
	if !ok || !t.hasStatus() || equality.Semantic.DeepEqual(status, have) {
		return nil
	}
	obj := cur.DeepCopy()
	if err := unstructured.SetNestedField(obj.Object, status, "status"); err != nil {
		return err
	}
	_, err := r.client(t, obj.GetNamespace()).UpdateStatus(ctx, obj, metav1.UpdateOptions{})
	return err
}

// deleteIfPending deletes cur when want is pending deletion and cur not.
func (r *run) deleteIfPending(ctx context.Context, t *target, want, cur *unstructured.Unstructured) error {
	if want.GetDeletionTimestamp() == nil || cur.GetDeletionTimestamp() != nil {
		return nil
	}
	uid := cur.GetUID()
	err := r.client(t, cur.GetNamespace()).Delete(ctx, cur.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	return ignoreNotFound(err)
}

// remove deletes an object deleted on the project's side: its finalizers
// ran there, so they are dropped here.
func (r *run) remove(ctx context.Context, t *target, have *unstructured.Unstructured) error {
	c := r.client(t, have.GetNamespace())
	if len(have.GetFinalizers()) > 0 {
		obj := have.DeepCopy()
		obj.SetFinalizers(nil)
		if _, err := c.Update(ctx, obj, metav1.UpdateOptions{}); ignoreNotFound(err) != nil {
			return err
		}
	}
	uid := have.GetUID()
	return ignoreNotFound(c.Delete(ctx, have.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}))
}
