// Package upgrade decides what `apiserver-boot upgrade` does to a project
// (Prepare): the project's scaffold is replayed with the apiserver-boot that
// made it and with this one (replay.go); for each scaffolded file, the
// scaffold the project was made with, the user's file and today's scaffold
// are compared, and the file is kept, re-rendered, added or merged three
// ways, as git merges (git merge-file), conflict markers included (this
// file); go.mod gets this apiserver-boot's requirements and PROJECT its
// release (change.go).
package upgrade

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// Action is what upgrade does with one file.
type Action string

const (
	// Keep leaves the file as it is: already today's scaffold, or the
	// user's edits over a scaffold that did not change.
	Keep Action = "keep"
	// Update writes today's scaffold over a file the user never edited.
	Update Action = "update"
	// Merge writes the three-way merge of the user's edits and the
	// scaffold's changes, which did not overlap.
	Merge Action = "merge"
	// Conflict writes the merge with conflict markers where the user's
	// edits and the scaffold's changes overlap.
	Conflict Action = "conflict"
	// Add writes a file today's scaffold has and the old one had not.
	Add Action = "add"
	// Deleted leaves out a scaffolded file the user deleted.
	Deleted Action = "deleted"
	// Unrecorded leaves alone a file at a path today's scaffold writes but
	// the old scaffold did not, which the project holds with other content:
	// there is no base to merge from, and the file is the user's.
	Unrecorded Action = "unrecorded"
	// Dropped leaves alone a file the old scaffold wrote and today's no
	// longer does.
	Dropped Action = "dropped"
)

// Writes tells whether the action writes the file.
func (a Action) Writes() bool { return a == Update || a == Merge || a == Conflict || a == Add }

// Version is one side of the merge: a file's content, or nil when the
// file is absent.
type Version []byte

// File is the decision for one file.
type File struct {
	Path   string
	Action Action
	// Content is what is written (for actions that write).
	Content []byte
	// Conflicts counts the conflicting hunks.
	Conflicts int
}

// Decide classifies one file from the old scaffold's content (base), the
// user's (ours) and today's scaffold's (theirs); nil is absent. Contents
// that differ only in their line ends are compared as they are.
func Decide(path string, base, ours, theirs Version) (File, error) {
	f := File{Path: path}
	switch {
	case theirs == nil && base == nil:
		return f, fmt.Errorf("%s: in neither scaffold", path)
	case ours == nil && base != nil:
		f.Action = Deleted
	case theirs == nil:
		f.Action = Dropped
	case ours == nil:
		f.Action, f.Content = Add, theirs
	case bytes.Equal(ours, theirs):
		f.Action = Keep
	case base == nil:
		f.Action = Unrecorded
	case bytes.Equal(ours, base):
		f.Action, f.Content = Update, theirs
	case bytes.Equal(base, theirs):
		f.Action = Keep
	default:
		merged, conflicts, err := Merge3(path, base, ours, theirs)
		if err != nil {
			return f, err
		}
		f.Content, f.Conflicts = merged, conflicts
		switch {
		case conflicts > 0:
			f.Action = Conflict
		case bytes.Equal(merged, ours):
			f.Action = Keep
		default:
			f.Action = Merge
		}
	}
	return f, nil
}

// Merge3 merges the changes from base to theirs into ours with git
// merge-file (diff3 style: the base between the two sides of a conflict),
// returning the merged content and the number of conflicts.
func Merge3(path string, base, ours, theirs []byte) ([]byte, int, error) {
	dir, err := os.MkdirTemp("", "apiserver-boot-merge-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	names := []string{"ours", "base", "theirs"}
	for i, b := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), b, 0o600); err != nil {
			return nil, 0, err
		}
	}
	cmd := exec.Command("git", "merge-file", "-p", "--diff3",
		"-L", path+" (yours)", "-L", path+" (old scaffold)", "-L", path+" (new scaffold)",
		filepath.Join(dir, "ours"), filepath.Join(dir, "base"), filepath.Join(dir, "theirs"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.Bytes(), 0, nil
	case errors.As(err, &exit) && exit.ExitCode() > 0 && exit.ExitCode() < 128:
		// git merge-file exits with the number of conflicts.
		return stdout.Bytes(), exit.ExitCode(), nil
	case errors.Is(err, exec.ErrNotFound):
		return nil, 0, errors.New("upgrade merges files with git merge-file: install git")
	default:
		return nil, 0, fmt.Errorf("git merge-file %s: %v: %s", path, err, strings.TrimSpace(stderr.String()))
	}
}

// Plan decides every file of either scaffold (base the old one's files,
// theirs today's, by slash path), reading the user's from root.
func Plan(root string, base, theirs map[string][]byte) ([]File, error) {
	paths := map[string]bool{}
	for p := range base {
		paths[p] = true
	}
	for p := range theirs {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		sorted = append(sorted, p)
	}
	sort.Strings(sorted)
	var out []File
	for _, p := range sorted {
		ours, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		if err != nil {
			ours = nil
		} else if ours == nil {
			ours = []byte{}
		}
		f, err := Decide(p, nonNil(base, p), ours, nonNil(theirs, p))
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// nonNil is m[p], empty rather than nil for an empty file that exists.
func nonNil(m map[string][]byte, p string) Version {
	b, ok := m[p]
	if ok && b == nil {
		return []byte{}
	}
	return b
}

// Describe is the line --dry-run and the report print for f.
func (f File) Describe() string {
	switch f.Action {
	case Keep:
		return "keep      " + f.Path
	case Update:
		return "update    " + f.Path + " (you never edited it: today's scaffold)"
	case Merge:
		return "merge     " + f.Path + " (your edits and the scaffold's changes, merged)"
	case Conflict:
		return fmt.Sprintf("conflict  %s (%d conflicting change(s): markers left in the file)", f.Path, f.Conflicts)
	case Add:
		return "add       " + f.Path + " (new in today's scaffold)"
	case Deleted:
		return "keep      " + f.Path + " deleted (you deleted it; it stays deleted)"
	case Unrecorded:
		return "keep      " + f.Path + " (the old scaffold did not write it and it differs from today's: left as yours)"
	case Dropped:
		return "keep      " + f.Path + " (no longer scaffolded: left as it is)"
	}
	return string(f.Action) + " " + f.Path
}
