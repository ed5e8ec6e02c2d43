package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/scaffold"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

type subresourceOptions struct {
	name, group, version, kind         string
	specPath, statusPath, selectorPath string
	force                              bool
}

func newCreateSubresourceCommand() *cobra.Command {
	o := &subresourceOptions{}
	paths := project.DefaultScalePaths
	cmd := &cobra.Command{
		Use:   "subresource",
		Short: "Add a subresource to a resource: status, scale, or a custom one",
		Long: `subresource adds /status or /scale to a resource (a marker on its type), or a
custom subresource: a request type and a handler stub for
POST <plural>/<name>/<subresource>, registered by generated code, which returns
the object until you edit it. A custom subresource belongs to the kind: it is
served in every version of it, so each version gets the request type and the
+subresource:rest marker, and the handler is written once, on the strategy of
the storage version (where the kind's REST hooks run), whichever --version
names the kind.`,
		Example: `  apiserver-boot create subresource --subresource status --group stable --version v1 --kind CronTab
  apiserver-boot create subresource --subresource scale --group stable --version v1 --kind CronTab --spec-replicas-path .spec.size
  apiserver-boot create subresource --subresource restart --group stable --version v1 --kind CronTab`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.name, "subresource", "", "status, scale, or the name of a custom subresource such as restart (required)")
	f.StringVar(&o.group, "group", "", "API group of the resource (required)")
	f.StringVar(&o.version, "version", "", "API version of the resource (required)")
	f.StringVar(&o.kind, "kind", "", "Kind of the resource (required)")
	f.StringVar(&o.specPath, "spec-replicas-path", paths.SpecReplicasPath, "scale: JSON path of the desired replicas")
	f.StringVar(&o.statusPath, "status-replicas-path", paths.StatusReplicasPath, "scale: JSON path of the observed replicas")
	f.StringVar(&o.selectorPath, "label-selector-path", paths.LabelSelectorPath, "scale: JSON path of the pods' label selector (string), or empty")
	f.BoolVar(&o.force, "force", false, "Overwrite scaffolded files that exist with other content")
	return cmd
}

func (o *subresourceOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	for flag, v := range map[string]string{"--subresource": o.name, "--group": o.group, "--version": o.version, "--kind": o.kind} {
		if v == "" {
			return fmt.Errorf("%s is required", flag)
		}
	}
	if o.group, err = p.ResolveGroup(o.group); err != nil {
		return err
	}
	if err := project.ValidateName("--subresource", o.name); err != nil {
		return err
	}
	r := p.Find(o.group, o.version, o.kind)
	if r == nil {
		if hint := p.Suggest(o.group, o.version, o.kind); hint != "" {
			return fmt.Errorf("no resource --group %s --version %s --kind %s in PROJECT%s", o.group, o.version, o.kind, hint)
		}
		return fmt.Errorf("no resource --group %s --version %s --kind %s in PROJECT: create it first with `apiserver-boot create group version resource`", o.group, o.version, o.kind)
	}
	var scale *project.ScalePaths
	if o.name == "scale" {
		for _, p := range []struct{ flag, path string }{{"--spec-replicas-path", o.specPath}, {"--status-replicas-path", o.statusPath}, {"--label-selector-path", o.selectorPath}} {
			if p.path == "" && p.flag == "--label-selector-path" {
				continue
			}
			if err := project.ValidateFieldPath(p.path); err != nil {
				return fmt.Errorf("%s: %w", p.flag, err)
			}
		}
		scale = &project.ScalePaths{SpecReplicasPath: o.specPath, StatusReplicasPath: o.statusPath, LabelSelectorPath: o.selectorPath}
	}
	plan, err := scaffold.Subresource(root, p, api, r, o.name, scale)
	if err != nil {
		return err
	}
	plan.Force = o.force
	return plan.ApplyAndGenerate(cmd.OutOrStdout(), newConsole(cmd))
}
