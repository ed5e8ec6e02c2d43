package generators

import (
	"fmt"
	"path"
	"path/filepath"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"

	conversionargs "k8s.io/code-generator/cmd/conversion-gen/args"
	conversiongen "k8s.io/code-generator/cmd/conversion-gen/generators"
	deepcopyargs "k8s.io/code-generator/cmd/deepcopy-gen/args"
	deepcopygen "k8s.io/code-generator/cmd/deepcopy-gen/generators"
	defaulterargs "k8s.io/code-generator/cmd/defaulter-gen/args"
	defaultergen "k8s.io/code-generator/cmd/defaulter-gen/generators"
	"k8s.io/gengo/v2"
	"k8s.io/gengo/v2/generator"
	"k8s.io/gengo/v2/types"
	openapiargs "k8s.io/kube-openapi/cmd/openapi-gen/args"
	openapigen "k8s.io/kube-openapi/pkg/generators"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// The upstream generators, used as libraries over the shared universe.

func (api *State) headerFile() string {
	return filepath.Join(api.Root, filepath.FromSlash(project.BoilerplateFile))
}

func (api *State) versionPackages() []string {
	var out []string
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			out = append(out, v.Package)
		}
	}
	return out
}

func execute(name string, c *generator.Context, out *memoryFiles, targets []generator.Target) ([]files.File, error) {
	if err := c.ExecuteTargets(targets); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out.files, nil
}

// deepcopy is k8s.io/code-generator's deepcopy-gen: zz_generated.deepcopy.go
// in every internal and versioned package.
type deepcopy struct{}

func (deepcopy) Name() string                 { return "deepcopy" }
func (deepcopy) Packages(api *State) []string { return nil }
func (deepcopy) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := deepcopyargs.New()
	args.OutputFile = "zz_generated.deepcopy.go"
	args.GoHeaderFile = api.headerFile()
	c, out := contextFor(base, deepcopygen.NameSystems(), deepcopygen.DefaultNameSystem(), api.apiPackages())
	return execute("deepcopy", c, out, deepcopygen.GetTargets(c, args))
}

// conversion is conversion-gen: zz_generated.conversion.go in every
// versioned package, converting to and from the internal types.
type conversion struct{}

func (conversion) Name() string { return "conversion" }
func (conversion) Packages(api *State) []string {
	return conversionargs.DefaultBasePeerDirs
}
func (conversion) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := conversionargs.New()
	args.OutputFile = "zz_generated.conversion.go"
	args.GoHeaderFile = api.headerFile()
	args.GeneratedBuildTag = gengo.StdBuildTag
	c, out := contextFor(base, conversiongen.NameSystems(), conversiongen.DefaultNameSystem(), api.versionPackages())
	return execute("conversion", c, out, conversiongen.GetTargets(c, args))
}

// defaulter is defaulter-gen: zz_generated.defaults.go in every versioned
// package, calling the SetDefaults_<Kind> functions (DefaultingFunction).
type defaulter struct{}

func (defaulter) Name() string                 { return "defaulter" }
func (defaulter) Packages(api *State) []string { return nil }
func (defaulter) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := defaulterargs.New()
	args.OutputFile = "zz_generated.defaults.go"
	args.GoHeaderFile = api.headerFile()
	args.GeneratedBuildTag = gengo.StdBuildTag
	c, out := contextFor(base, defaultergen.NameSystems(), defaultergen.DefaultNameSystem(), api.versionPackages())
	return execute("defaulter", c, out, defaultergen.GetTargets(c, args))
}

// modelNames is openapi-gen's model name generator: zz_generated.model_name.go
// in every versioned package, naming each type's OpenAPI definition after the
// package's +k8s:openapi-model-package, as the scheme's definition namer
// expects (without it, kubectl explain cannot find the kinds).
type modelNames struct{}

func (modelNames) Name() string                 { return "openapi-model-names" }
func (modelNames) Packages(api *State) []string { return nil }
func (modelNames) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := openapiargs.New()
	args.OutputModelNameFile = "zz_generated.model_name.go"
	args.GoHeaderFile = api.headerFile()
	boilerplate, err := gengo.GoBoilerplate(args.GoHeaderFile, gengo.StdBuildTag, gengo.StdGeneratedBy)
	if err != nil {
		return nil, err
	}
	c, out := contextFor(base, openapigen.NameSystems(), openapigen.DefaultNameSystem(), api.versionPackages())
	return execute("openapi-model-names", c, out, openapigen.GetModelNameTargets(c, args, boilerplate))
}

