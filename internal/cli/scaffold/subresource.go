package scaffold

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/templates"
)

// Subresource is the plan of `create subresource` for r, a kind of the
// project at root (api its API as read from source): status or scale (a
// marker on the kind's type; scale its paths), or a custom subresource
// (custom).
func Subresource(root string, p *project.Project, api *model.API, r *project.Resource, name string, scale *project.ScalePaths) (*Plan, error) {
	k, err := model.FindResource(filepath.Join(root, project.APIs(r.Group, r.Version)), r.Kind)
	if err != nil {
		return nil, err
	}
	data, err := NewData(root, p)
	if err != nil {
		return nil, err
	}
	data.KindDescriptor, data.Subresource = r.KindDescriptor, name
	var marker string
	switch name {
	case "status":
		marker = "+subresource:status"
	case "scale":
		marker = fmt.Sprintf("+subresource:scale:specpath=%s,statuspath=%s", scale.SpecReplicasPath, scale.StatusReplicasPath)
		if scale.LabelSelectorPath != "" {
			marker += ",selectorpath=" + scale.LabelSelectorPath
		}
		r.Scale = scale
	default:
		return custom(root, p, api, data, name)
	}
	var out []File
	edited, changed, err := model.AddTypeMarker(k.Path, k.Src, r.Kind, marker)
	if err != nil {
		return nil, err
	}
	if changed {
		rel, _ := filepath.Rel(root, k.Path)
		out = append(out, File{Path: rel, Content: edited, IfExists: Replace})
	}
	if !r.HasSubresource(name) {
		r.Subresources = append(r.Subresources, name)
	}
	rec, err := record(p)
	if err != nil {
		return nil, err
	}
	return &Plan{Root: root, Data: data, Files: append(out, rec), NothingToDo: fmt.Sprintf("%s already has the %s subresource.", r.Kind, name)}, nil
}

// custom adds a custom subresource to the kind, in every version of it: the
// +subresource:rest marker and the request type in each version that lacks
// them, and the handler once, in the storage version. Re-running it, for any
// version, adds only what is missing (a version created since, or a project
// an earlier release scaffolded with the request type in one version).
func custom(root string, p *project.Project, api *model.API, data *Data, name string) (*Plan, error) {
	var k *model.Kind
	g := api.Group(data.Group)
	if g != nil {
		k = g.Kind(data.Kind)
	}
	if k == nil {
		return nil, fmt.Errorf("no type %s with a +resource marker in pkg/apis/%s", data.Kind, data.Group)
	}
	sub := restSubresource(g, k, name)
	out, err := subresourceFiles(root, *data, g, k, sub)
	if err != nil {
		return nil, err
	}
	for _, r := range p.Resources {
		if r.Group == data.Group && r.Kind == data.Kind && !r.External && !r.HasSubresource(name) {
			r.Subresources = append(r.Subresources, name)
		}
	}
	rec, err := record(p)
	if err != nil {
		return nil, err
	}
	out = append(out, rec)
	where := fmt.Sprintf("served in %s with the request type %s in each, and handled by (*%s).%s in pkg/apis/%s/%s",
		strings.Join(k.Versions, ", "), sub.Request, k.Strategy, sub.Handler, data.Group, k.StorageVersion)
	plan := &Plan{Root: root, Data: data, Files: out, NothingToDo: fmt.Sprintf("%s already has the %s subresource, %s.", data.Kind, name, where)}
	if len(k.Versions) > 1 && changes(root, out) {
		plan.Notes = append(plan.Notes, fmt.Sprintf("%s is served in %d versions: the %s subresource is %s, its storage version.", data.Kind, len(k.Versions), name, where))
	}
	return plan, nil
}

// subresourceFiles are the files giving kind k of group g the custom
// subresource sub: the marker and the request type in each version, and
// the handler once, as a method of the storage version's strategy, whose
// hooks serve every version.
func subresourceFiles(root string, data Data, g *model.Group, k *model.Kind, sub model.RESTSubresource) ([]File, error) {
	var out []File
	for _, name := range k.Versions {
		v := g.Version(name)
		kf, err := model.FindResource(v.Dir, data.Kind)
		if err != nil {
			return nil, err
		}
		edited, requests, err := carrySubresources(data, g, k, name, kf.Path, kf.Src, func(t string) bool { _, ok := v.Declared[t]; return ok }, []model.RESTSubresource{sub})
		if err != nil {
			return nil, err
		}
		if !bytes.Equal(edited, kf.Src) {
			rel, _ := filepath.Rel(root, kf.Path)
			out = append(out, File{Path: rel, Content: edited, IfExists: Replace})
		}
		out = append(out, requests...)
	}
	if _, ok := g.Version(k.StorageVersion).Methods(k.Strategy)[sub.Handler]; !ok {
		d := data
		d.Version, d.Subresource, d.Request, d.Handler = k.StorageVersion, sub.Path, sub.Request, sub.Handler
		b, err := templates.Render("resource/subresource_rest.go.tmpl", &d)
		if err != nil {
			return nil, err
		}
		out = append(out, File{Path: project.APIs(data.Group, k.StorageVersion, strings.ToLower(data.Kind)+"_"+sub.Path+"_rest.go"), Content: b})
	}
	return out, nil
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
			if vk.Kind != k.Kind {
				continue
			}
			if s, ok := vk.Subresource(path); ok {
				return s
			}
		}
	}
	return model.RESTSubresource{Path: path, Request: k.Kind + project.GoName(path), Handler: project.GoName(path)}
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
func carrySubresources(data Data, g *model.Group, k *model.Kind, version, path string, src []byte, declares func(string) bool, subs []model.RESTSubresource) ([]byte, []File, error) {
	var out []File
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
		out = append(out, File{Path: project.APIs(data.Group, version, strings.ToLower(data.Kind)+"_"+sub.Path+"_types.go"), Content: b})
	}
	return src, out, nil
}

// changes tells whether writing plan would change anything besides PROJECT.
func changes(root string, plan []File) bool {
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
