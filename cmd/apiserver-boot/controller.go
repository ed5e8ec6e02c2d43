package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
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
		Args: noArgs,
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
	data, err := newTemplateData(root, p)
	if err != nil {
		return err
	}
	r := p.Find(o.group, o.version, o.kind)
	switch {
	case r != nil && r.External:
	case r != nil:
		data.VersionAlias, data.VersionPackage = o.version, project.APIsImport(p.Module, o.group, o.version)
	default:
		_, pkg, ok := project.BuiltinKind(o.group, o.version, o.kind)
		if !ok {
			return fmt.Errorf("--group %s --version %s --kind %s is neither a resource of this project (see PROJECT) nor a built-in Kubernetes kind (k8s.io/api/%s/%s has no %s)%s", o.group, o.version, o.kind, o.group, o.version, o.kind, p.Suggest(o.group, o.version, o.kind))
		}
		plural := project.Plural(o.kind)
		r = &project.Resource{Group: o.group, Version: o.version, Kind: o.kind, Plural: plural, Singular: project.Singular(o.kind), External: true, Package: pkg}
		p.Resources = append(p.Resources, r)
	}
	if r.External {
		data.VersionAlias, data.VersionPackage = project.ImportAlias(r.Package), r.Package
	}
	for _, other := range p.Resources {
		if other != r && other.Controller && other.Kind == r.Kind {
			return fmt.Errorf("--kind %s already has a controller (for %s/%s)", r.Kind, other.Group, other.Version)
		}
	}
	r.Controller = true
	data.Group, data.Version, data.Kind, data.Plural, data.Scope = o.group, o.version, o.kind, r.Plural, string(r.Scope)
	data.GroupGo, data.VersionGo, data.PluralGo = project.GroupGoName(p.FullGroup(o.group)), project.GoName(o.version), project.ClientPlural(r.Kind, r.Plural)
	data.Package = project.ControllerPackage(o.kind)
	dir := project.Controller(data.Package)
	files := []scaffold.File{{Path: filepath.Join(dir, "controller.go"), Template: "resource/controller.go.tmpl"}}
	if !r.External {
		// Built-in kinds need a kube-apiserver, which the in-process test environment is not.
		files = append(files, scaffold.File{Path: filepath.Join(dir, "controller_test.go"), Template: "resource/controller_test.go.tmpl"})
	}
	record, err := p.Marshal()
	if err != nil {
		return err
	}
	files = append(files, scaffold.File{Path: project.FileName, Content: record, IfExists: scaffold.Replace})
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: files}
	return applyAndGenerate(cmd, root, plan, fmt.Sprintf("the %s controller already exists.", o.kind))
}
