package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/scaffold"
)

type controllerOptions struct {
	group, version, kind string
	force                bool
}

func newCreateControllerCommand() *cobra.Command {
	o := &controllerOptions{}
	cmd := &cobra.Command{
		Use:   "controller",
		Short: "Add a controller for a kind of this project or a built-in Kubernetes kind",
		Long: `controller scaffolds pkg/controller/<kind>/controller.go (Init and Reconcile) for a
kind of this project, or for a built-in kind from k8s.io/api, named by its
package there (--group apps --version v1 --kind Deployment; core for pods and
services), watched through client-go's informers. Generated code registers it
with the controller-manager.`,
		Example: `  apiserver-boot create controller --group stable --version v1 --kind CronTab
  apiserver-boot create controller --group apps --version v1 --kind Deployment`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.group, "group", "", "API group: of this project, or the k8s.io/api package of a built-in group (apps, batch, core...) (required)")
	f.StringVar(&o.version, "version", "", "API version (required)")
	f.StringVar(&o.kind, "kind", "", "Kind (required)")
	f.BoolVar(&o.force, "force", false, "Overwrite scaffolded files that exist with other content")
	return cmd
}

func (o *controllerOptions) run(cmd *cobra.Command) error {
	root, p, _, err := loadProject()
	if err != nil {
		return err
	}
	for flag, v := range map[string]string{"--group": o.group, "--version": o.version, "--kind": o.kind} {
		if v == "" {
			return fmt.Errorf("%s is required", flag)
		}
	}
	if o.group, err = p.ResolveGroup(o.group); err != nil {
		return err
	}
	plan, err := scaffold.Controller(root, p, o.group, o.version, o.kind)
	if err != nil {
		return err
	}
	plan.Force = o.force
	return plan.ApplyAndGenerate(cmd.OutOrStdout(), newConsole(cmd))
}
