package main

import (
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// quietFlag is the root command's persistent --quiet (-q).
const quietFlag = "quiet"

// newConsole is cmd's output: a status line for long steps on a terminal
// (plain lines otherwise), none of it with --quiet.
func newConsole(cmd *cobra.Command) *progress.Console {
	quiet, _ := cmd.Flags().GetBool(quietFlag)
	return progress.NewConsole(cmd.OutOrStdout(), cmd.ErrOrStderr(), quiet)
}

// generateOutput is where generate's messages go: all of them, or with
// --quiet its warnings only (a warning's indented lines included). Close it
// once generate returns, or a last line without a newline is lost.
func generateOutput(con *progress.Console) io.WriteCloser {
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

// generateWithProgress is generate for run local and build container: its
// messages and warnings printed (warnings only with --quiet), its time shown
// while it runs. o.Project and o.API are the command's, if the files it
// read are as they were.
func generateWithProgress(con *progress.Console, root string, o generators.GenerateOptions) ([]string, error) {
	task := con.Start("Generating code", "")
	defer task.Done()
	return generateOn(con, func(out io.Writer) ([]string, error) { return generateFiles(root, out, o) })
}

// generateOn runs gen (generateFiles) with generateOutput(con) as its
// output, closed when gen returns.
func generateOn(con *progress.Console, gen func(out io.Writer) ([]string, error)) ([]string, error) {
	out := generateOutput(con)
	defer out.Close()
	return gen(out)
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
