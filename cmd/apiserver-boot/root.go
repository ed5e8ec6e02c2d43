package main

import (
	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
)

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "apiserver-boot",
		Short: "Scaffold, generate, build and run Kubernetes extension apiservers",
		Long: `apiserver-boot builds Kubernetes API extensions as aggregated apiservers:
versioned types with generated conversions, in-process defaulting and
validation, subresources, and a controller-manager to reconcile them.`,
		Example: `  mkdir crontab && cd crontab && go mod init example.com/crontab
  apiserver-boot init repo --domain example.com
  apiserver-boot create group version resource --group stable --version v1 --kind CronTab
  apiserver-boot run local
  kubectl --kubeconfig kubeconfig get crontabs`,
		// Errors are printed once, by main.
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.PersistentFlags().BoolP(quietFlag, "q", false, "Print only errors, warnings and results: no progress (status lines of builds), no step-by-step messages; the logs of the processes run local starts still show")
	root.AddCommand(newInitCommand(), newCreateCommand(), newGenerateCommand(), newBuildCommand(), newRunCommand(), newMigrateCommand(), newAPICommand(), newVersionCommand(), newUpgradeCommand(), newAdoptCommand())
	cmdline.FinishTree(root)
	return root
}
