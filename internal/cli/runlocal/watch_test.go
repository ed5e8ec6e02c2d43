package runlocal

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWatchSeesOnlyUserSources: run local --watch rebuilds for the types,
// hooks and other hand-written Go files under pkg/apis, not for generated
// files, tests or editors' temporary files, and not for a file written
// back as it was.
func TestWatchSeesOnlyUserSources(t *testing.T) {
	for path, want := range map[string]bool{
		"pkg/apis/stable/v1/crontab_types.go":                       true,
		"pkg/apis/stable/v1/crontab_hooks.go":                       true,
		"pkg/apis/stable/v1/crontab_conversion.go":                  true,
		"pkg/apis/stable/v1/zz_generated.deepcopy.go":               false,
		"pkg/apis/stable/zz_generated.types.go":                     false,
		"pkg/apis/stable/v1/crontab_types_test.go":                  false,
		"pkg/apis/stable/v1/.crontab_types.go.swp":                  false,
		"pkg/apis/stable/v1/crontab_types.go~":                      false,
		"pkg/apis/stable/v1/#crontab_types.go#":                     false,
		"pkg/apis/stable/v1/.#crontab_types.go":                     false,
		"pkg/apis/stable/v1/4913":                                   false,
		"pkg/apis/stable/v1/fieldnumbers.yaml":                      false,
		"pkg/apis/stable/v1/crontab_types.go.tmp.12345":             false,
		"pkg/apis/stable/v1/crontab_types.go___jb_tmp___":           false,
		"/p/config/crd/bases/stable.example.com_crontabs.yaml":      true,
		"/p/config/crd/standard/stable.example.com_crontabs.yml":    true,
		"/p/config/crd/bases/.stable.example.com_crontabs.yaml.swp": false,
		"/p/config/rbac/role.yaml":                                  false,
	} {
		if got := isWatchedSource(path); got != want {
			t.Errorf("isWatchedSource(%s) = %v, want %v", path, got, want)
		}
	}

	root := t.TempDir()
	apis := filepath.Join(root, "pkg", "apis")
	v1 := filepath.Join(apis, "stable", "v1")
	os.MkdirAll(v1, 0o755)
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(v1, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("crontab_types.go", "package v1\n")
	write("zz_generated.deepcopy.go", "package v1\n")
	before, err := snapshotSources(apis)
	if err != nil {
		t.Fatal(err)
	}
	write("crontab_types.go", "package v1\n")           // written back as it was
	write("zz_generated.deepcopy.go", "package v1\n\n") // generate's
	write(".crontab_types.go.swp", "x")
	after, _ := snapshotSources(apis)
	if got := changedSources(root, before, after); len(got) != 0 {
		t.Errorf("changes seen: %v", got)
	}
	write("crontab_types.go", "package v1\n\ntype X struct{}\n")
	write("crontab_hooks.go", "package v1\n")
	after, _ = snapshotSources(apis)
	want := []string{"pkg/apis/stable/v1/crontab_hooks.go", "pkg/apis/stable/v1/crontab_types.go"}
	if got := changedSources(root, before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("changes seen: %v, want %v", got, want)
	}

	// A kind's CRD manifest is followed once config/crd exists.
	if got := watchedRoots(root); len(got) != 1 {
		t.Errorf("watched without config/crd: %v", got)
	}
	bases := filepath.Join(root, "config", "crd", "bases")
	os.MkdirAll(bases, 0o755)
	manifest := filepath.Join(bases, "stable.example.com_crontabs.yaml")
	os.WriteFile(manifest, []byte("kind: CustomResourceDefinition\n"), 0o644)
	roots := watchedRoots(root)
	if len(roots) != 2 {
		t.Fatalf("watched with config/crd: %v", roots)
	}
	before, _ = snapshotSources(roots...)
	os.WriteFile(manifest, []byte("kind: CustomResourceDefinition\nspec: {}\n"), 0o644)
	after, _ = snapshotSources(roots...)
	want = []string{"config/crd/bases/stable.example.com_crontabs.yaml"}
	if got := changedSources(root, before, after); !reflect.DeepEqual(got, want) {
		t.Errorf("changes seen: %v, want %v", got, want)
	}
}