// openAPI is kube-openapi's openapi-gen: pkg/openapi/zz_generated.openapi.go
// with the definitions of every versioned type and the types they use.
type openAPI struct{}

// openAPIBase are the packages every apiserver needs definitions from.
var openAPIBase = []string{
	"k8s.io/apimachinery/pkg/apis/meta/v1",
	"k8s.io/apimachinery/pkg/runtime",
	"k8s.io/apimachinery/pkg/version",
}

func (openAPI) Name() string { return "openapi" }
func (openAPI) Packages(api *State) []string {
	if api.HasScale() {
		return append(append([]string(nil), openAPIBase...), "k8s.io/api/autoscaling/v1") // /scale serves its Scale
	}
	return openAPIBase
}
func (openAPI) Generate(api *State, base *generator.Context) ([]files.File, error) {
	args := openapiargs.New()
	args.OutputDir = filepath.Join(api.Root, filepath.FromSlash(project.OpenAPIDir))
	args.OutputPkg = path.Join(api.Module, project.OpenAPIDir)
	args.OutputFile = "zz_generated.openapi.go"
	args.GoHeaderFile = api.headerFile()
	boilerplate, err := gengo.GoBoilerplate(args.GoHeaderFile, gengo.StdBuildTag, gengo.StdGeneratedBy)
	if err != nil {
		return nil, err
	}
	c, out := contextFor(base, openapigen.NameSystems(), openapigen.DefaultNameSystem(), base.Inputs)
	c.Universe = enumsOnly(base.Universe)
	// A package openapi-gen adds to its universe is the shared one's too.
	defer func() {
		for path, pkg := range c.Universe {
			if _, ok := base.Universe[path]; !ok {
				base.Universe[path] = pkg
			}
		}
	}()
	targets := openapigen.GetOpenAPITargets(c, args, boilerplate)
	for name := range c.FileTypes {
		if name != generator.GoFileType {
			c.FileTypes[name] = discardFiles{} // the API rule violation report
		}
	}
	return execute("openapi", c, out, targets)
}

// enumsOnly is the universe as openapi-gen reads it: every package, with
// only its enum types and their values. openapi-gen looks for every enum
// and its values across the whole universe again for each type it writes
// (parseEnums, called from newOpenAPITypeWriter): every type and constant of
// every loaded package (syscall's thousands of constants among them) each
// time, and nothing else of it reads a package's types or constants (it
// asks the universe for packages, for their comments, and for the builtin
// string). An enum is an alias of string whose comment has +enum, and its
// values are the constants of that type (kube-openapi's isEnumType), so what
// is kept is exactly what parseEnums finds, with the builtin types (string
// among them). The rest of a package (its path, comments, functions,
// variables) and every type kept are shared with u. Which types openapi-gen
// writes comes from the context's order, computed over u.
func enumsOnly(u types.Universe) types.Universe {
	stringType := u.Type(types.Name{Name: "string"})
	enums := map[types.Name]bool{}
	for _, p := range u {
		for _, t := range p.Types {
			if t.Kind == types.Alias && t.Underlying == stringType && gengo.ExtractCommentTags("+", t.CommentLines)["enum"] != nil {
				enums[t.Name] = true
			}
		}
	}
	out := make(types.Universe, len(u))
	for path, p := range u {
		cp := *p
		cp.Types, cp.Constants = map[string]*types.Type{}, map[string]*types.Type{}
		for name, t := range p.Types {
			// The package "" holds the builtin types and every unnamed
			// one (pointers, slices, maps: most of the universe's types).
			if enums[t.Name] || path == "" && t.Kind == types.Builtin {
				cp.Types[name] = t
			}
		}
		for name, c := range p.Constants {
			if c.Underlying != nil && enums[c.Underlying.Name] {
				cp.Constants[name] = c
			}
		}
		out[path] = &cp
	}
	return out
}
