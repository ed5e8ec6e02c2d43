package scaffold

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeepsEditedFilesUnlessForced(t *testing.T) {
	root := t.TempDir()
	files := func() []File {
		return []File{{Path: "a.go", Content: []byte("package a\nvar X=1\n")}, {Path: "b.txt", Content: []byte("b\n")}}
	}
	rep, err := (&Plan{Root: root, Files: files()}).Apply()
	if err != nil || len(rep.Written) != 2 {
		t.Fatalf("first apply: %v %+v", err, rep)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a.go")); string(b) != "package a\n\nvar X = 1\n" {
		t.Errorf("Go file not gofmt-ed: %q", b)
	}
	// Same content again: nothing to do.
	rep, _ = (&Plan{Root: root, Files: files()}).Apply()
	if rep.Changed() || len(rep.Unchanged) != 2 {
		t.Errorf("re-apply should be a no-op: %+v", rep)
	}
	// The user edits b.txt: it is kept, and reported.
	os.WriteFile(filepath.Join(root, "b.txt"), []byte("mine\n"), 0o644)
	rep, _ = (&Plan{Root: root, Files: files()}).Apply()
	if len(rep.Skipped) != 1 || rep.Skipped[0] != "b.txt" {
		t.Errorf("edited file should be skipped: %+v", rep)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(b) != "mine\n" {
		t.Errorf("edited file overwritten")
	}
	rep, _ = (&Plan{Root: root, Files: files(), Force: true}).Apply()
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(b) != "b\n" || len(rep.Written) != 1 {
		t.Errorf("--force should overwrite: %+v", rep)
	}
	if err := rep.Undo(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "b.txt")); string(b) != "mine\n" {
		t.Errorf("Undo should restore the user's content, got %q", b)
	}
}

func TestInvalidGoWritesNothing(t *testing.T) {
	root := t.TempDir()
	_, err := (&Plan{Root: root, Files: []File{
		{Path: "ok.txt", Content: []byte("fine\n")},
		{Path: "bad.go", Content: []byte("package bad\nfunc {\n")},
	}}).Apply()
	if err == nil || !strings.Contains(err.Error(), "bad.go") {
		t.Fatalf("want an error naming bad.go, got %v", err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("files written despite the error: %v", entries)
	}
}
