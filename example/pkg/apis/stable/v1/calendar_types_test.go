/*
Copyright 2026 The apiserver-boot Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1_test

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "example.com/crontab/pkg/apis/stable/v1"
	"example.com/crontab/pkg/client/clientset/versioned"
	"github.com/apiserver-boot/apiserver-boot/pkg/testenv"
)

// TestCalendar creates, reads, updates and deletes a Calendar through the
// typed client, against the apiserver testenv runs in this process.
func TestCalendar(t *testing.T) {
	ctx := context.Background()
	client := versioned.NewForConfigOrDie(testenv.Config(t)).StableV1().Calendars()

	created, err := client.Create(ctx, &v1.Calendar{
		ObjectMeta: metav1.ObjectMeta{Name: "test-calendar"},
		Spec:       v1.CalendarSpec{Replicas: 1},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.Generation != 1 {
		t.Errorf("generation = %d, want 1", created.Generation)
	}

	got, err := client.Get(ctx, created.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Spec.Replicas = 2
	updated, err := client.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if updated.Spec.Replicas != 2 || updated.Generation != 2 {
		t.Errorf("after update: replicas %d generation %d, want 2 and 2", updated.Spec.Replicas, updated.Generation)
	}

	// The Validate hook in calendar_hooks.go refuses negative replicas.
	_, err = client.Create(ctx, &v1.Calendar{
		ObjectMeta: metav1.ObjectMeta{Name: "invalid-calendar"},
		Spec:       v1.CalendarSpec{Replicas: -1},
	}, metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("want an Invalid error for negative replicas, got %v", err)
	}

	if err := client.Delete(ctx, created.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Get(ctx, created.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: want NotFound, got %v", err)
	}
}
