package main

import (
	"fmt"
	"os/exec"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/upgrade"
)

type upgradeOptions struct {
	dryRun  bool
	fromCLI string
}

func newUpgradeCommand() *cobra.Command {
	o := &upgradeOptions{}
	cmd := &cobra.Command{
		Use:   "upgrade",
		Short: "Take the project to this apiserver-boot: go.mod, PROJECT, scaffolded files, generated code",
		Long: `upgrade brings a project made by an earlier apiserver-boot to this one, in one
commit-sized change, on a clean git tree:

  go.mod      this apiserver-boot's requirements, never lowering one the project raised
  PROJECT     rewritten in today's format, recording this apiserver-boot (cliVersion)
  scaffold    the project's scaffold is replayed (init, create ...) with the old
              apiserver-boot and with this one, into temporary folders; each file:
                update    you never edited it: today's scaffold replaces it
                merge     you edited it: your edits and the scaffold's changes merged
                          three ways (old scaffold, your file, today's scaffold)
                conflict  both changed the same lines: the file gets conflict
                          markers (diff3 style) and is listed; upgrade exits 1
                add       new in today's scaffold
                keep      unchanged, or your edits over a scaffold that did not change;
                          a scaffolded file you deleted stays deleted
  generate    the code is regenerated, which checks the field number records
              (objects stored in etcd stay readable)

Then, unless files conflict, it runs go build ./... (go.mod is not tidied: tidying
drops requirements the next upgrade would add back) and, when
releases are recorded (api snapshot), their compatibility fixtures
(TestCompatibility). Everything is computed before anything is written; with
--dry-run upgrade prints that plan and writes nothing. A second run has nothing
to do. git diff shows the change; git checkout -- . && git clean -fd undoes it.

The old apiserver-boot is --from-cli, or the release PROJECT records as
cliVersion, installed with go install through your module proxy.`,
		Example: `  apiserver-boot upgrade --dry-run
  apiserver-boot upgrade
  apiserver-boot upgrade --from-cli /tmp/apiserver-boot-old`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd) },
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "Print what upgrade would do to each file, go.mod and PROJECT; write nothing")
	cmd.Flags().StringVar(&o.fromCLI, "from-cli", "", "The apiserver-boot binary that made the project (default: PROJECT's cliVersion, installed with go install)")
	return cmd
}

func (o *upgradeOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if dirty, err := upgrade.Uncommitted(root); err != nil {
		return err
	} else if len(dirty) > 0 && !o.dryRun {
		return fmt.Errorf("the project has uncommitted changes: commit or stash them first, so that upgrade's changes can be reviewed (git diff) and undone apart from yours:\n  %s", strings.Join(dirty, "\n  "))
	}
	con := newConsole(cmd)
	task := con.Start("Replaying the project's scaffold", "")
	u, err := upgrade.Prepare(root, p, api, o.fromCLI)
	task.Done()
	if err != nil {
		return err
	}
	writes := u.Writes(root)
	if len(writes) == 0 {
		fmt.Fprintf(out, "Nothing to do: the project is already at %s (go.mod, PROJECT and every scaffolded file).\n", u.Target())
		return nil
	}
	u.Print(out)
	if o.dryRun {
		if dirty, _ := upgrade.Uncommitted(root); len(dirty) > 0 {
			fmt.Fprintf(out, "note: the project has uncommitted changes; upgrade without --dry-run refuses to run until they are committed or stashed:\n  %s\n", strings.Join(dirty, "\n  "))
		}
		fmt.Fprintln(out, "--dry-run: nothing written.")
		return nil
	}
	return u.Apply(root, con, out, runGo)
}

// runGo runs a go command in the project (a variable: unit tests record
// the commands instead of building).
var runGo = func(dir string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err
}
