// Package files is the file infrastructure of scaffolding and generation:
// files rendered in memory, checked (Go must parse and is gofmt-ed), then
// written in a transaction that can put everything back, each file
// atomically.
package files

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// File is one file to write: an absolute path, its content and its mode
// (0600 for a private key). A zero Mode keeps the mode of the file there,
// and gives a new file 0644.
type File struct {
	Path    string
	Content []byte
	Mode    os.FileMode
}

// mode is the mode f is written with over old.
func (f File) mode(old previous) os.FileMode {
	switch {
	case f.Mode != 0:
		return f.Mode
	case old.exists:
		return old.mode
	}
	return 0o644
}

// FormatGo checks that src parses and returns it gofmt-ed.
func FormatGo(path string, src []byte) ([]byte, error) {
	if _, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments); err != nil {
		line := ""
		var list scanner.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			if lines := strings.Split(string(src), "\n"); list[0].Pos.Line <= len(lines) {
				line = fmt.Sprintf(" (line %d: %q)", list[0].Pos.Line, strings.TrimSpace(lines[list[0].Pos.Line-1]))
			}
		}
		return nil, fmt.Errorf("generated %s does not parse (a generator bug or a type it cannot handle): %w%s", filepath.Base(path), err, line)
	}
	return format.Source(src)
}

// previous is what a path held before the transaction touched it.
type previous struct {
	exists  bool
	content []byte
	mode    os.FileMode
}

// current reads what path holds now.
func current(path string) (previous, error) {
	content, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return previous{}, nil
	} else if err != nil {
		return previous{}, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return previous{}, err
	}
	return previous{exists: true, content: content, mode: st.Mode().Perm()}, nil
}

// Transaction writes files and remembers what they held before, so a failed
// run can put everything back. Files whose content is unchanged are not
// touched, which keeps timestamps (and build caches) intact.
type Transaction struct {
	Log       io.Writer
	Unchanged int
	// Files are every file the run produced, written or unchanged.
	Files    []string
	previous map[string]previous
	order    []string
	removed  []string
}

// Write writes files atomically (temporary file and rename), recording their
// old content and mode. A file whose content is unchanged keeps its
// timestamp; only its mode is set when it differs.
func (t *Transaction) Write(files ...File) error {
	for _, f := range files {
		t.Files = append(t.Files, f.Path)
		old, err := current(f.Path)
		if err != nil {
			return err
		}
		if old.exists && bytes.Equal(old.content, f.Content) {
			t.Unchanged++
			if old.mode != f.mode(old) {
				if err := t.record(f.Path, old); err != nil {
					return err
				}
				if err := os.Chmod(f.Path, f.mode(old)); err != nil {
					return err
				}
			}
			continue
		}
		if err := t.record(f.Path, old); err != nil {
			return err
		}
		if err := WriteAtomic(f.Path, f.Content, f.mode(old)); err != nil {
			return err
		}
		if t.Log != nil {
			fmt.Fprintf(t.Log, "wrote %s\n", f.Path)
		}
	}
	return nil
}

// record remembers what path held, the first time the transaction changes it.
func (t *Transaction) record(path string, old previous) error {
	if t.previous == nil {
		t.previous = map[string]previous{}
	}
	if _, seen := t.previous[path]; !seen {
		t.previous[path] = old
		t.order = append(t.order, path)
	}
	return nil
}

// Remove deletes a file, recording its content so that Rollback puts it back.
func (t *Transaction) Remove(path string) error {
	old, err := current(path)
	if err != nil {
		return err
	}
	if !old.exists {
		return fmt.Errorf("removing %s: %w", path, os.ErrNotExist)
	}
	if err := t.record(path, old); err != nil {
		return err
	}
	t.removed = append(t.removed, path)
	if err := os.Remove(path); err != nil {
		return err
	}
	if t.Log != nil {
		fmt.Fprintf(t.Log, "removed %s\n", path)
	}
	return nil
}

// Removed lists the files removed, sorted.
func (t *Transaction) Removed() []string {
	out := append([]string(nil), t.removed...)
	sort.Strings(out)
	return out
}

// Written lists the files written, sorted.
func (t *Transaction) Written() []string {
	var out []string
	for _, p := range t.order {
		if !slices.Contains(t.removed, p) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// Rollback restores every written file to its previous content and mode
// (or removes it).
func (t *Transaction) Rollback() error {
	var errs []error
	for i := len(t.order) - 1; i >= 0; i-- {
		p, old := t.order[i], t.previous[t.order[i]]
		if !old.exists {
			if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
				errs = append(errs, err)
			}
		} else if err := WriteAtomic(p, old.content, old.mode); err != nil {
			errs = append(errs, err)
		}
	}
	t.order, t.previous = nil, nil
	return errors.Join(errs...)
}

// WriteAtomic writes content to path through a temporary file (created
// 0600, so nothing is ever readable with looser permissions than perm) and a
// rename: a reader sees the old file or the new one, never a part.
func WriteAtomic(path string, content []byte, perm os.FileMode) error {
	return WriteAtomicFunc(path, perm, func(w io.Writer) error {
		_, err := w.Write(content)
		return err
	})
}

// WriteAtomicFunc is WriteAtomic for content written by write.
func WriteAtomicFunc(path string, perm os.FileMode, write func(io.Writer) error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
