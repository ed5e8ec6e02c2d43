package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/adopt"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

func newAdoptCommand() *cobra.Command {
	var kubeconfig string
	o := adopt.Options{ConfigDir: "config"}
	cmd := &cobra.Command{
		Use:   "adopt",
		Short: "Move the live API of the project's CRDs into the project's apiserver",
		Long: `adopt moves every object of the CRDs of the project's groups into the deployed
project's apiserver, with uid, creationTimestamp, generation, labels, annotations,
finalizers, ownerReferences, managedFields and status kept: plan (each object
dry-run created by the project), pause writes (a ValidatingAdmissionPolicy),
copy, point the APIServices at the project, set the CRD versions served: false,
verify, resume writes. Nothing is deleted; --rollback goes back to the CRDs.
It needs the verb "adopt" on each resource in the project's apiserver, and
reaches it through kube-apiserver only. A rerun after a failure continues.`,
		Example: `  apiserver-boot adopt --kubeconfig ~/.kube/config --dry-run
  apiserver-boot adopt --kubeconfig ~/.kube/config
  apiserver-boot adopt --kubeconfig ~/.kube/config --rollback`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := project.FindRoot()
			if err != nil {
				return err
			}
			if !filepath.IsAbs(o.ConfigDir) {
				o.ConfigDir = filepath.Join(root, o.ConfigDir)
			}
			o.SamplesDir, o.Out = filepath.Join(root, generators.SamplesDir), cmd.OutOrStdout()
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				return fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
			}
			c, err := adopt.NewClients(cfg)
			if err != nil {
				return err
			}
			return adopt.Run(cmd.Context(), c, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (kube-apiserver) where the CRDs and the project's apiserver run")
	f.BoolVar(&o.DryRun, "dry-run", false, "Plan only: exit 0 when the adoption can go ahead, 1 when it would be refused")
	f.BoolVar(&o.Rollback, "rollback", false, "Give the resources back to their CRDs, with the changes made since the adoption")
	f.StringVar(&o.ConfigDir, "config", o.ConfigDir, "build config's output folder (holding apiservice.yaml), relative to the project root")
	_ = cmd.MarkFlagRequired("kubeconfig")
	return cmd
}
