package upgrade

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const oldHooks = `package v1

// Validate checks a CronTab.
func Validate() error {
	return nil
}

// Default fills in defaults.
func Default() {}
`

func TestDecide(t *testing.T) {
	userEdit := strings.Replace(oldHooks, "return nil", "return check()", 1)
	newScaffold := strings.Replace(oldHooks, "// Default fills in defaults.", "// Default fills in what the client left out.", 1)
	newConflicting := strings.Replace(oldHooks, "// Default fills in defaults.", "// Default is today's.", 1)
	for _, c := range []struct {
		name               string
		base, ours, theirs Version
		want               Action
		content            string
	}{
		{"never edited, scaffold changed", Version(oldHooks), Version(oldHooks), Version(newScaffold), Update, newScaffold},
		{"never edited, scaffold unchanged", Version(oldHooks), Version(oldHooks), Version(oldHooks), Keep, ""},
		{"edited, scaffold unchanged", Version(oldHooks), Version(userEdit), Version(oldHooks), Keep, ""},
		{"edited apart from the scaffold's change", Version(oldHooks), Version(userEdit), Version(newScaffold),
			Merge, strings.Replace(newScaffold, "return nil", "return check()", 1)},
		{"the same change on both sides", Version(oldHooks), Version(newScaffold), Version(newScaffold), Keep, ""},
		{"new in today's scaffold", nil, nil, Version(newScaffold), Add, newScaffold},
		{"deleted by the user", Version(oldHooks), nil, Version(newScaffold), Deleted, ""},
		{"deleted, and no longer scaffolded", Version(oldHooks), nil, nil, Deleted, ""},
		{"no longer scaffolded", Version(oldHooks), Version(userEdit), nil, Dropped, ""},
		{"the user's file where the old scaffold had none", nil, Version(userEdit), Version(newScaffold), Unrecorded, ""},
		{"empty file kept", Version{}, Version{}, Version{}, Keep, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Decide("hooks.go", c.base, c.ours, c.theirs)
			if err != nil {
				t.Fatal(err)
			}
			if f.Action != c.want || string(f.Content) != c.content {
				t.Errorf("got %s:\n%s\nwant %s:\n%s", f.Action, f.Content, c.want, c.content)
			}
			if f.Action.Writes() != (c.content != "") {
				t.Errorf("%s writes: %v", f.Action, f.Action.Writes())
			}
		})
	}

	t.Run("conflict", func(t *testing.T) {
		ours := strings.Replace(userEdit, "// Default fills in defaults.", "// Default is mine.", 1)
		f, err := Decide("pkg/hooks.go", Version(oldHooks), Version(ours), Version(newConflicting))
		if err != nil {
			t.Fatal(err)
		}
		got := string(f.Content)
		if f.Action != Conflict || f.Conflicts != 1 {
			t.Fatalf("got %s with %d conflicts:\n%s", f.Action, f.Conflicts, got)
		}
		for _, want := range []string{
			"return check()", // the user's change that does not conflict is kept
			"<<<<<<< pkg/hooks.go (yours)\n// Default is mine.\n",
			"||||||| pkg/hooks.go (old scaffold)\n// Default fills in defaults.\n",
			"=======\n// Default is today's.\n>>>>>>> pkg/hooks.go (new scaffold)\n",
		} {
			if !strings.Contains(got, want) {
				t.Errorf("merged file lacks %q:\n%s", want, got)
			}
		}
	})
}

func TestPlanReadsTheProject(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("Makefile", "old\n")
	write("pkg/a.go", "mine\n")
	write("empty", "")
	base := map[string][]byte{"Makefile": []byte("old\n"), "pkg/a.go": []byte("a\n"), "gone": []byte("x\n"), "empty": nil}
	theirs := map[string][]byte{"Makefile": []byte("new\n"), "pkg/a.go": []byte("a\n"), "gone": []byte("x\n"), "added": []byte("n\n"), "empty": nil}
	files, err := Plan(root, base, theirs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.Path+":"+string(f.Action))
	}
	if want := "Makefile:update added:add empty:keep gone:deleted pkg/a.go:keep"; strings.Join(got, " ") != want {
		t.Errorf("got %s, want %s", strings.Join(got, " "), want)
	}
}
