// Package scaffold decides and writes the files `init` and `create` produce:
// one function per scaffold (Repo, Create, Version, Controller,
// Subresource) returns its Plan, the files and the templates' Data, as
// kubebuilder's scaffolders do; Apply renders and checks everything in
// memory first, then writes. A file that already exists with other content
// belongs to the user and is kept unless --force.
package scaffold

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/templates"
)

// IfExists says what to do with a file that exists with other content.
type IfExists int

const (
	// Keep leaves the user's file alone unless forced.
	Keep IfExists = iota
	// Replace always writes: the content was computed from the existing file (go.mod, PROJECT).
	Replace
)

// File is one file to write, relative to the project root.
type File struct {
	Path     string
	Template string // rendered with the plan's data unless Content is set
	Content  []byte
	IfExists IfExists
}

// Plan is a set of files written together.
type Plan struct {
	Root  string
	Data  any
	Force bool
	Files []File
	// Notes are said before the files are written: a choice the scaffold
	// made that the flags did not ask for.
	Notes []string
	// NothingToDo says why, when every file is as the plan would write it.
	NothingToDo string
}

// Report says what Apply did.
type Report struct {
	Written, Unchanged, Skipped []string
	tx                          *files.Transaction
}

// Undo restores the files Apply wrote, for when a later step fails.
func (r *Report) Undo() error { return r.tx.Rollback() }

// Changed tells whether anything was written.
func (r *Report) Changed() bool { return len(r.Written) > 0 }

// Print writes one line per file: the files written to written and those
// skipped to skipped (a quiet command drops the first and keeps the second:
// a file the user owns that was not replaced is worth saying).
func (r *Report) Print(written, skipped io.Writer) {
	for _, p := range r.Written {
		fmt.Fprintf(written, "wrote %s\n", p)
	}
	for _, p := range r.Skipped {
		fmt.Fprintf(skipped, "skipped %s: it exists with other content (edited?); --force overwrites it\n", p)
	}
}

// Apply renders every file, checks Go files parse and gofmt, then writes.
// If rendering or checking fails nothing is written.
func (p *Plan) Apply() (*Report, error) {
	rendered := make([]files.File, 0, len(p.Files))
	for _, f := range p.Files {
		content := f.Content
		if content == nil {
			b, err := templates.Render(f.Template, p.Data)
			if err != nil {
				return nil, err
			}
			content = b
		}
		if strings.HasSuffix(f.Path, ".go") {
			b, err := files.FormatGo(f.Path, content)
			if err != nil {
				return nil, err
			}
			content = b
		}
		rendered = append(rendered, files.File{Path: filepath.Join(p.Root, f.Path), Content: content})
	}
	rep := &Report{}
	var write []files.File
	for i, f := range rendered {
		old, err := os.ReadFile(f.Path)
		switch {
		case err != nil && !os.IsNotExist(err):
			return nil, err
		case err == nil && bytes.Equal(old, f.Content):
			rep.Unchanged = append(rep.Unchanged, p.Files[i].Path)
			continue
		case err == nil && p.Files[i].IfExists == Keep && !p.Force:
			rep.Skipped = append(rep.Skipped, p.Files[i].Path)
			continue
		}
		write = append(write, f)
		rep.Written = append(rep.Written, p.Files[i].Path)
	}
	tx := &files.Transaction{}
	rep.tx = tx
	if err := tx.Write(write...); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			err = fmt.Errorf("%w (restoring: %v)", err, rerr)
		}
		return nil, err
	}
	return rep, nil
}
