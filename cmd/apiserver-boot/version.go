package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/scaffold"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

type versionOptions struct {
	group, version, kind, from string
	force                      bool
}

func newCreateVersionCommand() *cobra.Command {
	o := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Add a version of an existing kind, starting from a copy of another version's types",
		Long: `version copies <kind>_types.go of --from into the new version, which joins the same
storage: one etcd object, readable and writable through every version, converted
through the generated internal type. The version objects are stored in is marked
+storageversion (--from, unless a version already carries the marker); edit the
new types, and write conversions for fields that differ.`,
		Example: "  apiserver-boot create version --group stable --version v2 --kind CronTab --from v1",
		Args:    cmdline.NoArgs,
		RunE:    func(cmd *cobra.Command, args []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.group, "group", "", "API group of the kind (required)")
	f.StringVar(&o.version, "version", "", "The new version, e.g. v2 (required)")
	f.StringVar(&o.kind, "kind", "", "The kind (required)")
	f.StringVar(&o.from, "from", "", "The existing version to copy the types from (required)")
	f.BoolVar(&o.force, "force", false, "Overwrite files that exist with other content")
	return cmd
}

func (o *versionOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	for flag, v := range map[string]string{"--group": o.group, "--version": o.version, "--kind": o.kind, "--from": o.from} {
		if v == "" {
			return fmt.Errorf("%s is required", flag)
		}
	}
	if o.group, err = p.ResolveGroup(o.group); err != nil {
		return err
	}
	if err := project.ValidateVersion(o.version); err != nil {
		return err
	}
	from, err := scaffold.FromResource(p, o.group, o.from, o.kind)
	if err != nil {
		return err
	}
	if p.Find(o.group, o.version, o.kind) != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "Nothing to do: %s/%s already serves %s.\n", o.group, o.version, o.kind)
		return nil
	}
	plan, err := scaffold.Version(root, p, api, from, o.version)
	if err != nil {
		return err
	}
	plan.Force = o.force
	return plan.ApplyAndGenerate(cmd.OutOrStdout(), newConsole(cmd))
}
