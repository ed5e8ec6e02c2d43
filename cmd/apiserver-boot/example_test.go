package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators"
)

// TestExampleIsUpToDate scaffolds example/ again from scratch, as `make
// example` does, and fails on any difference: templates and generators may
// not change without example/ being regenerated (and reviewed) with them.
func TestExampleIsUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	example, _ := filepath.Abs(filepath.Join("..", "..", "example"))
	dir := t.TempDir()
	for _, args := range [][]string{
		{"init", "repo", "--module", "example.com/crontab", "--domain", "example.com", "--owner", "The apiserver-boot Authors"},
		{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"},
		{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Calendar", "--non-namespaced", "--controller=false"},
		{"create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1"},
	} {
		if out, err := run(t, dir, args...); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	want, got := projectFiles(t, example), projectFiles(t, dir)
	for path := range want {
		if _, ok := got[path]; !ok {
			t.Errorf("example/%s is no longer generated (run make example)", path)
		}
	}
	for path, content := range got {
		old, ok := want[path]
		switch {
		case !ok:
			t.Errorf("%s is generated but missing from example/ (run make example)", path)
		case !bytes.Equal(old, content):
			t.Errorf("example/%s is out of date (run make example and review the diff)", path)
		}
	}
}

var (
	year    = regexp.MustCompile(`Copyright \d{4} `)
	replace = regexp.MustCompile(`(?m)^replace github.com/apiserver-boot/apiserver-boot => .*$`)
)

// projectFiles reads a project's files, leaving out local state and
// normalising what legitimately differs: the copyright year and where the
// replace directive points (relative in example/, absolute elsewhere).
func projectFiles(t *testing.T, root string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			// Recorded releases (api snapshot) are history, not regenerated.
			if rel == "bin" || rel == ".apiserver-boot" || rel == filepath.FromSlash(generators.SnapshotsDir) {
				return filepath.SkipDir
			}
			return nil
		}
		if rel == "kubeconfig" {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = year.ReplaceAll(b, []byte("Copyright YEAR "))
		b = replace.ReplaceAll(b, []byte("replace github.com/apiserver-boot/apiserver-boot => CHECKOUT"))
		out[rel] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("no files in %s", root)
	}
	return out
}
