package generators

import (
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/templates"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// registration writes the scheme registration of every package, the
// strategy hook types of every kind, and pkg/apis/zz_generated.register.go
// listing every group for the apiserver.
type registration struct{}

func (registration) Name() string { return "registration" }

func (registration) Generate(api *State) ([]files.File, error) {
	var out []files.File
	render := func(path, tmpl string, data any) error {
		b, err := templates.Render(tmpl, data)
		if err == nil {
			out = append(out, files.File{Path: path, Content: b})
		}
		return err
	}
	if err := checkNames(api.API); err != nil {
		return nil, err
	}
	if err := checkSubresources(api.API); err != nil {
		return nil, err
	}
	for _, g := range api.Groups {
		// The internal package holds copies of the versions' declarations.
		internalDeclares := map[string]bool{}
		for _, v := range g.Versions {
			for name := range v.Declared {
				internalDeclares[name] = true
			}
		}
		data := map[string]any{"Header": api.Header, "Framework": api.Framework, "Group": g, "KindHelper": !internalDeclares["Kind"]}
		if err := render(filepath.Join(g.Dir, "zz_generated.register.go"), "generated/internal_register.go.tmpl", data); err != nil {
			return nil, err
		}
		for _, v := range g.Versions {
			_, userKind := v.Declared["Kind"]
			data := map[string]any{"Header": api.Header, "Framework": api.Framework, "Group": g, "Version": v, "KindHelper": !userKind, "Own": v.OwnRegistration(), "OwnFile": ""}
			if own := v.OwnRegistration(); len(own) > 0 {
				data["OwnFile"] = filepath.Base(v.Declared[own[0]].Filename)
			}
			if err := render(filepath.Join(v.Dir, "zz_generated.register.go"), "generated/versioned_register.go.tmpl", data); err != nil {
				return nil, err
			}
			// The scaffolded <kind>_types_test.go run against an in-process apiserver.
			env := map[string]any{"Header": api.Header, "Framework": api.Framework, "Module": api.Module, "Name": path.Base(api.Module), "Package": v.Name + "_test"}
			if err := render(filepath.Join(v.Dir, "zz_generated.testenv_test.go"), "generated/testenv_test.go.tmpl", env); err != nil {
				return nil, err
			}
		}
	}
	if err := render(filepath.Join(api.Root, project.APIs("zz_generated.register.go")), "generated/apis_register.go.tmpl", api); err != nil {
		return nil, err
	}
	// One conformance test per resource, run by `go test ./...` in the project.
	if err := render(filepath.Join(api.Root, project.APIs("zz_generated.conformance_test.go")), "generated/conformance_test.go.tmpl", api); err != nil {
		return nil, err
	}
	return out, nil
}

// checkNames refuses types that declare a name the generated code of their
// package declares, naming both. The registration's own names
// (model.RegistrationNames: GroupName, SchemeGroupVersion, SchemeBuilder,
// AddToScheme...) are not among them: the generated registration declares
// those the package does not and uses the package's own, as kubebuilder's
// groupversion_info.go and the apimachinery register.go declare them; the
// Kind(string) helper is left out where the package declares Kind itself
// (Gateway API's `type Kind string`). A package declaring its own scheme
// builder gets AddToServerScheme and addGeneratedTypes beside it.
func checkNames(api *model.API) error {
	var errs []string
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			// The names of defaulter-gen, conversion-gen and validation-gen
			// in the same package, and of the strategies and scheme hooks.
			generated := []string{"RegisterDefaults", "RegisterConversions", "RegisterValidations"}
			if len(v.OwnRegistration()) > 0 {
				generated = append(generated, "AddToServerScheme", "addGeneratedTypes")
			}
			for _, k := range v.Kinds {
				generated = append(generated, k.Strategy, k.Kind+"SchemeFns", "SetDefaults_"+k.Kind)
			}
			// validation-gen's Validate_<Type>, for the package's types.
			for name := range v.Declared {
				if typ, ok := strings.CutPrefix(name, "Validate_"); ok {
					if _, declared := v.Declared[typ]; declared {
						generated = append(generated, name)
					}
				}
			}
			for _, name := range generated {
				if pos, ok := v.Declared[name]; ok {
					errs = append(errs, fmt.Sprintf("%s: %s is declared by the generated code of package %s (zz_generated.*.go): rename or remove it", pos, name, v.Name))
				}
			}
			// A group version the package registers its kinds under
			// (kubebuilder's GroupVersion) is the one it is served as;
			// others it declares for other packages are left alone.
			for _, gv := range v.ServedGroupVersions() {
				if (gv.Group != "" && gv.Group != g.FullName) || (gv.Version != "" && gv.Version != v.Name) {
					errs = append(errs, fmt.Sprintf("%s: %s is %s/%s, and the package is served as %s/%s (pkg/apis/%s/%s with the domain of PROJECT): make them the same",
						gv.Pos, gv.Name, gv.Group, gv.Version, g.FullName, v.Name, g.Name, v.Name))
				}
			}
		}
	}
	sort.Strings(errs)
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// checkSubresources refuses custom subresources the server could not serve.
// A custom subresource belongs to the kind: it is served in every version
// of it, so each version declares the request type (converted through the
// internal type, as the kind is), and the handler is a method of the storage
// version's strategy, whose hooks serve every version. A project an earlier
// release scaffolded has the request type in one version only: the error
// says which command adds the rest.
func checkSubresources(api *model.API) error {
	var errs []string
	for _, g := range api.Groups {
		for _, k := range g.Kinds {
			stored := g.Version(k.StorageVersion)
			for _, sub := range k.Subresources {
				var missing []string
				for _, name := range k.Versions {
					if !slices.Contains(g.Version(name).Requests, sub.Request) {
						missing = append(missing, "pkg/apis/"+g.Name+"/"+name)
					}
				}
				if len(missing) > 0 {
					verb := "declares"
					if len(missing) > 1 {
						verb = "declare"
					}
					// The command copies the type from the version that
					// declares it, the storage version first.
					copyFrom := ""
					if v := g.RequestSource(k, sub.Request); v != nil {
						from := v.Declared[sub.Request]
						copyFrom = fmt.Sprintf(", or copy the type from %s:%d", relTo(api.Root, from.Filename), from.Line)
					}
					errs = append(errs, fmt.Sprintf("the %s subresource of %s is served in every version of the kind, but %s %s no %s (with a +subresource:request marker), the body of its requests: run `apiserver-boot create subresource --subresource %s --group %s --version %s --kind %s`, which adds it (and the +subresource:rest marker) to every version, copied from the version that declares it%s",
						sub.Path, k.Kind, strings.Join(missing, " and "), verb, sub.Request, sub.Path, g.Name, k.StorageVersion, k.Kind, copyFrom))
				}
				if _, ok := stored.Methods(k.Strategy)[sub.Handler]; !ok {
					hint := fmt.Sprintf("declare func (*%s) %s(ctx context.Context, obj *%s.%s, req *%s.%s) (runtime.Object, error) there", k.Strategy, sub.Handler, g.Name, k.Kind, g.Name, sub.Request)
					for _, v := range g.Versions {
						if pos, ok := v.Methods(k.Strategy)[sub.Handler]; ok {
							hint = fmt.Sprintf("move it there from %s:%d", relTo(api.Root, pos.Filename), pos.Line)
							break
						}
					}
					errs = append(errs, fmt.Sprintf("pkg/apis/%s/%s: the %s subresource of %s calls (*%s).%s, which is not declared in %s's storage version %s, whose strategy serves every version: %s",
						g.Name, k.StorageVersion, sub.Path, k.Kind, k.Strategy, sub.Handler, k.Kind, k.StorageVersion, hint))
				}
			}
		}
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

func relTo(root, path string) string {
	if rel, err := filepath.Rel(root, path); err == nil {
		return rel
	}
	return path
}

// controllerWiring writes, for every controller, the code that feeds its
// Reconcile, and the list the controller-manager runs.
type controllerWiring struct{}

func (controllerWiring) Name() string { return "controllers" }

func (controllerWiring) Generate(api *State) ([]files.File, error) {
	var out []files.File
	dir := filepath.Join(api.Root, filepath.FromSlash(project.ControllerDir))
	for _, c := range api.Controllers {
		b, err := templates.Render("generated/controller.go.tmpl", map[string]any{
			"Header": api.Header, "Framework": api.Framework, "Module": api.Module, "PackageName": c.PackageName,
			"Kind": c.Kind, "Version": c.Version, "Plural": c.Plural, "VersionPackage": c.VersionPackage,
			"GroupGo": c.GroupGo, "VersionGo": c.VersionGo, "PluralGo": c.PluralGo, "Namespaced": c.Namespaced(),
			"External": c.External, "FullGroup": c.FullGroup, "VersionAlias": c.VersionAlias,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, files.File{Path: filepath.Join(dir, c.PackageName, "zz_generated.controller.go"), Content: b})
	}
	for _, c := range api.Controllers {
		b, err := templates.Render("generated/testenv_test.go.tmpl", map[string]any{
			"Header": api.Header, "Framework": api.Framework, "Module": api.Module, "Name": path.Base(api.Module), "Package": c.PackageName,
		})
		if err != nil {
			return nil, err
		}
		out = append(out, files.File{Path: filepath.Join(dir, c.PackageName, "zz_generated.testenv_test.go"), Content: b})
	}
	data := map[string]any{"Header": api.Header, "Framework": api.Framework, "Module": api.Module, "Controllers": api.Controllers, "HasClient": len(api.Groups) > 0}
	for name, tmpl := range map[string]string{
		filepath.Join(dir, "zz_generated.controllers.go"):                        "generated/controllers.go.tmpl",
		filepath.Join(dir, "sharedinformers", "zz_generated.sharedinformers.go"): "generated/sharedinformers.go.tmpl",
	} {
		b, err := templates.Render(tmpl, data)
		if err != nil {
			return nil, err
		}
		out = append(out, files.File{Path: name, Content: b})
	}
	return out, nil
}
