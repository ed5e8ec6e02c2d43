package main

import (
	"github.com/spf13/cobra"

	apiserverboot "github.com/apiserver-boot/apiserver-boot"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/versionreport"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

func newVersionCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the apiserver-boot version and the Kubernetes libraries it pins",
		Long: `version prints, on its first line, "apiserver-boot <version>": a release (vX.Y.Z,
installed with go install or built by make release) or "devel" (built from a
source checkout). Then the Go version, and the Kubernetes libraries, etcd and
kine versions a project it scaffolds requires (the framework's go.mod).`,
		Example: "  apiserver-boot version\n  apiserver-boot version -o json",
		Args:    cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := versionreport.New(version.Get(), apiserverboot.GoMod)
			if err != nil {
				return err
			}
			return r.Write(cmd.OutOrStdout(), output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "Output format: text, json or yaml")
	return cmd
}
