package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
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
the object until you edit it.`,
		Example: `  apiserver-boot create subresource --subresource status --group stable --version v1 --kind CronTab
  apiserver-boot create subresource --subresource scale --group stable --version v1 --kind CronTab --spec-replicas-path .spec.size
  apiserver-boot create subresource --subresource restart --group stable --version v1 --kind CronTab`,
		Args: noArgs,
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
	root, p, err := loadProject()
	if err != nil {
		return err
	}
	for flag, v := range map[string]string{"--subresource": o.name, "--group": o.group, "--version": o.version, "--kind": o.kind} {
		if v == "" {
			return fmt.Errorf("%s is required", flag)
		}
	}
	if err := project.CheckGroupWithoutDomain(o.group, p.Domain); err != nil {
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
	k, err := model.FindResource(filepath.Join(root, project.APIs(o.group, o.version)), o.kind)
	if err != nil {
		return err
	}
	data, err := newTemplateData(root, p)
	if err != nil {
		return err
	}
	data.Group, data.Version, data.Kind, data.Plural, data.Subresource = o.group, o.version, o.kind, r.Plural, o.name
	var marker string
	var files []scaffold.File
	switch o.name {
	case "status":
		marker = "+subresource:status"
	case "scale":
		for _, p := range []struct{ flag, path string }{{"--spec-replicas-path", o.specPath}, {"--status-replicas-path", o.statusPath}, {"--label-selector-path", o.selectorPath}} {
			if p.path == "" && p.flag == "--label-selector-path" {
				continue
			}
			if err := project.ValidateFieldPath(p.path); err != nil {
				return fmt.Errorf("%s: %w", p.flag, err)
			}
		}
		marker = fmt.Sprintf("+subresource:scale:specpath=%s,statuspath=%s", o.specPath, o.statusPath)
		if o.selectorPath != "" {
			marker += ",selectorpath=" + o.selectorPath
		}
		r.Scale = &project.ScalePaths{SpecReplicasPath: o.specPath, StatusReplicasPath: o.statusPath, LabelSelectorPath: o.selectorPath}
	default:
		data.Request, data.Handler = o.kind+project.GoName(o.name), project.GoName(o.name)
		marker = fmt.Sprintf("+subresource:rest:path=%s,request=%s", o.name, data.Request)
		base := strings.ToLower(o.kind) + "_" + o.name
		files = append(files,
			scaffold.File{Path: project.APIs(o.group, o.version, base+"_types.go"), Template: "resource/subresource_request_types.go.tmpl"},
			scaffold.File{Path: project.APIs(o.group, o.version, base+"_rest.go"), Template: "resource/subresource_rest.go.tmpl"})
	}
	edited, changed, err := model.AddTypeMarker(k.Path, k.Src, o.kind, marker)
	if err != nil {
		return err
	}
	if changed {
		rel, _ := filepath.Rel(root, k.Path)
		files = append(files, scaffold.File{Path: rel, Content: edited, IfExists: scaffold.Replace})
	}
	if !r.HasSubresource(o.name) {
		r.Subresources = append(r.Subresources, o.name)
	}
	record, err := p.Marshal()
	if err != nil {
		return err
	}
	files = append(files, scaffold.File{Path: project.FileName, Content: record, IfExists: scaffold.Replace})
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: files}
	return applyAndGenerate(cmd, root, plan, fmt.Sprintf("%s already has the %s subresource.", o.kind, o.name))
}
