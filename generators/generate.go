// Package generators produces every zz_generated file of a project in one
// process:
//
//  1. Source generators read the versioned types from source (no type
//     checking) and write what the rest of the code refers to: the internal
//     types, scheme registration, strategy hook types and controller wiring.
//  2. The Go packages are then loaded once, into one gengo universe, which
//     every upstream generator (deepcopy, conversion, defaulter from
//     k8s.io/code-generator, openapi from k8s.io/kube-openapi) is handed.
//
// Every file is rendered in memory and must parse and gofmt before anything
// is kept; if any step fails, files already written are restored.
package generators

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"

	"k8s.io/gengo/v2/generator"
	"k8s.io/klog/v2"
)

// File is one generated file: an absolute path and its content.
type File struct {
	Path    string
	Content []byte
}

// Generator is one generator; SourceGenerator and UniverseGenerator say what it works from.
type Generator interface {
	Name() string
}

// SourceGenerator works from the API read from source.
type SourceGenerator interface {
	Generator
	Generate(api *API) ([]File, error)
}

// UniverseGenerator works over the loaded, type-checked universe.
type UniverseGenerator interface {
	Generator
	// Packages lists extra packages the generator needs in the universe.
	Packages(api *API) []string
	Generate(api *API, c *generator.Context) ([]File, error)
}

// The generators, in the order they run: registered here and nowhere else.
var (
	sourceGenerators   = []SourceGenerator{internalTypes{}, registration{}, markerValidation{}, openAPIMarkers{}, controllerWiring{}}
	universeGenerators = []UniverseGenerator{deepcopy{}, conversion{}, defaulter{}, modelNames{}, openAPI{}, protobuf{}, compatibility{},
		applyConfigurations{}, clientset{}, listers{}, informers{}}
)

// Options configure a run.
type Options struct {
	// Log receives one line per file written; nil discards.
	Log io.Writer
}

// Result tells what a run changed.
type Result struct {
	Written   []string
	Unchanged int
	// Files are every file the run produced, written or not.
	Files []string
}

// Run generates every file for api.
func Run(api *API, opts Options) (res *Result, err error) {
	log := opts.Log
	if log == nil {
		log = io.Discard
	}
	// The upstream generators log through klog (conversion-gen's "could not
	// find nor generate a final Conversion function"); what matters of it is
	// reported by Run itself, as warnings, so klog stays quiet.
	quietKlog()
	// A run is short and allocates much (the universe load): collecting less
	// often saves a fifth of its time for about 15% more memory.
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(400))
	}
	tx := &Transaction{Log: log}
	defer func() {
		if err != nil {
			if rerr := tx.Rollback(); rerr != nil {
				err = fmt.Errorf("%w (and restoring files failed: %v)", err, rerr)
			}
		}
	}()

	var staged []File
	for _, g := range sourceGenerators {
		files, err := g.Generate(api)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Name(), err)
		}
		staged = append(staged, files...)
	}
	if err := formatAll(staged); err != nil {
		return nil, err
	}
	// The upstream generators read these from disk, through the package loader.
	if err := tx.Write(staged...); err != nil {
		return nil, err
	}

	warnings := len(api.Warnings)
	generated, err := runUniverseGenerators(api)
	if err != nil {
		return nil, err
	}
	// Conversions conversion-gen cannot generate get stubs for the user to
	// fill; conversion-gen must then see them, so the packages are loaded again.
	stubs, messages, err := conversionStubs(api, generated)
	if err != nil {
		return nil, err
	}
	if len(stubs) > 0 {
		if err := formatAll(stubs); err != nil {
			return nil, err
		}
		if err := tx.Write(stubs...); err != nil {
			return nil, err
		}
		api.Warnings = api.Warnings[:warnings] // the second run warns again
		if generated, err = runUniverseGenerators(api); err != nil {
			return nil, err
		}
		api.Warnings = append(api.Warnings, messages...)
	} else {
		api.Warnings = append(api.Warnings, unfilledStubs(api)...)
	}
	if err := formatAll(generated); err != nil {
		return nil, err
	}
	if err := tx.Write(generated...); err != nil {
		return nil, err
	}
	return &Result{Written: tx.Written(), Unchanged: tx.Unchanged, Files: tx.Files}, nil
}

