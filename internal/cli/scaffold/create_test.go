package scaffold

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// newRoot writes a project Repo scaffolds, applied, and returns its root.
func newRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	plan, err := Repo(root, RepoOptions{Domain: "example.com", Module: "example.com/crontab", License: "apache2", Year: 2026})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plan.Apply(); err != nil {
		t.Fatal(err)
	}
	return root
}

// loaded reads the project at root as a command does.
func loaded(t *testing.T, root string) (*project.Project, *model.API) {
	t.Helper()
	p, err := project.Load(root)
	if err != nil {
		t.Fatal(err)
	}
	api, err := model.LoadAPI(root, p, version.Module, "")
	if err != nil {
		t.Fatal(err)
	}
	api.Describe(p)
	return p, api
}

func paths(plan *Plan) []string {
	var out []string
	for _, f := range plan.Files {
		out = append(out, filepath.ToSlash(f.Path))
	}
	return out
}

// TestCreatePlans: the files a kind gets, without a command: types, hooks,
// tests, a controller and PROJECT for a new kind; for the same kind in a
// second version, the storage marker on the first and neither hooks nor a
// controller, which a note says when --controller was not given.
func TestCreatePlans(t *testing.T) {
	root := newRoot(t)
	p, api := loaded(t, root)
	o := CreateOptions{Level: LevelResource, Group: "stable", Version: "v1", Kind: "CronTab", Status: true, Controller: true}
	plan, err := Create(root, p, api, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pkg/apis/stable/doc.go", "pkg/apis/stable/v1/doc.go", "pkg/apis/stable/v1/crontab_types.go", "pkg/apis/stable/v1/crontab_hooks.go",
		"pkg/apis/stable/v1/crontab_types_test.go", "pkg/controller/crontab/controller.go", "pkg/controller/crontab/controller_test.go", "PROJECT"}
	if got := paths(plan); !slices.Equal(got, want) {
		t.Errorf("files of a new kind:\n got %v\nwant %v", got, want)
	}
	if len(plan.Notes) != 0 {
		t.Errorf("notes for a new kind: %v", plan.Notes)
	}
	if _, err := plan.Apply(); err != nil {
		t.Fatal(err)
	}

	p, api = loaded(t, root)
	o.Version = "v2"
	plan, err = Create(root, p, api, o)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"pkg/apis/stable/doc.go", "pkg/apis/stable/v2/doc.go", "pkg/apis/stable/v1/crontab_types.go", "pkg/apis/stable/v2/crontab_types.go",
		"pkg/apis/stable/v2/crontab_types_test.go", "PROJECT"}
	if got := paths(plan); !slices.Equal(got, want) {
		t.Errorf("files of a second version:\n got %v\nwant %v", got, want)
	}
	if len(plan.Notes) != 1 || !strings.Contains(plan.Notes[0], "none added for v2") {
		t.Errorf("want a note that no controller is added, got %v", plan.Notes)
	}
	if !strings.Contains(string(plan.Files[2].Content), "// +storageversion\n") {
		t.Errorf("v1 is not marked +storageversion:\n%s", plan.Files[2].Content)
	}
	if r := p.Find("stable", "v2", "CronTab"); r == nil || r.Controller {
		t.Errorf("PROJECT should record v2 without a controller: %+v", r)
	}

	// One controller per kind: v1's.
	if _, err := Controller(root, p, "stable", "v2", "CronTab"); err == nil || !strings.Contains(err.Error(), "--kind CronTab already has a controller (for stable/v1)") {
		t.Errorf("a second controller of CronTab: want an error naming v1's, got %v", err)
	}
	p, api = loaded(t, root)
	o.Version, o.Given = "v3", func(flag string) bool { return flag == "controller" }
	if _, err := Create(root, p, api, o); err == nil || !strings.Contains(err.Error(), "pass --controller=false") {
		t.Errorf("--controller for a kind with one: want an error naming --controller=false, got %v", err)
	}
}

// TestControllerOfABuiltinKind: a built-in kind gets a controller without
// a test, and PROJECT records it with its package; an unknown kind is an
// error naming the flags.
func TestControllerOfABuiltinKind(t *testing.T) {
	root := newRoot(t)
	p, _ := loaded(t, root)
	plan, err := Controller(root, p, "apps", "v1", "Deployment")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := paths(plan), []string{"pkg/controller/deployment/controller.go", "PROJECT"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if r := p.Find("apps", "v1", "Deployment"); r == nil || !r.External || r.Package != "k8s.io/api/apps/v1" || !r.Controller {
		t.Errorf("PROJECT should record the built-in kind: %+v", r)
	}
	if _, err := Controller(root, p, "apps", "v1", "Nothing"); err == nil || !strings.Contains(err.Error(), "--kind Nothing is neither") {
		t.Errorf("want an error naming --kind, got %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(root, "pkg", "controller")); len(entries) != 1 {
		t.Errorf("a plan writes nothing until applied: %v", entries)
	}
}
