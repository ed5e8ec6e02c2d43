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

package crontab

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1 "example.com/crontab/pkg/apis/stable/v1"
	"example.com/crontab/pkg/client/clientset/versioned"
	"example.com/crontab/pkg/controller/sharedinformers"
	"github.com/apiserver-boot/apiserver-boot/pkg/testenv"
)

// observedCronTabController reports every object Reconcile handled.
type observedCronTabController struct {
	CronTabControllerImpl
	reconciled chan string
}

func (o *observedCronTabController) Reconcile(u *v1.CronTab) error {
	err := o.CronTabControllerImpl.Reconcile(u)
	o.reconciled <- u.Name
	return err
}

// TestReconcile runs the controller against the apiserver testenv runs in
// this process and checks that Reconcile sees a newly created CronTab.
func TestReconcile(t *testing.T) {
	config := testenv.Config(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	impl := &observedCronTabController{reconciled: make(chan string, 100)}
	c := NewControllerWith(impl)
	si, err := sharedinformers.New(config, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Init(config, si); err != nil {
		t.Fatal(err)
	}
	si.Start(ctx)
	go c.Run(ctx, 1)

	client := versioned.NewForConfigOrDie(config).StableV1().CronTabs("default")
	if _, err := client.Create(ctx, &v1.CronTab{ObjectMeta: metav1.ObjectMeta{Name: "reconcile-me"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(30 * time.Second)
	for {
		select {
		case name := <-impl.reconciled:
			if name == "reconcile-me" {
				return
			}
		case <-deadline:
			t.Fatal("Reconcile did not see reconcile-me within 30s")
		}
	}
}
