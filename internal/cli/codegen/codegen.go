// Package codegen runs apiserver-boot generate for a command and says what
// it did: the files written and removed, its warnings, and with --quiet only
// the warnings.
package codegen

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/gomod"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// Files runs every generator over the project at root, unless nothing it
// reads changed since the last run (see generators/cache.go) and o.Force is
// off (o.Renumber numbers the protobuf fields of the kinds it names afresh;
// o.API, read by the command, spares a second read). It says on out what it
// did, and returns the files it wrote or removed (absolute paths; none when
// nothing changed).
func Files(root string, out io.Writer, o generators.GenerateOptions) ([]string, error) {
	// The generated code is for this apiserver-boot's framework.
	if w := gomod.FrameworkSkew(root, version.Get()); w != "" {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	g, err := generators.Generate(root, version.Module, o)
	if g == nil {
		return nil, err
	}
	if g.UpToDate {
		for _, w := range g.Warnings {
			fmt.Fprintf(out, "warning: %s\n", w)
		}
		fmt.Fprintf(out, "generate: up to date, %d files unchanged (nothing it reads changed since the last run; --force runs it anyway)\n", g.Unchanged)
		return nil, nil
	}
	for _, w := range g.Written {
		rel, _ := filepath.Rel(root, w)
		fmt.Fprintf(out, "generated %s\n", rel)
	}
	for _, r := range g.Removed {
		rel, _ := filepath.Rel(root, r)
		fmt.Fprintf(out, "removed %s (no longer generated)\n", rel)
	}
	for _, w := range g.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	fmt.Fprintf(out, "generate: %d files written, %d unchanged\n", len(g.Written), g.Unchanged)
	return append(append([]string(nil), g.Written...), g.Removed...), err
}

// Output is where generate's messages go: all of them, or with --quiet its
// warnings only (a warning's indented lines included). Close it once
// generate returns, or a last line without a newline is lost.
func Output(con *progress.Console) io.WriteCloser {
	if !con.Quiet() {
		return nopCloser{con}
	}
	inWarning := false
	return progress.Lines(func(line string) {
		if strings.HasPrefix(line, "warning: ") || (inWarning && strings.HasPrefix(line, " ") || inWarning && strings.HasPrefix(line, "\t")) {
			inWarning = true
			io.WriteString(con, line+"\n")
			return
		}
		inWarning = false
	})
}

// WithProgress is generate for run local and build container: its messages
// and warnings printed (warnings only with --quiet), its time shown while it
// runs. o.Project and o.API are the command's, if the files it read are as
// they were.
func WithProgress(con *progress.Console, root string, o generators.GenerateOptions) ([]string, error) {
	task := con.Start("Generating code", "")
	defer task.Done()
	return On(con, func(out io.Writer) ([]string, error) { return Files(root, out, o) })
}

// On runs gen (Files) with Output(con) as its output, closed when gen
// returns.
func On(con *progress.Console, gen func(out io.Writer) ([]string, error)) ([]string, error) {
	out := Output(con)
	defer out.Close()
	return gen(out)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
