package main

import (
	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/adopt"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

func newAdoptCommand() *cobra.Command {
	o := adopt.Options{ConfigDir: "config", SamplesDir: generators.SamplesDir}
	cmd := &cobra.Command{
		Use:   "adopt",
		Short: "Move the live API of the project's CRDs into the project's apiserver",
		Long: `adopt moves every object of the CRDs of the project's groups into the project's
apiserver deployed in the cluster, with its uid, owners, status and managedFields,
writes paused meanwhile; nothing is deleted, and --rollback goes back (docs/adopting.md).`,
		Example: `  apiserver-boot adopt --kubeconfig ~/.kube/config --dry-run
  apiserver-boot adopt --kubeconfig ~/.kube/config
  apiserver-boot adopt --kubeconfig ~/.kube/config --rollback`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := project.FindRoot()
			if err != nil {
				return err
			}
			o.Out = cmd.OutOrStdout()
			return adopt.Main(cmd.Context(), root, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (kube-apiserver) where the CRDs and the project's apiserver run")
	f.BoolVar(&o.DryRun, "dry-run", false, "Plan only: exit 0 when the adoption can go ahead, 1 when it would be refused")
	f.BoolVar(&o.Rollback, "rollback", false, "Give the resources back to their CRDs, with the changes made since the adoption")
	f.StringVar(&o.ConfigDir, "config", o.ConfigDir, "build config's output folder (holding apiservice.yaml), relative to the project root")
	_ = cmd.MarkFlagRequired("kubeconfig")
	return cmd
}
