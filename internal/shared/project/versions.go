package project

import (
	"fmt"
	"strings"

	utilversion "k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/version"
)

// MorePreferred tells whether API version a comes before b in Kubernetes'
// version order: GA before beta before alpha, higher numbers first (v2, v1,
// v1beta2, v1beta1, v1alpha1). Generators order a group's versions with it
// (after +versionPriority); build config's APIServices follow that order.
func MorePreferred(a, b string) bool {
	return version.CompareKubeAwareVersionStrings(a, b) > 0
}

// WriteFixturesEnv names the folder `apiserver-boot api snapshot` has the
// generated TestCompatibility (pkg/conformance) write the fixtures of today's
// code into, instead of checking them.
const WriteFixturesEnv = "APISERVER_BOOT_WRITE_FIXTURES"

// ReleaseLess orders the names of recorded releases (api snapshot) oldest
// first: semantic versions in version order, anything else after them by name.
func ReleaseLess(a, b string) bool {
	va, errA := utilversion.ParseSemantic(a)
	vb, errB := utilversion.ParseSemantic(b)
	switch {
	case errA == nil && errB == nil:
		return va.LessThan(vb)
	case errA == nil || errB == nil:
		return errA == nil
	}
	return a < b
}

// ValidateRelease checks a release name for api snapshot: a semantic version
// with a leading v (v0.2.0), so that releases order as versions.
func ValidateRelease(name string) error {
	if !strings.HasPrefix(name, "v") {
		return fmt.Errorf("release %q: want a semantic version with a leading v, such as v0.2.0", name)
	}
	if _, err := utilversion.ParseSemantic(name); err != nil {
		return fmt.Errorf("release %q is not a semantic version such as v0.2.0: %v", name, err)
	}
	return nil
}
