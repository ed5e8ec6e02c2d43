package scaffold

import (
	"path/filepath"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// Data is what project and resource templates see.
type Data struct {
	Name, Module, Domain, Framework, Boilerplate string
	// KindDescriptor is the group (its package name) and version being
	// created, and the kind with its names and scope.
	project.KindDescriptor
	FullGroup string
	// Package is the controller's package name (pkg/controller/<Package>).
	Package string
	// ModelPackage names the OpenAPI definitions of a version's types.
	ModelPackage string
	// Resource is the resource being created.
	Resource *project.Resource
	// VersionAlias imports VersionPackage, the Go package of the kind a controller reconciles.
	VersionAlias, VersionPackage string
	// GroupGo, VersionGo and PluralGo are the clientset's accessor names (StableV1().CronTabs).
	GroupGo, VersionGo, PluralGo string
	// GroupGoName is the +groupGoName marker of a version's doc.go, set
	// when client-gen cannot name the group by itself (cert-manager.io).
	GroupGoName string
	// Subresource, Request and Handler name a custom subresource.
	Subresource, Request, Handler string
	// GoVersion is the Go release of the Dockerfile's builder image (1.26).
	GoVersion string
}

// NewData is the templates' data of the project at root: its names and
// license header.
func NewData(root string, p *project.Project) (*Data, error) {
	header, err := project.Boilerplate(root)
	if err != nil {
		return nil, err
	}
	return &Data{
		Name: filepath.Base(p.Module), Module: p.Module, Domain: p.Domain,
		Framework: version.Module, Boilerplate: header,
	}, nil
}

// groupVersion sets the group (its package name) and version d names, with
// the names its doc.go files need.
func (d *Data) groupVersion(p *project.Project, group, version string) {
	d.Group, d.FullGroup, d.Version = group, p.FullGroup(group), version
	d.GroupGoName = project.GroupGoNameMarker(d.FullGroup)
	if version != "" {
		d.ModelPackage = project.OpenAPIModelPackage(p.Module, group, version)
	}
}

// clientNames sets the clientset's accessor names of r (StableV1().CronTabs).
func (d *Data) clientNames(p *project.Project, r *project.Resource) {
	d.GroupGo, d.VersionGo, d.PluralGo = project.GroupGoName(p.FullGroup(r.Group)), project.GoName(r.Version), project.ClientPlural(r.Kind, r.Plural)
}

// record is the PROJECT file p now makes.
func record(p *project.Project) (File, error) {
	b, err := p.Marshal()
	if err != nil {
		return File{}, err
	}
	return File{Path: project.FileName, Content: b, IfExists: Replace}, nil
}
