package controllers

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Finalizers let a controller act before an object goes away: add one when
// the object is created (in the strategy's PrepareForCreate); deleting the
// object then only sets metadata.deletionTimestamp, Reconcile sees it, cleans
// up, and removes the finalizer (an update), after which the object is gone.

// hasFinalizer tells whether obj carries finalizer.
func hasFinalizer(obj metav1.Object, finalizer string) bool {
	for _, f := range obj.GetFinalizers() {
		if f == finalizer {
			return true
		}
	}
	return false
}

// AddFinalizer adds finalizer to obj unless present; it reports whether obj changed.
func AddFinalizer(obj metav1.Object, finalizer string) bool {
	if hasFinalizer(obj, finalizer) {
		return false
	}
	obj.SetFinalizers(append(obj.GetFinalizers(), finalizer))
	return true
}

// RemoveFinalizer removes finalizer from obj; it reports whether obj changed.
func RemoveFinalizer(obj metav1.Object, finalizer string) bool {
	var kept []string
	for _, f := range obj.GetFinalizers() {
		if f != finalizer {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(obj.GetFinalizers()) {
		return false
	}
	obj.SetFinalizers(kept)
	return true
}

// BeingDeleted tells whether deletion of obj has been requested.
func BeingDeleted(obj metav1.Object) bool { return obj.GetDeletionTimestamp() != nil }
