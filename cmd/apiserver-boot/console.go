package main

import (
	"github.com/spf13/cobra"

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
