// Package templates holds every file body apiserver-boot writes, as
// text/template files (with sprig functions) embedded in the binary:
//
//   - project/: written once by `init repo`
//   - resource/: written by `create group version resource`, then owned by the user
//   - generated/: rewritten by `generate` (zz_generated.*.go, never edited by hand)
//
// go.mod files are named go.mod.tmpl because go:embed skips folders holding a go.mod.
package templates

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"text/template"

	"github.com/Masterminds/sprig/v3"
)

//go:embed all:project all:resource all:generated
var files embed.FS

// FS exposes the embedded templates.
var FS fs.FS = files

// parsed parses every template on first use, not at start: the same
// binary starts again as generate's packages driver, which renders nothing.
var parsed = sync.OnceValue(func() *template.Template { return template.Must(parseAll()) })

func parseAll() (*template.Template, error) {
	root := template.New("").Funcs(sprig.TxtFuncMap()).Option("missingkey=error")
	err := fs.WalkDir(files, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".tmpl") {
			return err
		}
		b, err := files.ReadFile(path)
		if err != nil {
			return err
		}
		_, err = root.New(path).Parse(string(b))
		return err
	})
	return root, err
}

// Render executes the template at path (e.g. "resource/types.go.tmpl") with data.
func Render(path string, data any) ([]byte, error) {
	t := parsed().Lookup(path)
	if t == nil {
		return nil, fmt.Errorf("no template %s", path)
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", path, err)
	}
	return buf.Bytes(), nil
}
