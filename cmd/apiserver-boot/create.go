package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/scaffold"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

func newCreateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Add API groups, versions, resources and controllers",
		Example: `  apiserver-boot create group version resource --group stable --version v1 --kind CronTab
  apiserver-boot create version --group stable --version v2 --kind CronTab --from v1
  apiserver-boot create subresource --subresource scale --group stable --version v1 --kind CronTab
  apiserver-boot create controller --group apps --version v1 --kind Deployment`,
	}
	group := newCreateLevel("group", "Create an API group (pkg/apis/<group>)",
		"  apiserver-boot create group --group stable", scaffold.LevelGroup)
	version := newCreateLevel("version", "Create a version of an API group (pkg/apis/<group>/<version>)",
		"  apiserver-boot create group version --group stable --version v1", scaffold.LevelVersion)
	resource := newCreateLevel("resource", "Create a resource: its versioned type, hooks and controller",
		`  apiserver-boot create group version resource --group stable --version v1 --kind CronTab
  apiserver-boot create group version resource --group stable --version v1 --kind Cluster --non-namespaced`, scaffold.LevelResource)
	version.AddCommand(resource)
	group.AddCommand(version)
	cmd.AddCommand(group, newCreateVersionCommand(), newCreateSubresourceCommand(), newCreateControllerCommand())
	return cmd
}

type createOptions struct {
	scaffold.CreateOptions
	force bool
}

func newCreateLevel(use, short, example string, level scaffold.Level) *cobra.Command {
	o := &createOptions{CreateOptions: scaffold.CreateOptions{Level: level, Controller: true, Status: true}}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Group, "group", "", "API group, without the domain, e.g. stable (served as stable.<domain>); or in full when it is the domain itself or outside it, e.g. widgets.sh (served from pkg/apis/widgets) (required)")
	if level >= scaffold.LevelVersion {
		f.StringVar(&o.Version, "version", "", "API version, e.g. v1, v1beta1, v2alpha1 (required)")
	}
	if level >= scaffold.LevelResource {
		f.StringVar(&o.Kind, "kind", "", "Kind, UpperCamelCase, e.g. CronTab (required)")
		f.StringVar(&o.Plural, "resource", "", "Plural resource name in URLs; default derived from the kind (CronTab: crontabs)")
		f.StringVar(&o.Singular, "singular", "", "Singular name kubectl accepts; default the lowercased kind")
		f.StringSliceVar(&o.ShortNames, "short-names", nil, "Short names kubectl accepts, e.g. ct,cron")
		f.StringSliceVar(&o.Categories, "categories", nil, "Categories the resource belongs to, e.g. all,batch (kubectl get all)")
		f.BoolVar(&o.NonNamespaced, "non-namespaced", false, "Make the resource cluster-scoped")
		f.BoolVar(&o.Status, "with-status-subresource", o.Status, "Serve /status; writes to the main resource then ignore status")
		f.BoolVar(&o.Scale, "with-scale-subresource", false, "Serve /scale (autoscaling/v1 Scale over .spec.replicas and .status.replicas)")
		f.BoolVar(&o.Controller, "controller", o.Controller, "Scaffold a controller for the kind")
	}
	f.BoolVar(&o.force, "force", false, "Overwrite files that exist with other content")
	return cmd
}

// validate checks every flag before anything is written.
func (o *createOptions) validate() error {
	if o.Group == "" {
		return errors.New("--group is required, e.g. --group stable")
	}
	if o.Level >= scaffold.LevelVersion {
		if o.Version == "" {
			return errors.New("--version is required, e.g. --version v1")
		}
		if err := project.ValidateVersion(o.Version); err != nil {
			return err
		}
	}
	if o.Level >= scaffold.LevelResource {
		if o.Kind == "" {
			return errors.New("--kind is required, e.g. --kind CronTab")
		}
		if err := project.ValidateKind(o.Kind); err != nil {
			return err
		}
		checks := map[string][]string{"--resource": {o.Plural}, "--singular": {o.Singular}, "--short-names": o.ShortNames, "--categories": o.Categories}
		for flag, values := range checks {
			for _, v := range values {
				if v == "" && (flag == "--short-names" || flag == "--categories") {
					return fmt.Errorf("%s has an empty name", flag)
				}
				if v != "" {
					if err := project.ValidateName(flag, v); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

func (o *createOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	if err := o.validate(); err != nil {
		return err
	}
	o.Given = cmd.Flags().Changed
	plan, err := scaffold.Create(root, p, api, o.CreateOptions)
	if err != nil {
		return err
	}
	plan.Force = o.force
	return plan.ApplyAndGenerate(cmd.OutOrStdout(), newConsole(cmd))
}
