package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
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
		"  apiserver-boot create group --group stable", levelGroup)
	version := newCreateLevel("version", "Create a version of an API group (pkg/apis/<group>/<version>)",
		"  apiserver-boot create group version --group stable --version v1", levelVersion)
	resource := newCreateLevel("resource", "Create a resource: its versioned type, hooks and controller",
		`  apiserver-boot create group version resource --group stable --version v1 --kind CronTab
  apiserver-boot create group version resource --group stable --version v1 --kind Cluster --non-namespaced`, levelResource)
	version.AddCommand(resource)
	group.AddCommand(version)
	cmd.AddCommand(group, newCreateVersionCommand(), newCreateSubresourceCommand(), newCreateControllerCommand())
	return cmd
}

type createLevel int

const (
	levelGroup createLevel = iota
	levelVersion
	levelResource
)

type createOptions struct {
	level                  createLevel
	group, version, kind   string
	plural, singular       string
	shortNames, categories []string
	nonNamespaced          bool
	status, scale          bool
	controller, force      bool
}

func newCreateLevel(use, short, example string, level createLevel) *cobra.Command {
	o := &createOptions{level: level, controller: true, status: true}
	cmd := &cobra.Command{
		Use:     use,
		Short:   short,
		Example: example,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.group, "group", "", "API group, without the domain, e.g. stable (served as stable.<domain>); or in full when it is the domain itself or outside it, e.g. widgets.sh (served from pkg/apis/widgets) (required)")
	if level >= levelVersion {
		f.StringVar(&o.version, "version", "", "API version, e.g. v1, v1beta1, v2alpha1 (required)")
	}
	if level >= levelResource {
		f.StringVar(&o.kind, "kind", "", "Kind, UpperCamelCase, e.g. CronTab (required)")
		f.StringVar(&o.plural, "resource", "", "Plural resource name in URLs; default derived from the kind (CronTab: crontabs)")
		f.StringVar(&o.singular, "singular", "", "Singular name kubectl accepts; default the lowercased kind")
		f.StringSliceVar(&o.shortNames, "short-names", nil, "Short names kubectl accepts, e.g. ct,cron")
		f.StringSliceVar(&o.categories, "categories", nil, "Categories the resource belongs to, e.g. all,batch (kubectl get all)")
		f.BoolVar(&o.nonNamespaced, "non-namespaced", false, "Make the resource cluster-scoped")
		f.BoolVar(&o.status, "with-status-subresource", o.status, "Serve /status; writes to the main resource then ignore status")
		f.BoolVar(&o.scale, "with-scale-subresource", false, "Serve /scale (autoscaling/v1 Scale over .spec.replicas and .status.replicas)")
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
		checks := map[string][]string{"--resource": {o.plural}, "--singular": {o.singular}, "--short-names": o.shortNames, "--categories": o.categories}
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

// resource is the resource the flags describe.
func (o *createOptions) resource() *project.Resource {
	r := &project.Resource{
		Group: o.group, Version: o.version, Kind: o.kind,
		Plural: o.plural, Singular: o.singular, ShortNames: o.shortNames, Categories: o.categories,
		Scope: project.Namespaced, Controller: o.controller,
	}
	if r.Plural == "" {
		r.Plural = project.Plural(o.kind)
	}
	if r.Singular == "" {
		r.Singular = project.Singular(o.kind)
	}
	if o.nonNamespaced {
		r.Scope = project.Cluster
	}
	if o.status {
		r.Subresources = append(r.Subresources, "status")
	}
	if o.scale {
		r.Subresources = append(r.Subresources, "scale")
		paths := project.DefaultScalePaths
		r.Scale = &paths
	}
	return r
}

// sameAs refuses flags given for an existing kind that differ from what its
// markers say: create does not change a kind, and saying nothing would leave
// the user believing it did. Flags left out are not compared.
func (o *createOptions) sameAs(cmd *cobra.Command, existing *project.Resource) error {
	types := project.APIs(existing.Group, existing.Version, project.ControllerPackage(existing.Kind)) + "_types.go"
	has := func(sub string) bool { return slices.Contains(existing.Subresources, sub) }
	var diffs []string
	differ := func(flag string, given, is any, how string) {
		if cmd.Flags().Changed(flag) && fmt.Sprint(given) != fmt.Sprint(is) {
			diffs = append(diffs, fmt.Sprintf("--%s %v: %s/%s %s has %v; %s", flag, given, existing.Group, existing.Version, existing.Kind, is, how))
		}
	}
	marker := "edit the +resource (or +kubebuilder:resource) marker in " + types + " and run generate"
	differ("resource", o.plural, existing.Plural, "to rename the resource, "+marker+" (path=)")
	differ("singular", o.singular, existing.Singular, "to change it, "+marker+" (singular=)")
	differ("short-names", strings.Join(o.shortNames, ","), strings.Join(existing.ShortNames, ","), "to change them, "+marker+" (shortName=)")
	differ("categories", strings.Join(o.categories, ","), strings.Join(existing.Categories, ","), "to change them, "+marker+" (categories=)")
	differ("non-namespaced", o.nonNamespaced, existing.Scope == project.Cluster, "to change the scope, "+marker+" (scope=Cluster or scope=Namespaced); objects already stored keep their keys")
	differ("with-status-subresource", o.status, has("status"), "add or remove +subresource:status in "+types+" and run generate")
	differ("with-scale-subresource", o.scale, has("scale"), "add or remove +subresource:scale in "+types+" (or run create subresource --subresource scale) and run generate")
	differ("controller", o.controller, existing.Controller, "add one with create controller, or remove pkg/controller/"+project.ControllerPackage(existing.Kind)+" and its entry in PROJECT")
	if len(diffs) > 0 {
		return fmt.Errorf("%s/%s %s exists, and create does not change it; these flags differ from it:\n  %s", existing.Group, existing.Version, existing.Kind, strings.Join(diffs, "\n  "))
	}
	return nil
}

func (o *createOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	if err := o.validate(p); err != nil {
		return err
	}
	// --group names the package, or a group in full: the domain itself or
	// one outside it, recorded in PROJECT.
	groups := len(p.Groups)
	if o.group, err = p.CreateGroup(o.group, func(dir string) bool {
		_, err := os.Stat(filepath.Join(root, project.APIs(dir)))
		return err == nil
	}); err != nil {
		return err
	}
	data, err := newTemplateData(root, p)
	if err != nil {
		return err
	}
	data.Group, data.FullGroup, data.Version = o.group, p.FullGroup(o.group), o.version
	data.GroupGoName = project.GroupGoNameMarker(data.FullGroup)
	files := []scaffold.File{{Path: project.APIs(o.group, "doc.go"), Template: "resource/group_doc.go.tmpl"}}
	if o.level >= levelVersion {
		data.ModelPackage = project.OpenAPIModelPackage(p.Module, o.group, o.version)
		files = append(files, scaffold.File{Path: project.APIs(o.group, o.version, "doc.go"), Template: "resource/version_doc.go.tmpl"})
	}
	if o.level >= levelResource {
		more, err := o.resourceFiles(cmd, root, p, api, data)
		if err != nil {
			return err
		}
		files = append(files, more...)
	}
	if o.level >= levelResource || len(p.Groups) != groups {
		record, err := p.Marshal()
		if err != nil {
			return err
		}
		files = append(files, scaffold.File{Path: project.FileName, Content: record, IfExists: scaffold.Replace})
	}
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: files}
	return applyAndGenerate(cmd, root, plan, "everything asked for already exists.")
}

// resourceFiles are the files of the kind being created (types, hooks,
// tests, the controller), and the kind is recorded in p; a kind served in
// another version of the group already gets a new version of itself.
func (o *createOptions) resourceFiles(cmd *cobra.Command, root string, p *project.Project, api *model.API, data *templateData) ([]scaffold.File, error) {
	var files []scaffold.File
	r := o.resource()
	existing := p.Find(r.Group, r.Version, r.Kind)
	// The kind may already be served in another version of the group: this
	// is then a new version of it (like create version, with fresh types).
	var otherVersion *project.Resource
	for _, other := range p.Resources {
		if other.Group == r.Group && other.Kind == r.Kind && other.Version != r.Version {
			otherVersion = other
		}
	}
	if existing == nil && otherVersion != nil {
		if !cmd.Flags().Changed("controller") && r.Controller {
			r.Controller = false
			fmt.Fprintf(cmd.OutOrStdout(), "%s is also served in %s/%s: one controller per kind, none added for %s\n", r.Kind, r.Group, otherVersion.Version, r.Version)
		}
		// Names and scope are the kind's, whichever version serves it.
		again := *otherVersion
		again.Version, again.Controller = r.Version, r.Controller
		r = &again
		marker, err := markStorageVersion(root, p, r.Group, otherVersion.Version, r.Kind)
		if err != nil {
			return nil, err
		}
		files = append(files, marker...)
	}
	if existing == nil {
		if err := p.CheckClash(r); err != nil {
			return nil, err
		}
		// Controllers live in pkg/controller/<kind>: one per kind name.
		for _, other := range p.Resources {
			if r.Controller && other.Controller && other.Kind == r.Kind {
				return nil, fmt.Errorf("--kind %s already has a controller (for %s/%s): pass --controller=false", r.Kind, other.Group, other.Version)
			}
		}
		p.Resources = append(p.Resources, r)
	} else {
		if err := o.sameAs(cmd, existing); err != nil {
			return nil, err
		}
		r = existing
	}
	data.Kind, data.Plural, data.Scope, data.Resource = r.Kind, r.Plural, string(r.Scope), r
	data.GroupGo, data.VersionGo, data.PluralGo = project.GroupGoName(p.FullGroup(o.group)), project.GoName(o.version), project.ClientPlural(r.Kind, r.Plural)
	base := project.APIs(o.group, o.version, project.ControllerPackage(o.kind))
	files = append(files, scaffold.File{Path: base + "_types.go", Template: "resource/types.go.tmpl"})
	if existing == nil && otherVersion != nil {
		// A new version of a kind: its custom subresources are served in
		// every version, with a request type in each.
		var err error
		if files, err = carryToNewVersion(api, *data, o.version, base+"_types.go", files); err != nil {
			return nil, err
		}
	}
	if otherVersion == nil || existing != nil {
		// The REST hooks run from the storage version only: a new version of
		// an existing kind gets none.
		files = append(files, scaffold.File{Path: base + "_hooks.go", Template: "resource/hooks.go.tmpl"})
	}
	files = append(files, scaffold.File{Path: base + "_types_test.go", Template: "resource/types_test.go.tmpl"})
	if r.Controller {
		data.Package = project.ControllerPackage(o.kind)
		data.VersionAlias, data.VersionPackage = o.version, project.APIsImport(p.Module, o.group, o.version)
		dir := project.Controller(data.Package)
		files = append(files,
			scaffold.File{Path: filepath.Join(dir, "controller.go"), Template: "resource/controller.go.tmpl"},
			scaffold.File{Path: filepath.Join(dir, "controller_test.go"), Template: "resource/controller_test.go.tmpl"})
	}
	return files, nil
}
