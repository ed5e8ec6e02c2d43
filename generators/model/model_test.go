package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/project"
)

func TestMarkerErrorsNameTheLine(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "pkg", "apis", "shop", "v1")
	os.MkdirAll(dir, 0o755)
	os.MkdirAll(filepath.Join(root, "hack"), 0o755)
	os.WriteFile(filepath.Join(root, "hack", "boilerplate.go.txt"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package v1\n\n// +resource:path=as,scope=Galaxy\ntype A struct{}\n"), 0o644)
	_, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
	if err == nil || !strings.Contains(err.Error(), "a_types.go:4") || !strings.Contains(err.Error(), "Namespaced or Cluster") {
		t.Fatalf("want an error at a_types.go:4 naming the valid scopes, got %v", err)
	}
}

func TestUnknownMarkersAreErrorsWithSuggestions(t *testing.T) {
	for _, tc := range []struct{ types, want string }{
		{"// +resoruce:path=as\ntype A struct{}\n", "a_types.go:3:1: unknown marker +resoruce (did you mean +resource?)"},
		{"// +resource:path=as\ntype A struct {\n\t// +kubebuilder:validation:Maximun=3\n\tX int `json:\"x\"`\n}\n", "a_types.go:5:2: unknown marker +kubebuilder:validation:Maximun (did you mean +kubebuilder:validation:Maximum?)"},
		{"// +resource:path=as\n// +printcolumn:name=X,type=text,JSONPath=.spec.x\ntype A struct{}\n", `type="text": want integer, number, string, boolean or date`},
		{"// +resource:path=as\ntype A struct {\n\t// +kubebuilder:validation:MinLength=3\n\tX int `json:\"x\"`\n}\n", ""},
		{"// +resource:path=as\ntype A struct {\n\t// +optional\n\t// +listType=atomic\n\tX []int `json:\"x\"`\n}\n", ""},
	} {
		root := t.TempDir()
		dir := filepath.Join(root, "pkg", "apis", "shop", "v1")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package v1\n\n"+tc.types), 0o644)
		_, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("unexpected error: %v", err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("want an error containing %q, got %v", tc.want, err)
		}
	}
}

func TestStorageVersionMustBeMarkedWithManyVersions(t *testing.T) {
	root := t.TempDir()
	for _, v := range []string{"v1", "v2"} {
		dir := filepath.Join(root, "pkg", "apis", "shop", v)
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package "+v+"\n\n// +resource:path=as\ntype A struct{}\n"), 0o644)
	}
	_, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
	if err == nil || !strings.Contains(err.Error(), "+storageversion") {
		t.Fatalf("want an error asking for +storageversion, got %v", err)
	}
}

// TestVersionPriority: Kubernetes version order unless +versionPriority says otherwise.
func TestVersionPriority(t *testing.T) {
	for _, tc := range []struct {
		priorities map[string]string // version -> doc.go marker
		want       string
	}{
		{map[string]string{}, "v2 v1 v1beta1 v1alpha1"},
		{map[string]string{"v1": "// +versionPriority=10\n"}, "v1 v2 v1beta1 v1alpha1"},
		{map[string]string{"v1beta1": "// +versionPriority=5\n", "v2": "// +versionPriority=-1\n"}, "v1beta1 v1 v1alpha1 v2"},
	} {
		root := t.TempDir()
		for _, v := range []string{"v1alpha1", "v1", "v2", "v1beta1"} {
			dir := filepath.Join(root, "pkg", "apis", "shop", v)
			os.MkdirAll(dir, 0o755)
			storage := ""
			if v == "v1" {
				storage = "// +storageversion\n"
			}
			os.WriteFile(filepath.Join(dir, "doc.go"), []byte(tc.priorities[v]+"package "+v+"\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "a_types.go"), []byte("package "+v+"\n\n// +resource:path=as\n"+storage+"type A struct{}\n"), 0o644)
		}
		api, err := LoadAPI(root, &project.Project{Domain: "example.com", Module: "example.com/shop"}, "x", "")
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range api.Groups[0].Versions {
			got = append(got, v.Name)
		}
		if strings.Join(got, " ") != tc.want || strings.Join(api.Groups[0].Kinds[0].Versions, " ") != tc.want {
			t.Errorf("%v: versions %v, kind versions %v, want %s", tc.priorities, got, api.Groups[0].Kinds[0].Versions, tc.want)
		}
	}
}
