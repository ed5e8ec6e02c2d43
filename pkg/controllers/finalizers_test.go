package controllers

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestFinalizers(t *testing.T) {
	obj := &metav1.ObjectMeta{Finalizers: []string{"other"}}
	if !AddFinalizer(obj, "example.com/cleanup") || AddFinalizer(obj, "example.com/cleanup") {
		t.Fatal("AddFinalizer should change the object once")
	}
	if !hasFinalizer(obj, "example.com/cleanup") || len(obj.Finalizers) != 2 {
		t.Fatalf("finalizers: %v", obj.Finalizers)
	}
	if !RemoveFinalizer(obj, "example.com/cleanup") || RemoveFinalizer(obj, "example.com/cleanup") {
		t.Fatal("RemoveFinalizer should change the object once")
	}
	if len(obj.Finalizers) != 1 || obj.Finalizers[0] != "other" {
		t.Fatalf("other finalizers must stay: %v", obj.Finalizers)
	}
	if BeingDeleted(obj) {
		t.Fatal("no deletionTimestamp set")
	}
}
