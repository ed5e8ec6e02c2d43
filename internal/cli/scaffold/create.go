package scaffold

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// Level is how much `create` makes: a group, a version of it, or a
// resource in that version.
type Level int

const (
	LevelGroup Level = iota
	LevelVersion
	LevelResource
)

// CreateOptions are the flags of `create group [version [resource]]`,
// checked by the command.
type CreateOptions struct {
	Level                  Level
	Group, Version, Kind   string
	Plural, Singular       string
	ShortNames, Categories []string
	NonNamespaced          bool
	Status, Scale          bool
	Controller             bool
	// Given tells whether a flag (its name without dashes) was given: flags
	// left out are not compared with an existing kind, and leave choices to
	// the scaffold.
	Given func(flag string) bool
}

// Create is the plan of `create group [version [resource]]` in the project
// at root (p, and api its API as read from source): the group's and
// version's doc.go, the kind's files (resourceFiles), and PROJECT when it
// records something new. --group names the package, or a group in full:
// the domain itself or one outside it, recorded in PROJECT.
func Create(root string, p *project.Project, api *model.API, o CreateOptions) (*Plan, error) {
	groups := len(p.Groups)
	group, err := p.CreateGroup(o.Group, func(dir string) bool {
		_, err := os.Stat(filepath.Join(root, project.APIs(dir)))
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	o.Group = group
	data, err := NewData(root, p)
	if err != nil {
		return nil, err
	}
	data.groupVersion(p, o.Group, o.Version)
	plan := &Plan{Root: root, Data: data, NothingToDo: "everything asked for already exists."}
	plan.Files = []File{{Path: project.APIs(o.Group, "doc.go"), Template: "resource/group_doc.go.tmpl"}}
	if o.Level >= LevelVersion {
		plan.Files = append(plan.Files, File{Path: project.APIs(o.Group, o.Version, "doc.go"), Template: "resource/version_doc.go.tmpl"})
	}
	if o.Level >= LevelResource {
		if err := o.resourceFiles(plan, p, api, data); err != nil {
			return nil, err
		}
	}
	if o.Level >= LevelResource || len(p.Groups) != groups {
		f, err := record(p)
		if err != nil {
			return nil, err
		}
		plan.Files = append(plan.Files, f)
	}
	return plan, nil
}

// given tells whether flag was given (none, without Given).
func (o *CreateOptions) given(flag string) bool { return o.Given != nil && o.Given(flag) }

// resource is the resource the flags describe, with the names and paths
// they leave out.
func (o *CreateOptions) resource() *project.Resource {
	r := &project.Resource{KindDescriptor: project.KindDescriptor{
		Group: o.Group, Version: o.Version, Kind: o.Kind,
		Plural: o.Plural, Singular: o.Singular, ShortNames: o.ShortNames, Categories: o.Categories,
		Scope: project.Namespaced,
	}, Controller: o.Controller}
	if r.Plural == "" {
		r.Plural = project.Plural(o.Kind)
	}
	if r.Singular == "" {
		r.Singular = project.Singular(o.Kind)
	}
	if o.NonNamespaced {
		r.Scope = project.Cluster
	}
	if o.Status {
		r.Subresources = append(r.Subresources, "status")
	}
	if o.Scale {
		r.Subresources = append(r.Subresources, "scale")
		paths := project.DefaultScalePaths
		r.Scale = &paths
	}
	return r
}

// resourceFiles adds to plan the files of the kind being created (types,
// hooks, tests, the controller), and records the kind in p; a kind served
// in another version of the group gets a new version of itself.
func (o *CreateOptions) resourceFiles(plan *Plan, p *project.Project, api *model.API, data *Data) error {
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
	newVersion := existing == nil && otherVersion != nil
	if newVersion {
		if !o.given("controller") && r.Controller {
			r.Controller = false
			plan.Notes = append(plan.Notes, fmt.Sprintf("%s is also served in %s/%s: one controller per kind, none added for %s", r.Kind, r.Group, otherVersion.Version, r.Version))
		}
		// Names and scope are the kind's, whichever version serves it.
		again := *otherVersion
		again.Version, again.Controller = r.Version, r.Controller
		r = &again
		marker, err := markStorageVersion(plan.Root, p, r.Group, otherVersion.Version, r.Kind)
		if err != nil {
			return err
		}
		plan.Files = append(plan.Files, marker...)
	}
	r, err := o.record(p, r, existing)
	if err != nil {
		return err
	}
	data.KindDescriptor, data.Resource = r.KindDescriptor, r
	data.clientNames(p, r)
	base := project.APIs(o.Group, o.Version, project.ControllerPackage(o.Kind))
	plan.Files = append(plan.Files, File{Path: base + "_types.go", Template: "resource/types.go.tmpl"})
	if newVersion {
		// A new version of a kind: its custom subresources are served in
		// every version, with a request type in each.
		if plan.Files, err = carryToNewVersion(api, *data, o.Version, base+"_types.go", plan.Files); err != nil {
			return err
		}
	}
	if otherVersion == nil || existing != nil {
		// The REST hooks run from the storage version only: a new version of
		// an existing kind gets none.
		plan.Files = append(plan.Files, File{Path: base + "_hooks.go", Template: "resource/hooks.go.tmpl"})
	}
	plan.Files = append(plan.Files, File{Path: base + "_types_test.go", Template: "resource/types_test.go.tmpl"})
	if r.Controller {
		data.Package = project.ControllerPackage(o.Kind)
		data.VersionAlias, data.VersionPackage = o.Version, project.APIsImport(p.Module, o.Group, o.Version)
		plan.Files = append(plan.Files, controllerFiles(data.Package, true)...)
	}
	return nil
}

// record adds r to p, unless it exists: then the flags given must not
// differ from it (sameAs), and it is what the files are made for.
func (o *CreateOptions) record(p *project.Project, r, existing *project.Resource) (*project.Resource, error) {
	if existing != nil {
		return existing, o.sameAs(r, existing)
	}
	if err := p.CheckClash(r); err != nil {
		return nil, err
	}
	if other := p.ControllerOf(r); r.Controller && other != nil {
		return nil, fmt.Errorf("--kind %s already has a controller (for %s/%s): pass --controller=false", r.Kind, other.Group, other.Version)
	}
	p.Resources = append(p.Resources, r)
	return r, nil
}

// sameAs refuses flags given for an existing kind that differ from what its
// markers say (r is what the flags describe): create does not change a
// kind, and saying nothing would leave the user believing it did. Flags
// left out are not compared.
func (o *CreateOptions) sameAs(r, existing *project.Resource) error {
	types := project.APIs(existing.Group, existing.Version, project.ControllerPackage(existing.Kind)) + "_types.go"
	has := func(sub string) bool { return slices.Contains(existing.Subresources, sub) }
	var diffs []string
	differ := func(flag string, given, is any, how string) {
		if o.given(flag) && fmt.Sprint(given) != fmt.Sprint(is) {
			diffs = append(diffs, fmt.Sprintf("--%s %v: %s/%s %s has %v; %s", flag, given, existing.Group, existing.Version, existing.Kind, is, how))
		}
	}
	marker := "edit the +resource (or +kubebuilder:resource) marker in " + types + " and run generate"
	differ("resource", o.Plural, existing.Plural, "to rename the resource, "+marker+" (path=)")
	differ("singular", o.Singular, existing.Singular, "to change it, "+marker+" (singular=)")
	differ("short-names", strings.Join(r.ShortNames, ","), strings.Join(existing.ShortNames, ","), "to change them, "+marker+" (shortName=)")
	differ("categories", strings.Join(r.Categories, ","), strings.Join(existing.Categories, ","), "to change them, "+marker+" (categories=)")
	differ("non-namespaced", o.NonNamespaced, existing.Scope == project.Cluster, "to change the scope, "+marker+" (scope=Cluster or scope=Namespaced); objects already stored keep their keys")
	differ("with-status-subresource", o.Status, has("status"), "add or remove +subresource:status in "+types+" and run generate")
	differ("with-scale-subresource", o.Scale, has("scale"), "add or remove +subresource:scale in "+types+" (or run create subresource --subresource scale) and run generate")
	differ("controller", o.Controller, existing.Controller, "add one with create controller, or remove pkg/controller/"+project.ControllerPackage(existing.Kind)+" and its entry in PROJECT")
	if len(diffs) > 0 {
		return fmt.Errorf("%s/%s %s exists, and create does not change it; these flags differ from it:\n  %s", existing.Group, existing.Version, existing.Kind, strings.Join(diffs, "\n  "))
	}
	return nil
}

// controllerFiles are the files of the controller in pkg/controller/<pkg>;
// withTest adds its test (built-in kinds need a kube-apiserver, which the
// in-process test environment is not).
func controllerFiles(pkg string, withTest bool) []File {
	dir := project.Controller(pkg)
	files := []File{{Path: filepath.Join(dir, "controller.go"), Template: "resource/controller.go.tmpl"}}
	if withTest {
		files = append(files, File{Path: filepath.Join(dir, "controller_test.go"), Template: "resource/controller_test.go.tmpl"})
	}
	return files
}
