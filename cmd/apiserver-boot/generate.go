package main

import (
	"io"

	"github.com/spf13/cobra"
)

func newGenerateCommand() *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "generate",
		Short: "Regenerate every zz_generated file from the types under pkg/apis",
		Long: `generate reads the versioned types under pkg/apis/<group>/<version>, writes the
internal types, registration and strategy hooks, then loads the Go packages once
and runs deepcopy, conversion, defaulter and OpenAPI generation over them. Files
are only written once everything generated parses; on failure nothing changes.`,
		Example: "  apiserver-boot generate\n  go generate ./pkg/apis",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := findRoot()
			if err != nil {
				return err
			}
			con := newConsole(cmd)
			task := con.Start("Generating code", "")
			defer task.Done()
			_, err = generateOn(con, func(out io.Writer) ([]string, error) { return generateFiles(root, out, force) })
			return err
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "Run every generator even if nothing they read changed since the last run")
	return cmd
}
