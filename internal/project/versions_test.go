package project

import (
	"reflect"
	"testing"
)

func TestSortVersions(t *testing.T) {
	got := []string{"v1alpha1", "v1", "v2beta1", "v1beta1", "v2", "v1beta2", "v10"}
	SortVersions(got)
	want := []string{"v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestServedVersions(t *testing.T) {
	p := &Project{Domain: "example.com", Resources: []*Resource{
		{Group: "stable", Version: "v1", Kind: "CronTab"},
		{Group: "stable", Version: "v2", Kind: "CronTab"},
		{Group: "stable", Version: "v1beta1", Kind: "Calendar"},
		{Group: "batch", Version: "v1alpha1", Kind: "Job"},
		{Group: "apps", Version: "v1", Kind: "Deployment", External: true},
	}}
	want := map[string][]string{
		"stable.example.com": {"v2", "v1", "v1beta1"},
		"batch.example.com":  {"v1alpha1"},
	}
	if got := p.ServedVersions(); !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
