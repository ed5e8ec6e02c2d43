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

// Package v2 is version v2 of the stable.example.com API group.
//
// +k8s:deepcopy-gen=package
// +k8s:conversion-gen=example.com/crontab/pkg/apis/stable
// +k8s:defaulter-gen=TypeMeta
// +k8s:openapi-gen=true
// +k8s:openapi-model-package=com.example.crontab.pkg.apis.stable.v2
// +groupName=stable.example.com
package v2