// quietKlog discards klog's output, errors included (which klog otherwise
// also writes to stderr).
func quietKlog() {
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for name, value := range map[string]string{"logtostderr": "false", "alsologtostderr": "false", "stderrthreshold": "FATAL"} {
		_ = fs.Set(name, value)
	}
	klog.SetOutput(io.Discard)
}

// runUniverseGenerators loads the packages once and runs every universe generator over them.
func runUniverseGenerators(api *API) ([]File, error) {
	c, err := loadUniverse(api)
	if err != nil {
		return nil, err
	}
	var generated []File
	for _, g := range universeGenerators {
		files, err := g.Generate(api, c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Name(), err)
		}
		generated = append(generated, files...)
	}
	return generated, nil
}

// formatAll parses and gofmts every Go file in place; a file that does not
// parse is an error naming it, and nothing is written.
func formatAll(files []File) error {
	for i := range files {
		if !strings.HasSuffix(files[i].Path, ".go") {
			continue
		}
		out, err := FormatGo(files[i].Path, files[i].Content)
		if err != nil {
			return err
		}
		files[i].Content = out
	}
	return nil
}

// FormatGo checks that src parses and returns it gofmt-ed.
func FormatGo(path string, src []byte) ([]byte, error) {
	if _, err := parser.ParseFile(token.NewFileSet(), path, src, parser.ParseComments); err != nil {
		line := ""
		var list scanner.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			if lines := strings.Split(string(src), "\n"); list[0].Pos.Line <= len(lines) {
				line = fmt.Sprintf(" (line %d: %q)", list[0].Pos.Line, strings.TrimSpace(lines[list[0].Pos.Line-1]))
			}
		}
		return nil, fmt.Errorf("generated %s does not parse (a generator bug or a type it cannot handle): %w%s", filepath.Base(path), err, line)
	}
	return format.Source(src)
}

// generatedBy normalises the "Code generated by <binary>" line the upstream
// generators derive from os.Args[0], so output does not depend on how the
// CLI was invoked (a test binary, go run...).
var generatedBy = regexp.MustCompile(`(?m)^// Code generated by [^ ]+\. DO NOT EDIT\.$`)

// memoryFiles is a gengo FileType that keeps assembled files in memory.
type memoryFiles struct {
	files []File
}

func (m *memoryFiles) AssembleFile(f *generator.File, path string) error {
	var b bytes.Buffer
	b.Write(f.Header)
	fmt.Fprintf(&b, "package %v\n\n", f.PackageName)
	if len(f.Imports) > 0 {
		b.WriteString("import (\n")
		for _, i := range sortedKeys(f.Imports) {
			if strings.Contains(i, `"`) {
				fmt.Fprintf(&b, "\t%s\n", i)
			} else {
				fmt.Fprintf(&b, "\t%q\n", i)
			}
		}
		b.WriteString(")\n\n")
	}
	if f.Vars.Len() > 0 {
		fmt.Fprintf(&b, "var (\n%s)\n\n", f.Vars.Bytes())
	}
	if f.Consts.Len() > 0 {
		fmt.Fprintf(&b, "const (\n%s)\n\n", f.Consts.Bytes())
	}
	b.Write(f.Body.Bytes())
	content := generatedBy.ReplaceAll(b.Bytes(), []byte("// Code generated by apiserver-boot. DO NOT EDIT."))
	m.files = append(m.files, File{Path: path, Content: content})
	return nil
}

// discardFiles is a FileType for side reports (openapi-gen's API rule
// violations) that apiserver-boot does not write.
type discardFiles struct{}

func (discardFiles) AssembleFile(*generator.File, string) error { return nil }
