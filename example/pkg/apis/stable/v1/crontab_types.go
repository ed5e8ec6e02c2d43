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

package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronTab is the Schema for the crontabs API.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +resource:path=crontabs,strategy=CronTabStrategy,scope=Namespaced
// +storageversion
// +subresource:status
type CronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CronTabSpec   `json:"spec,omitempty"`
	Status CronTabStatus `json:"status,omitempty"`
}

// CronTabSpec is the desired state of a CronTab.
type CronTabSpec struct {
	// Replicas is the desired number of instances.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
}

// CronTabStatus is the observed state of a CronTab, written by its controller.
type CronTabStatus struct {
	// Replicas is the observed number of instances.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Conditions are the latest observations of the object's state.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CronTabList is a list of CronTab objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type CronTabList struct {
	metav1.TypeMeta `json:",inline"`
	// The protobuf tags are those of Kubernetes' own lists, under which the
	// apiserver streams a protobuf LIST item by item.
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []CronTab `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// Hooks. CronTabStrategy and CronTabSchemeFns are generated in
// zz_generated.register.go. Declare any of the methods below on them, anywhere
// in this package, to override the default; the rest keep it. Status is
// always dropped from writes to the main resource (it goes through /status)
// and metadata.generation always counts spec changes, whatever the hooks do.
// The strategy hooks receive the internal type stable.CronTab
// (import "example.com/crontab/pkg/apis/stable"); a runtime.Object argument
// works too.
//
//	// DefaultingFunction sets defaults on the versioned object, on every read and write.
//	func (CronTabSchemeFns) DefaultingFunction(o interface{}) {
//		obj := o.(*CronTab)
//		if obj.Spec.Replicas == 0 {
//			obj.Spec.Replicas = 1
//		}
//	}
//
//	// PrepareForCreate adjusts a new object before validation, e.g. to add a finalizer.
//	func (*CronTabStrategy) PrepareForCreate(ctx context.Context, obj *stable.CronTab) {}
//
//	// PrepareForUpdate adjusts an update before validation.
//	func (*CronTabStrategy) PrepareForUpdate(ctx context.Context, obj, old *stable.CronTab) {}
//
//	// Validate and ValidateUpdate are in crontab_hooks.go.
//
//	// Canonicalize normalises an object before it is stored.
//	func (*CronTabStrategy) Canonicalize(obj *stable.CronTab) {}
