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
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	v1 "example.com/crontab/pkg/apis/stable/v1"
	"example.com/crontab/pkg/controller/sharedinformers"
)

// CronTabControllerImpl reconciles CronTab objects. Generated code in
// this package feeds it from an informer through a rate-limited work queue
// and registers it with the controller-manager.
type CronTabControllerImpl struct {
	// Add the clients and listers Reconcile needs; set them in Init.
}

// Init is called once before the first Reconcile: create clients here and
// watch other resources through si, adding keys to queue.
func (c *CronTabControllerImpl) Init(config *rest.Config, si *sharedinformers.SharedInformers, queue workqueue.TypedRateLimitingInterface[string]) {
}

// Reconcile drives the world towards the object's current spec. It is level
// based: it gets only the current object, never the previous one, and may be
// called any number of times. Return an error to retry with back-off. u is
// the informer's cached object: DeepCopy it before changing it.
//
// Deletion: to act before an object goes away, add a finalizer when it is
// created (for kinds of this project: in the strategy's PrepareForCreate):
//
//	controllers.AddFinalizer(obj, "example.com/cleanup")
//
// Deleting the object then sets metadata.deletionTimestamp and calls Reconcile:
//
//	if controllers.BeingDeleted(u) {
//		// clean up what the object owns outside the cluster, then:
//		u = u.DeepCopy()
//		controllers.RemoveFinalizer(u, "example.com/cleanup")
//		return c.update(u) // through the clientset you set up in Init
//	}
func (c *CronTabControllerImpl) Reconcile(u *v1.CronTab) error {
	klog.InfoS("Reconciling CronTab", "namespace", u.Namespace, "name", u.Name, "generation", u.Generation)
	return nil
}
