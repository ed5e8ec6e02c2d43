package scaffold

import (
	"errors"
	"fmt"
	"io"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// ApplyAndGenerate says the plan's notes on out, writes it, then generates
// code, its messages on con; if generating fails, the files the plan wrote
// are restored, so nothing is half done.
func (p *Plan) ApplyAndGenerate(out io.Writer, con *progress.Console) error {
	for _, n := range p.Notes {
		fmt.Fprintln(out, n)
	}
	root := p.Root
	rep, err := p.Apply()
	if err != nil {
		return err
	}
	// With --quiet, the files written and generated go unsaid; warnings,
	// errors and "Nothing to do" are still printed.
	rep.Print(con.Info(), con)
	if !rep.Changed() {
		fmt.Fprintln(con, "Nothing to do: "+p.NothingToDo)
		return nil
	}
	if _, err := codegen.On(con, func(out io.Writer) ([]string, error) { return codegen.Files(root, out, generators.GenerateOptions{}) }); err != nil {
		var lost *generators.LostFieldsError
		if errors.As(err, &lost) {
			// Consistent, and what is left to do is in the new types.
			return fmt.Errorf("generating code: %w\nthe files written above are kept", err)
		}
		if uerr := rep.Undo(); uerr != nil {
			return fmt.Errorf("generating code: %w (and restoring the files written above failed: %v)", err, uerr)
		}
		return fmt.Errorf("generating code: %w; the files written above were restored", err)
	}
	return nil
}
