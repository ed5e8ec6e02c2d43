package main

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

func newGenerateCommand() *cobra.Command {
	var force bool
	var renumber []string
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Regenerate every zz_generated file from the types under pkg/apis",
		Long: `generate reads the versioned types under pkg/apis/<group>/<version>, writes the
internal types, registration and strategy hooks, then loads the Go packages once
and runs deepcopy, conversion, defaulter and OpenAPI generation over them. Files
are only written once everything generated parses; on failure nothing changes.

--renumber numbers a kind's protobuf fields afresh, forgetting what its
fieldnumbers.yaml recorded for it: for a kind no release has published (no api
snapshot of it), whose types were replaced (the scaffolded ones by one's own),
when generate refuses to change a recorded field and names this flag. Objects
of it stored under the old numbers become unreadable; a kind a recorded release
published is refused.`,
		Example: "  apiserver-boot generate\n  go generate ./pkg/apis\n  apiserver-boot generate --renumber stable/v1/CronTab",
		Args:    cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := project.FindRoot()
			if err != nil {
				return err
			}
			con := newConsole(cmd)
			task := con.Start("Generating code", "")
			defer task.Done()
			_, err = codegen.On(con, func(out io.Writer) ([]string, error) {
				return codegen.Files(root, out, generators.GenerateOptions{Force: force, Renumber: renumber})
			})
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "Run every generator even if nothing they read changed since the last run")
	cmd.Flags().StringArrayVar(&renumber, "renumber", nil, "Number the protobuf fields of a kind no release published afresh, as <group>/<version>/<Kind> (repeatable): objects stored under the old numbers become unreadable")
	return cmd
}
