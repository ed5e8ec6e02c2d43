package main

import (
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// countLoads counts the model loads of the commands run until the test ends.
func countLoads(t *testing.T) *int {
	t.Helper()
	n := new(int)
	orig := loadModel
	loadModel = func(root string, p *project.Project) (*model.API, error) {
		*n++
		return orig(root, p)
	}
	t.Cleanup(func() { loadModel = orig })
	return n
}

// loadsOf runs a command and returns how many times it read the model
// (the generate that follows a scaffold reads the files it wrote, and is
// not counted here).
func loadsOf(t *testing.T, n *int, dir string, wantErr bool, args ...string) int {
	t.Helper()
	*n = 0
	out, err := run(t, dir, args...)
	if (err != nil) != wantErr {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return *n
}

// TestModelLoadedOnce: every command reads the project's API from source
// once, and passes what it read to each step that needs it.
func TestModelLoadedOnce(t *testing.T) {
	n := countLoads(t)
	dir := deployProject(t)
	for _, c := range []struct {
		args    []string
		wantErr bool // fails after the load: no cluster here
	}{
		{[]string{"build", "config", "--image", "registry.example.com/crontab:v1"}, false},
		{[]string{"migrate", "storage", "--kubeconfig", "missing.kubeconfig"}, true},
	} {
		if got := loadsOf(t, n, dir, c.wantErr, c.args...); got != 1 {
			t.Errorf("%s read the model %d times, want once", strings.Join(c.args, " "), got)
		}
	}
	if testing.Short() {
		return
	}
	dir = newProject(t)
	for _, args := range [][]string{
		{"create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v1", "--kind", "CronTab"},
		{"create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1"},
		{"create", "group", "version", "resource", "--group", "stable", "--version", "v1beta1", "--kind", "CronTab"},
	} {
		if got := loadsOf(t, n, dir, false, args...); got != 1 {
			t.Errorf("%s read the model %d times, want once", strings.Join(args, " "), got)
		}
	}
}
