package upgrade

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// Apply writes the change into the project at root (every file, go.mod,
// PROJECT) and regenerates its code, its messages on con and out. When the
// write or generate fails, the files it wrote are restored; files left with
// conflict markers are an error once written, before generate. Then
// go build ./... and the recorded releases' compatibility fixtures are run
// with runGo (go in a folder: a variable, for tests); a failure is
// reported with the upgrade kept for the user to finish.
func (u *Change) Apply(root string, con *progress.Console, out io.Writer, runGo func(dir string, args ...string) (string, error)) error {
	writes := u.Writes(root)
	tx := &files.Transaction{}
	if err := tx.Write(writes...); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			err = fmt.Errorf("%w (restoring: %v)", err, rerr)
		}
		return err
	}
	if c := u.Conflicts(); len(c) > 0 {
		return fmt.Errorf("%d file(s) have conflicts, marked <<<<<<< (yours) ||||||| (old scaffold) ======= (new scaffold) >>>>>>>; everything else is upgraded:\n  %s\nresolve them, then run `apiserver-boot generate` and `go build ./...` (git checkout -- . && git clean -fd undoes the upgrade)", len(c), strings.Join(c, "\n  "))
	}
	if _, err := codegen.On(con, func(w io.Writer) ([]string, error) {
		return codegen.Files(root, w, generators.GenerateOptions{})
	}); err != nil {
		if rerr := tx.Rollback(); rerr != nil {
			return fmt.Errorf("generating code: %w (and restoring the files upgrade wrote failed: %v)", err, rerr)
		}
		return fmt.Errorf("generating code: %w; nothing was upgraded (the files upgrade wrote were restored)", err)
	}
	fmt.Fprintln(out, "generated code regenerated; the field number records and the latest recorded release agree with the types")
	return check(root, out, runGo)
}

// check runs, after the upgrade is written and generated: go build ./..., and the recorded releases' compatibility
// fixtures. A failure is reported with the upgrade kept for the user to
// finish (git shows and undoes it).
func check(root string, out io.Writer, runGo func(dir string, args ...string) (string, error)) error {
	// go.mod is left as init writes it (every requirement the framework was
	// tested with), not tidied: tidying drops some, which the next upgrade
	// would add back.
	steps := [][]string{{"build", "./..."}}
	if entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(generators.SnapshotsDir))); err == nil && len(entries) > 0 {
		steps = append(steps, []string{"test", "-count=1", "-run", "^TestCompatibility$", "./pkg/apis/"})
	}
	for _, s := range steps {
		if msg, err := runGo(root, s...); err != nil {
			return fmt.Errorf("the upgrade is written, and `go %s` fails: %v\n%s\nfix it, or undo the upgrade with git checkout -- . && git clean -fd", strings.Join(s, " "), err, msg)
		}
		fmt.Fprintf(out, "go %s: ok\n", strings.Join(s, " "))
	}
	fmt.Fprintf(out, "Upgraded to %s. Review with git diff, then commit.\n", "apiserver-boot "+version.Get().String())
	return nil
}

// Uncommitted lists the project's uncommitted changes (git status
// --porcelain, untracked files included), or fails when the project is not
// in git: upgrade needs it there, to show and undo what it changes.
func Uncommitted(root string) ([]string, error) {
	cmd := exec.Command("git", "status", "--porcelain", "--untracked-files=all", "--", ".")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("upgrade needs the project in git, to show (git diff) and undo what it changes: `git status` in %s: %v %s\n(git init && git add -A && git commit -m 'before upgrade' first)", root, err, strings.TrimSpace(stderr.String()))
	}
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out, nil
}
