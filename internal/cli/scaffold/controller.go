package scaffold

import (
	"fmt"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// Controller is the plan of `create controller`: pkg/controller/<kind> for
// a kind of the project at root, or for a built-in kind of k8s.io/api
// (group its package there: apps, core), which PROJECT then records. One
// controller per kind name.
func Controller(root string, p *project.Project, group, version, kind string) (*Plan, error) {
	data, err := NewData(root, p)
	if err != nil {
		return nil, err
	}
	r := p.Find(group, version, kind)
	switch {
	case r != nil && r.External:
	case r != nil:
		data.VersionAlias, data.VersionPackage = version, project.APIsImport(p.Module, group, version)
	default:
		_, pkg, ok := project.BuiltinKind(group, version, kind)
		if !ok {
			return nil, fmt.Errorf("--group %s --version %s --kind %s is neither a resource of this project (see PROJECT) nor a built-in Kubernetes kind (k8s.io/api/%s/%s has no %s)%s", group, version, kind, group, version, kind, p.Suggest(group, version, kind))
		}
		r = &project.Resource{KindDescriptor: project.KindDescriptor{Group: group, Version: version, Kind: kind, Plural: project.Plural(kind), Singular: project.Singular(kind)}, External: true, Package: pkg}
		p.Resources = append(p.Resources, r)
	}
	if r.External {
		data.VersionAlias, data.VersionPackage = project.ImportAlias(r.Package), r.Package
	}
	if other := p.ControllerOf(r); other != nil {
		return nil, fmt.Errorf("--kind %s already has a controller (for %s/%s)", r.Kind, other.Group, other.Version)
	}
	r.Controller = true
	data.KindDescriptor = r.KindDescriptor
	data.clientNames(p, r)
	data.Package = project.ControllerPackage(kind)
	files := controllerFiles(data.Package, !r.External)
	rec, err := record(p)
	if err != nil {
		return nil, err
	}
	return &Plan{Root: root, Data: data, Files: append(files, rec), NothingToDo: fmt.Sprintf("the %s controller already exists.", kind)}, nil
}
