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
	"context"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"example.com/crontab/pkg/apis/stable"
)

// Validate returns the field errors of a new Calendar; kubectl shows them as
// 422 Invalid. The other hooks are described in calendar_types.go.
func (*CalendarStrategy) Validate(ctx context.Context, obj *stable.Calendar) field.ErrorList {
	var errs field.ErrorList
	if obj.Spec.Replicas < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "replicas"), obj.Spec.Replicas, "must be greater than or equal to 0"))
	}
	return errs
}

// ValidateUpdate applies the same rules to updates.
func (s *CalendarStrategy) ValidateUpdate(ctx context.Context, obj, old *stable.Calendar) field.ErrorList {
	return s.Validate(ctx, obj)
}
