package project

import (
	"k8s.io/apimachinery/pkg/version"
)

// MorePreferred tells whether API version a comes before b in Kubernetes'
// version order: GA before beta before alpha, higher numbers first (v2, v1,
// v1beta2, v1beta1, v1alpha1). Generators order a group's versions with it
// (after +versionPriority); build config's APIServices follow that order.
func MorePreferred(a, b string) bool {
	return version.CompareKubeAwareVersionStrings(a, b) > 0
}
