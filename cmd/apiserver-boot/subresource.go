package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/files"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
	"github.com/apiserver-boot/apiserver-boot/templates"
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
		return o.custom(cmd, root, p, api, data)
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

// custom adds a custom subresource to the kind, in every version of it: the
// +subresource:rest marker and the request type in each version that lacks
// them, and the handler once, in the storage version. Re-running it, for any
// version, adds only what is missing (a version created since, or a project
// an earlier release scaffolded with the request type in one version).
func (o *subresourceOptions) custom(cmd *cobra.Command, root string, p *project.Project, api *model.API, data *templateData) error {
	var k *model.Kind
	g := api.Group(o.group)
	if g != nil {
		k = g.Kind(o.kind)
	}
	if k == nil {
		return fmt.Errorf("no type %s with a +resource marker in pkg/apis/%s", o.kind, o.group)
	}
	sub := restSubresource(g, k, o.name)
	var files []scaffold.File
	for _, name := range k.Versions {
		v := g.Version(name)
		kf, err := model.FindResource(v.Dir, o.kind)
		if err != nil {
			return err
		}
		edited, requests, err := carrySubresources(*data, g, k, name, kf.Path, kf.Src, func(t string) bool { _, ok := v.Declared[t]; return ok }, []model.RESTSubresource{sub})
		if err != nil {
			return err
		}
		if !bytes.Equal(edited, kf.Src) {
			rel, _ := filepath.Rel(root, kf.Path)
			files = append(files, scaffold.File{Path: rel, Content: edited, IfExists: scaffold.Replace})
		}
		files = append(files, requests...)
	}
	// The handler, once: a method of the storage version's strategy, whose
	// hooks serve every version.
	if _, ok := g.Version(k.StorageVersion).Methods(k.Strategy)[sub.Handler]; !ok {
		d := *data
		d.Version, d.Subresource, d.Request, d.Handler = k.StorageVersion, sub.Path, sub.Request, sub.Handler
		b, err := templates.Render("resource/subresource_rest.go.tmpl", &d)
		if err != nil {
			return err
		}
		files = append(files, scaffold.File{Path: project.APIs(o.group, k.StorageVersion, strings.ToLower(o.kind)+"_"+sub.Path+"_rest.go"), Content: b})
	}
	for _, r := range p.Resources {
		if r.Group == o.group && r.Kind == o.kind && !r.External && !r.HasSubresource(o.name) {
			r.Subresources = append(r.Subresources, o.name)
		}
	}
	record, err := p.Marshal()
	if err != nil {
		return err
	}
	files = append(files, scaffold.File{Path: project.FileName, Content: record, IfExists: scaffold.Replace})
	where := fmt.Sprintf("served in %s with the request type %s in each, and handled by (*%s).%s in pkg/apis/%s/%s",
		strings.Join(k.Versions, ", "), sub.Request, k.Strategy, sub.Handler, o.group, k.StorageVersion)
	if len(k.Versions) > 1 && changes(root, files) {
		fmt.Fprintf(cmd.OutOrStdout(), "%s is served in %d versions: the %s subresource is %s, its storage version.\n", o.kind, len(k.Versions), o.name, where)
	}
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: files}
	return applyAndGenerate(cmd, root, plan, fmt.Sprintf("%s already has the %s subresource, %s.", o.kind, o.name, where))
}

// restSubresource is the custom subresource at path of kind k: the one the
// kind has, if any version of it marks it (the storage version's first),
// otherwise one with the default names (CronTab, restart: request
// CronTabRestart, handler Restart).
func restSubresource(g *model.Group, k *model.Kind, path string) model.RESTSubresource {
	if s, ok := k.Subresource(path); ok {
		return s
	}
	for _, v := range g.Versions {
		for _, vk := range v.Kinds {
			if vk.Name != k.Name {
				continue
			}
			if s, ok := vk.Subresource(path); ok {
				return s
			}
		}
	}
	return model.RESTSubresource{Path: path, Request: k.Name + project.GoName(path), Handler: project.GoName(path)}
}

// restMarker is the +subresource:rest marker of sub.
func restMarker(sub model.RESTSubresource) string {
	m := fmt.Sprintf("+subresource:rest:path=%s,request=%s", sub.Path, sub.Request)
	if sub.Handler != project.GoName(sub.Path) {
		m += ",handler=" + sub.Handler
	}
	return m
}

// carrySubresources gives version of kind k of group g the kind's custom
// subresources subs: the +subresource:rest marker on the kind's type, in src
// (the content of the kind's file, at path), returned with the markers it
// lacked, and, for each request type the version does not declare (declares
// tells), that type in <kind>_<subresource>_types.go: copied, with its
// fields and the types of its file it uses, from the version that declares
// it (the storage version first, model.RequestSource), so that no field of
// it is lost; from the template if none does. data names the group and the
// kind.
func carrySubresources(data templateData, g *model.Group, k *model.Kind, version, path string, src []byte, declares func(string) bool, subs []model.RESTSubresource) ([]byte, []scaffold.File, error) {
	var out []scaffold.File
	for _, sub := range subs {
		edited, _, err := model.AddTypeMarker(path, src, data.Kind, restMarker(sub))
		if err != nil {
			return nil, nil, err
		}
		src = edited
		if declares(sub.Request) {
			continue
		}
		var b []byte
		if from := g.RequestSource(k, sub.Request); from != nil {
			b, err = from.CopyTypes([]string{sub.Request}, version, []byte(data.Boilerplate), declares)
		} else {
			d := data
			d.Version, d.Subresource, d.Request, d.Handler = version, sub.Path, sub.Request, sub.Handler
			b, err = templates.Render("resource/subresource_request_types.go.tmpl", &d)
		}
		if err != nil {
			return nil, nil, err
		}
		out = append(out, scaffold.File{Path: project.APIs(data.Group, version, strings.ToLower(data.Kind)+"_"+sub.Path+"_types.go"), Content: b})
	}
	return src, out, nil
}

// changes tells whether writing files would change anything besides PROJECT.
func changes(root string, plan []scaffold.File) bool {
	for _, f := range plan {
		if f.Path == project.FileName {
			continue
		}
		want := f.Content
		if formatted, err := files.FormatGo(f.Path, want); err == nil {
			want = formatted // as Apply writes it
		}
		if b, err := os.ReadFile(filepath.Join(root, f.Path)); err != nil || !bytes.Equal(b, want) {
			return true
		}
	}
	return false
}
