package generators

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Transaction writes files and remembers what they held before, so a failed
// run can put everything back. Files whose content is unchanged are not
// touched, which keeps timestamps (and build caches) intact.
type Transaction struct {
	Log       io.Writer
	Unchanged int
	// Files are every file the run produced, written or unchanged.
	Files    []string
	previous map[string][]byte // nil value: the file did not exist
	order    []string
}

// Write writes files atomically (temporary file and rename), recording their old content.
func (t *Transaction) Write(files ...File) error {
	if t.previous == nil {
		t.previous = map[string][]byte{}
	}
	for _, f := range files {
		t.Files = append(t.Files, f.Path)
		old, err := os.ReadFile(f.Path)
		switch {
		case err == nil && bytes.Equal(old, f.Content):
			t.Unchanged++
			continue
		case err != nil && !errors.Is(err, os.ErrNotExist):
			return err
		}
		if _, seen := t.previous[f.Path]; !seen {
			t.previous[f.Path] = old
			t.order = append(t.order, f.Path)
		}
		if err := WriteFileAtomic(f.Path, f.Content); err != nil {
			return err
		}
		if t.Log != nil {
			fmt.Fprintf(t.Log, "wrote %s\n", f.Path)
		}
	}
	return nil
}

// Written lists the files written, sorted.
func (t *Transaction) Written() []string {
	out := append([]string(nil), t.order...)
	sort.Strings(out)
	return out
}

// Rollback restores every written file to its previous content (or removes it).
func (t *Transaction) Rollback() error {
	var errs []error
	for i := len(t.order) - 1; i >= 0; i-- {
		p := t.order[i]
		if old := t.previous[p]; old == nil {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		} else if err := WriteFileAtomic(p, old); err != nil {
			errs = append(errs, err)
		}
	}
	t.order, t.previous = nil, nil
	return errors.Join(errs...)
}

// WriteFileAtomic writes content to path through a temporary file and a rename.
func WriteFileAtomic(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
