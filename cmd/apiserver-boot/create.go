package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
)

func newCreateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Add API groups, versions, resources and controllers",
	}
	group := newCreateLevel("group", "Create an API group (pkg/apis/<group>)",
		"  apiserver-boot create group --group stable", levelGroup)
	version := newCreateLevel("version", "Create a version of an API group (pkg/apis/<group>/<version>)",
		"  apiserver-boot create group version --group stable --version v1", levelVersion)
	resource := newCreateLevel("resource", "Create a resource: its versioned type, hooks and controller",
		`  apiserver-boot create group version resource --group stable --version v1 --kind CronTab
  apiserver-boot create group version resource --group stable --version v1 --kind Cluster --non-namespaced`, levelResource)
	version.AddCommand(resource)
	group.AddCommand(version)
	cmd.AddCommand(group)
	return cmd
}

type createLevel int

const (
	levelGroup createLevel = iota
	levelVersion
	levelResource
)

type createOptions struct {
	level                   createLevel
	group, version, kind    string
	nonNamespaced, noStatus bool
	controller, force       bool
}

func newCreateLevel(use, short, example string, level createLevel) *cobra.Command {
	o := &createOptions{level: level, controller: true}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.group, "group", "", "API group, without the domain, e.g. stable (required)")
	if level >= levelVersion {
		f.StringVar(&o.version, "version", "", "API version, e.g. v1, v1beta1, v2alpha1 (required)")
	}
	if level >= levelResource {
		f.StringVar(&o.kind, "kind", "", "Kind, UpperCamelCase, e.g. CronTab (required)")
		f.BoolVar(&o.nonNamespaced, "non-namespaced", false, "Make the resource cluster-scoped")
		f.BoolVar(&o.controller, "controller", o.controller, "Scaffold a controller for the kind")
	}
	f.BoolVar(&o.force, "force", false, "Overwrite files that exist with other content")
	return cmd
}

// validate checks every flag before anything is written.
func (o *createOptions) validate(p *project.Project) error {
	if o.group == "" {
		return errors.New("--group is required, e.g. --group stable")
	}
	if err := project.ValidateGroup(o.group, p.Domain); err != nil {
		return err
	}
	if o.level >= levelVersion {
		if o.version == "" {
			return errors.New("--version is required, e.g. --version v1")
		}
		if err := project.ValidateVersion(o.version); err != nil {
			return err
		}
	}
	if o.level >= levelResource {
		if o.kind == "" {
			return errors.New("--kind is required, e.g. --kind CronTab")
		}
		if err := project.ValidateKind(o.kind); err != nil {
			return err
		}
	}
	return nil
}

func (o *createOptions) run(cmd *cobra.Command) error {
	root, p, err := loadProject()
	if err != nil {
		return err
	}
	if err := o.validate(p); err != nil {
		return err
	}
	data, err := newTemplateData(root, p)
	if err != nil {
		return err
	}
	data.Group, data.FullGroup, data.Version = o.group, p.FullGroup(o.group), o.version
	files := []scaffold.File{{Path: filepath.Join("pkg", "apis", o.group, "doc.go"), Template: "resource/group_doc.go.tmpl"}}
	if o.level >= levelVersion {
		data.ModelPackage = generators.OpenAPIModelPackage(p.Module, o.group, o.version)
		files = append(files, scaffold.File{Path: filepath.Join("pkg", "apis", o.group, o.version, "doc.go"), Template: "resource/version_doc.go.tmpl"})
	}
	if o.level >= levelResource {
		r := &project.Resource{
			Group: o.group, Version: o.version, Kind: o.kind,
			Plural: project.Plural(o.kind), Singular: project.Singular(o.kind),
			Scope: project.Namespaced, Subresources: []string{"status"}, Controller: o.controller,
		}
		if o.nonNamespaced {
			r.Scope = project.Cluster
		}
		existing := p.Find(r.Group, r.Version, r.Kind)
		if existing == nil {
			if err := p.CheckClash(r); err != nil {
				return err
			}
			p.Resources = append(p.Resources, r)
		} else {
			r = existing
		}
		data.Kind, data.Plural, data.Scope = r.Kind, r.Plural, string(r.Scope)
		files = append(files, scaffold.File{
			Path:     filepath.Join("pkg", "apis", o.group, o.version, generators.ControllerPackage(o.kind)+"_types.go"),
			Template: "resource/types.go.tmpl",
		})
		if r.Controller {
			data.Package = generators.ControllerPackage(o.kind)
			files = append(files, scaffold.File{
				Path:     filepath.Join("pkg", "controller", data.Package, "controller.go"),
				Template: "resource/controller.go.tmpl",
			})
		}
		record, err := p.Marshal()
		if err != nil {
			return err
		}
		files = append(files, scaffold.File{Path: project.FileName, Content: record, IfExists: scaffold.Replace})
	}
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: files}
	rep, err := plan.Apply()
	if err != nil {
		return err
	}
	rep.Print(cmd.OutOrStdout())
	if !rep.Changed() {
		fmt.Fprintln(cmd.OutOrStdout(), "Nothing to do: everything asked for already exists.")
		return nil
	}
	if err := generate(root, cmd.OutOrStdout()); err != nil {
		if uerr := rep.Undo(); uerr != nil {
			return fmt.Errorf("generating code for the new files: %w (and removing them failed: %v)", err, uerr)
		}
		return fmt.Errorf("generating code for the new files: %w; the files written above were removed again", err)
	}
	return nil
}
