package generators

import (
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"

	applyargs "k8s.io/code-generator/cmd/applyconfiguration-gen/args"
	applygen "k8s.io/code-generator/cmd/applyconfiguration-gen/generators"
	clientargs "k8s.io/code-generator/cmd/client-gen/args"
	clientgen "k8s.io/code-generator/cmd/client-gen/generators"
	clienttypes "k8s.io/code-generator/cmd/client-gen/types"
	informerargs "k8s.io/code-generator/cmd/informer-gen/args"
	informergen "k8s.io/code-generator/cmd/informer-gen/generators"
	listerargs "k8s.io/code-generator/cmd/lister-gen/args"
	listergen "k8s.io/code-generator/cmd/lister-gen/generators"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/namer"
	"k8s.io/gengo/v2/types"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// The client generators of k8s.io/code-generator, over the shared universe:
// a typed clientset, listers, informers and apply configurations under
// pkg/client, for every kind (tagged +genclient in memory, see tagClients).

func (api *State) clientPackage(parts ...string) (dir, pkg string) {
	return filepath.Join(append([]string{api.Root, "pkg", "client"}, parts...)...), path.Join(append([]string{api.Module, "pkg", "client"}, parts...)...)
}

// pluralExceptions tells the client generators the resource names that
// differ from what gengo would guess from the kind (--resource oxen).
func (api *State) pluralExceptions() map[string]string {
	guess := namer.NewAllLowercasePluralNamer(nil)
	out := map[string]string{}
	for _, g := range api.Groups {
		for _, k := range g.Kinds {
			if guess.Name(&types.Type{Name: types.Name{Name: k.Kind}}) != k.Plural {
				out[k.Kind] = strings.ToUpper(k.Plural[:1]) + k.Plural[1:]
			}
		}
	}
	return out
}

// pluralExceptionList is pluralExceptions in the generators' flag form (Kind:Plural).
func (api *State) pluralExceptionList() []string {
	var out []string
	for _, kind := range slices.Sorted(maps.Keys(api.pluralExceptions())) {
		out = append(out, kind+":"+api.pluralExceptions()[kind])
	}
	return out
}

func (api *State) groupVersions() []clienttypes.GroupVersions {
	var out []clienttypes.GroupVersions
	for _, g := range api.Groups {
		gv := clienttypes.GroupVersions{PackageName: g.Name, Group: clienttypes.Group(g.Name)}
		for _, v := range g.Versions {
			gv.Versions = append(gv.Versions, clienttypes.PackageVersion{Version: clienttypes.Version(v.Name), Package: v.Package})
		}
		out = append(out, gv)
	}
	return out
}

type applyConfigurations struct{}

func (applyConfigurations) Name() string                 { return "applyconfiguration" }
func (applyConfigurations) Packages(api *State) []string { return nil }
func (applyConfigurations) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := applyargs.New()
	args.OutputDir, args.OutputPkg = api.clientPackage("applyconfiguration")
	args.GoHeaderFile = api.headerFile()
	c, out := contextFor(base, applygen.NameSystems(), applygen.DefaultNameSystem(), api.versionPackages())
	return execute("applyconfiguration", c, out, applygen.GetTargets(c, args))
}

type clientset struct{}

func (clientset) Name() string                 { return "clientset" }
func (clientset) Packages(api *State) []string { return nil }
func (clientset) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := clientargs.New()
	args.PluralExceptions = api.pluralExceptionList()
	args.OutputDir, args.OutputPkg = api.clientPackage("clientset")
	args.ClientsetName = "versioned"
	args.GoHeaderFile = api.headerFile()
	args.Groups = api.groupVersions()
	_, args.ApplyConfigurationPackage = api.clientPackage("applyconfiguration")
	args.PrefersProtobuf = !api.protobuf.Partial // generated types speak protobuf (zz_generated.protobuf.go)
	c, out := contextFor(base, clientgen.NameSystems(api.pluralExceptions()), clientgen.DefaultNameSystem(), api.versionPackages())
	return execute("clientset", c, out, clientgen.GetTargets(c, args))
}

type listers struct{}

func (listers) Name() string                 { return "listers" }
func (listers) Packages(api *State) []string { return nil }
func (listers) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := listerargs.New()
	args.PluralExceptions = api.pluralExceptionList()
	args.OutputDir, args.OutputPkg = api.clientPackage("listers")
	args.GoHeaderFile = api.headerFile()
	c, out := contextFor(base, listergen.NameSystems(api.pluralExceptions()), listergen.DefaultNameSystem(), api.versionPackages())
	return execute("listers", c, out, listergen.GetTargets(c, args))
}

type informers struct{}

func (informers) Name() string                 { return "informers" }
func (informers) Packages(api *State) []string { return nil }
func (informers) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := informerargs.New()
	args.PluralExceptions = api.pluralExceptionList()
	args.OutputDir, args.OutputPkg = api.clientPackage("informers")
	args.GoHeaderFile = api.headerFile()
	_, args.VersionedClientSetPackage = api.clientPackage("clientset", "versioned")
	_, args.ListersPackage = api.clientPackage("listers")
	c, out := contextFor(base, informergen.NameSystems(api.pluralExceptions()), informergen.DefaultNameSystem(), api.versionPackages())
	return execute("informers", c, out, informergen.GetTargets(c, args))
}

// tagClients marks every kind +genclient (and +genclient:nonNamespaced for
// cluster-scoped ones) in the shared universe, so users need not: the
// +resource marker already says the type is served. A group whose first
// label has a dash (cert-manager.io) gets the Go name the clients need
// (+groupGoName=CertManager), where its doc.go does not give one.
func tagClients(u types.Universe, api *State) {
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			pkg := u.Package(v.Package)
			if name := project.GroupGoNameMarker(g.FullName); name != "" && !slices.ContainsFunc(pkg.Comments, func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "+groupGoName=") }) {
				pkg.Comments = append(pkg.Comments, "+groupGoName="+name)
			}
			for _, k := range v.Kinds {
				t := pkg.Types[k.Kind]
				if t == nil {
					continue
				}
				t.CommentLines = append(t.CommentLines, "+genclient")
				if !k.Namespaced() {
					t.CommentLines = append(t.CommentLines, "+genclient:nonNamespaced")
				}
				if !k.StatusSubresource {
					t.CommentLines = append(t.CommentLines, "+genclient:noStatus")
				}
			}
		}
	}
}
