package project

import (
	"reflect"
	"sort"
	"testing"
)

func TestMorePreferred(t *testing.T) {
	got := []string{"v1alpha1", "v1", "v2beta1", "v1beta1", "v2", "v1beta2", "v10"}
	sort.Slice(got, func(i, j int) bool { return MorePreferred(got[i], got[j]) })
	want := []string{"v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestValidateRelease(t *testing.T) {
	for name, ok := range map[string]bool{"v0.2.0": true, "v1.0.0-rc.1": true, "0.2.0": false, "v0.2": false, "release-1": false} {
		if err := ValidateRelease(name); (err == nil) != ok {
			t.Errorf("ValidateRelease(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}
