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
