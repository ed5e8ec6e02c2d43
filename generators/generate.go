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
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"

	"k8s.io/gengo/v2/generator"
	"k8s.io/klog/v2"

	"github.com/apiserver-boot/apiserver-boot/generators/crdschema"
	"github.com/apiserver-boot/apiserver-boot/generators/driver"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/generators/protobuf"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"k8s.io/gengo/v2"
)

// Generator is one generator; SourceGenerator and UniverseGenerator say what it works from.
type Generator interface {
	Name() string
}

// SourceGenerator works from the API read from source.
type SourceGenerator interface {
	Generator
	Generate(api *State) ([]files.File, error)
}

// UniverseGenerator works over the loaded, type-checked universe.
type UniverseGenerator interface {
	Generator
	// Packages lists extra packages the generator needs in the universe.
	Packages(api *State) []string
	Generate(api *State, c *generator.Context) ([]files.File, error)
}

// The generators, in the order they run: registered here and nowhere else.
var (
	sourceGenerators   = []SourceGenerator{internalTypes{}, registration{}, openAPIDefinitions{}, controllerWiring{}}
	universeGenerators = []UniverseGenerator{deepcopy{}, conversion{}, defaulter{}, validations{}, modelNames{}, openAPI{}, schemas{}, samples{}, protobufMethods{}, compatibility{},
		applyConfigurations{}, clientset{}, listers{}, informers{}}
)

// Options configure a run.
type Options struct {
	// Log receives one line per file written; nil discards.
	Log io.Writer
	// SnapshotDir, when set, is where the run records the API description of
	// a release (api snapshot).
	SnapshotDir string
	// Renumber are the kinds whose protobuf fields are numbered afresh
	// (generate --renumber), as <group package>/<version>/<Kind>.
	Renumber []string
}

// State is one run: the API model, the options, and what generators settle
// for the ones after them. Generators read the model and add to its
// Warnings only.
type State struct {
	*model.API
	Options
	// protobuf is what the protobuf generator settled: field numbers, and
	// whether every kind speaks protobuf.
	protobuf *protobuf.Result
	// reads are the folders of main-module packages outside pkg/apis the
	// load read.
	reads []string
	// schemas waits for the kinds' schemas, computed beside the universe.
	schemas func() ([]crdschema.Schema, []string, error)
	// universe is the last package load, for the checks after generation.
	universe *generator.Context
}

// Result tells what a run changed.
type Result struct {
	Written   []string
	Unchanged int
	// Files are every file the run produced, written or not.
	Files []string
	// Removed are the files an earlier run generated that this one no longer
	// produces (a kind or version removed).
	Removed []string
	// Reads are the folders of main-module packages outside pkg/apis the
	// package load read (relative to the project), for the generate cache.
	Reads []string
	// Renumbered say which kinds --renumber numbered afresh (this run only:
	// not warnings the generate cache repeats).
	Renumbered []string
}

// Run generates every file for the API m.
func Run(m *model.API, opts Options) (res *Result, err error) {
	api := &State{API: m, Options: opts, protobuf: &protobuf.Result{}}
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
	tx := &files.Transaction{Log: log}
	// A run that fails only because fields are lost keeps what it wrote:
	// the files are consistent, and the stubs are for the user to fill in.
	var lost *LostFieldsError
	defer func() {
		if err != nil && !errors.As(err, &lost) {
			if rerr := tx.Rollback(); rerr != nil {
				err = fmt.Errorf("%w (and restoring files failed: %v)", err, rerr)
			}
		}
	}()

	// Field types no generator can handle stop the run before any does,
	// naming the field.
	if err := checkFieldTypes(api.API); err != nil {
		return nil, err
	}
	if err := checkPinnedModules(api.API); err != nil {
		return nil, err
	}
	// A kind's CRD manifest gives its names, columns and subresources
	// (and, in crdschema, its schema), before anything is rendered.
	if err := applyManifests(api); err != nil {
		return nil, err
	}
	staged, err := writeSourceFiles(api, tx)
	if err != nil {
		return nil, err
	}
	generated, err := writeUniverseFiles(api, tx, staged)
	if err != nil {
		return nil, err
	}
	// With every file in place, the hand-written files of the API packages
	// must compile (hooks above all, which nothing else reads).
	if err := checkCompiles(api, api.universe); err != nil {
		return nil, err
	}
	res = &Result{Written: tx.Written(), Unchanged: tx.Unchanged, Files: tx.Files, Removed: tx.Removed(), Reads: api.reads, Renumbered: api.protobuf.Renumbered}
	// Every field of every served version must round-trip through the
	// internal type: until it does, the run fails, with its files written.
	if lf, err := lostFields(api, generated); err != nil {
		return nil, err
	} else if lf != nil {
		return res, lf
	}
	return res, nil
}

// applyManifests reads the CRD manifest of every kind that has one and
// makes the model say what it says (crdschema.ApplyManifests).
func applyManifests(api *State) error {
	set, err := crdschema.LoadManifests(api.API)
	if err != nil {
		return err
	}
	warnings, err := crdschema.ApplyManifests(api.API, set)
	if err != nil {
		return err
	}
	api.Warnings = append(api.Warnings, warnings...)
	return nil
}

// writeSourceFiles runs the source generators and writes their files: the
// upstream generators read them from disk, through the package loader.
func writeSourceFiles(api *State, tx *files.Transaction) ([]files.File, error) {
	var staged []files.File
	for _, g := range sourceGenerators {
		out, err := g.Generate(api)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Name(), err)
		}
		staged = append(staged, out...)
	}
	if err := formatAll(staged); err != nil {
		return nil, err
	}
	if err := checkOverwrites(api.Root, staged); err != nil {
		return nil, err
	}
	return staged, tx.Write(staged...)
}

// writeUniverseFiles runs the generators over the loaded universe and
// writes their files, with the conversion stubs conversion-gen needs (then
// loading again), and removes what an earlier run generated and this one
// does not.
func writeUniverseFiles(api *State, tx *files.Transaction, staged []files.File) ([]files.File, error) {
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
	}
	// A field or hand-written declaration named like something the
	// generated code declares on the same type would fail the build there.
	if err := checkGeneratedNames(api, append(append([]files.File{}, staged...), generated...)); err != nil {
		return nil, err
	}
	if err := formatAll(generated); err != nil {
		return nil, err
	}
	if err := checkOverwrites(api.Root, generated); err != nil {
		return nil, err
	}
	if err := tx.Write(generated...); err != nil {
		return nil, err
	}
	return generated, removeStale(api, tx)
}

// checkOverwrites refuses to replace a zz_generated.*.go file that is not
// marked generated: generate owns those names, and a file written by
// another generator (controller-gen's zz_generated.deepcopy.go, copied
// from a kubebuilder project) is replaced, but one the user wrote or
// unmarked is theirs.
func checkOverwrites(root string, out []files.File) error {
	var errs []string
	for _, f := range out {
		if !strings.HasPrefix(filepath.Base(f.Path), "zz_generated") || !strings.HasSuffix(f.Path, ".go") {
			continue
		}
		content, err := os.ReadFile(f.Path)
		if err != nil || files.IsGenerated(content) {
			continue
		}
		errs = append(errs, fmt.Sprintf("%s is not marked generated (no `// Code generated ... DO NOT EDIT.` line), and generate writes it: rename it to keep what it declares, or remove it", relTo(root, f.Path)))
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n"))
	}
	return nil
}

// removeStale removes the files the last run (its cache record) generated
// that this run no longer produces, so that the project builds after a kind
// or version is removed. Only Go files marked generated and unchanged since
// are removed: a file that was edited is kept, with a warning, and what
// generate writes for the user to own (conversion stubs) or to keep
// (fieldnumbers.yaml) never goes.
func removeStale(api *State, tx *files.Transaction) error {
	rec, err := readCacheRecord(api.Root)
	if err != nil || rec == nil {
		return nil // no record: nothing known to be ours
	}
	produced := map[string]bool{}
	for _, f := range tx.Files {
		produced[f] = true
	}
	for _, rel := range slices.Sorted(maps.Keys(rec.Outputs)) {
		path := filepath.Join(api.Root, filepath.FromSlash(rel))
		if produced[path] || !strings.HasSuffix(path, ".go") {
			continue
		}
		content, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		if !files.IsGenerated(content) {
			continue
		}
		if hashBytes(content) != rec.Outputs[rel] {
			api.Warnings = append(api.Warnings, fmt.Sprintf("%s is no longer generated but was edited since: kept (remove it if it is not needed)", rel))
			continue
		}
		if err := tx.Remove(path); err != nil {
			return err
		}
	}
	return nil
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
func runUniverseGenerators(api *State) ([]files.File, error) {
	// Both loads below, and gengo's expansion of its patterns, are answered
	// from one go list (driver.Preloaded).
	env, preloaded := driver.Preloaded(api.Root, []string{gengo.StdBuildTag}, universePatterns(api))
	defer preloaded()
	// The schemas' own package load does not need the universe: both run at
	// once, on separate cores.
	done := make(chan struct{})
	var list []crdschema.Schema
	var warnings []string
	var serr error
	go func() {
		defer close(done)
		list, warnings, serr = crdschema.Generate(api.API, env)
	}()
	api.schemas = func() ([]crdschema.Schema, []string, error) { <-done; return list, warnings, serr }
	c, err := loadUniverse(api, env)
	if err != nil {
		return nil, err
	}
	api.universe = c
	if err := checkHooks(api, c); err != nil {
		return nil, err
	}
	if err := checkShadowedMethods(api, c); err != nil {
		return nil, err
	}
	api.reads = mainModuleReads(api, c)
	var generated []files.File
	for _, g := range universeGenerators {
		out, err := guarded(api, func() ([]files.File, error) { return g.Generate(api, c) })
		if err != nil {
			return nil, fmt.Errorf("%s: %w", g.Name(), err)
		}
		generated = append(generated, out...)
	}
	return generated, nil
}

var guard sync.Mutex

// klogExit is what klog.OsExit panics with while a generator runs.
type klogExit struct{}

// guarded runs an upstream generator so that it cannot end the process: the
// code generators of k8s.io/code-generator and kube-openapi stop on what
// they cannot generate with klog.Fatalf, which exits, or with a panic. Here
// klog's exit panics instead, and the message, or the panic's, becomes an
// error naming the type, and its file:line when it is one of the project's.
func guarded(api *State, run func() ([]files.File, error)) (out []files.File, err error) {
	// klog's exit, its output and os.Stderr are the process's: one guarded
	// generator at a time.
	guard.Lock()
	defer guard.Unlock()
	var buf bytes.Buffer
	klog.SetOutput(&buf)
	exit := klog.OsExit
	klog.OsExit = func(int) { panic(klogExit{}) }
	// klog.Fatalf also dumps the goroutines on os.Stderr, before exiting.
	stderr := os.Stderr
	if f, ferr := os.CreateTemp("", "apiserver-boot-klog-*"); ferr == nil {
		os.Stderr = f
		defer os.Remove(f.Name())
		defer f.Close()
	}
	defer func() {
		os.Stderr = stderr
		klog.OsExit = exit
		klog.SetOutput(io.Discard)
		if r := recover(); r != nil {
			if _, ok := r.(klogExit); !ok {
				// validation-gen also panics on tags it cannot read; a
				// runtime error is a bug, reported with where it happened.
				if rerr, bug := r.(runtime.Error); bug {
					out, err = nil, fmt.Errorf("internal error: %v\n%s", rerr, debug.Stack())
					return
				}
				out, err = nil, fatalError(api.API, fmt.Sprint(r))
				return
			}
			out, err = nil, fatalError(api.API, buf.String())
		}
	}()
	out, err = run()
	if err != nil {
		err = located(api.API, err)
	}
	return out, err
}

// klogLine matches a klog line: "F1123 03:43:09.333807   27901 deepcopy.go:882] message".
var klogLine = regexp.MustCompile(`(?m)^F\d{4} [\d:.]+\s+\d+ [^ ]+\] (.*)$`)

// klogHeader is the start of any later log line, or of a goroutine dump.
var klogHeader = regexp.MustCompile(`(?m)^([IWEF]\d{4} [\d:.]+\s+\d+ [^ ]+\] |goroutine \d+ )`)

// fatalError turns what a generator logged before exiting into an error,
// adding where the project declares the types it names.
func fatalError(api *model.API, logged string) error {
	msg := strings.TrimSpace(logged)
	if m := klogLine.FindAllStringSubmatchIndex(logged, -1); len(m) > 0 {
		// The message runs from the last fatal line's header to the next
		// log line: validation-gen's lint report spans several lines.
		rest := logged[m[len(m)-1][2]:]
		if next := klogHeader.FindStringIndex(rest); next != nil {
			rest = rest[:next[0]]
		}
		msg = strings.TrimSpace(rest)
	}
	if where := declaredAt(api, msg); where != "" {
		return fmt.Errorf("%s (%s)", msg, where)
	}
	return errors.New(msg)
}

// located adds to an error a generator returned where the project declares
// the types and members it names, unless it names a file:line already.
func located(api *model.API, err error) error {
	if goPosition.MatchString(err.Error()) {
		return err
	}
	if where := declaredAt(api, err.Error()); where != "" {
		return fmt.Errorf("%w (%s)", err, where)
	}
	return err
}

// goPosition is a file:line of a Go file in a message.
var goPosition = regexp.MustCompile(`\.go:\d+`)

// memberOf and memberIn are how openapi-gen names a field: "member (Ports)
// of (<import path>.<Type>)", "in <import path>.<Type>: Ports: ".
var (
	memberOf = regexp.MustCompile(`member \((?P<member>\w+)\) of \((?P<type>[^)]+)\)`)
	memberIn = regexp.MustCompile(`in (?P<type>[\w./-]+\.\w+): (?P<member>\w+): `)
)

// declaredAt says where the project declares the types, and the fields
// (openapi-gen's "member (X) of (pkg.Type)"), that a generator's message
// names as "<import path>.<Type>", or "".
func declaredAt(api *model.API, msg string) string {
	var where []string
	seen := map[string]bool{}
	var members [][2]string // type, member
	for _, re := range []*regexp.Regexp{memberOf, memberIn} {
		for _, m := range re.FindAllStringSubmatch(msg, -1) {
			members = append(members, [2]string{m[re.SubexpIndex("type")], m[re.SubexpIndex("member")]})
		}
	}
	for _, m := range members {
		for _, g := range api.Groups {
			for _, v := range g.Versions {
				typ, ok := strings.CutPrefix(m[0], v.Package+".")
				if !ok || v.Types[typ] == nil {
					continue
				}
				for _, f := range v.Types[typ].Fields {
					if f.GoName == m[1] && !seen[f.Pos.String()] {
						seen[f.Pos.String()] = true
						where = append(where, fmt.Sprintf("%s: %s.%s", relPos(api.Root, f.Pos), typ, f.GoName))
					}
				}
			}
		}
	}
	if len(where) > 0 {
		return "at " + strings.Join(where, ", ")
	}
	// The types it names are "<import path>.<Type>", of a version package
	// or of an internal one (copied from the versions).
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			for _, pkg := range []string{v.Package, g.Package} {
				for _, m := range regexp.MustCompile(regexp.QuoteMeta(pkg)+`\.([A-Za-z_]\w*)`).FindAllStringSubmatch(msg, -1) {
					if pos, ok := v.Declared[m[1]]; ok && !seen[pos.String()] {
						seen[pos.String()] = true
						where = append(where, fmt.Sprintf("%s: %s", relPos(api.Root, pos), m[1]))
					}
				}
			}
		}
	}
	if len(where) > 0 {
		return "declared at " + strings.Join(where, ", ")
	}
	return ""
}

// mainModuleReads lists the folders, relative to the project, of the
// main-module packages the load read outside pkg/apis (which the cache
// always hashes): a package of the project the types import.
func mainModuleReads(api *State, c *generator.Context) []string {
	apis := filepath.Join(api.Root, project.APIs()) + string(filepath.Separator)
	var out []string
	for path, pkg := range c.Universe {
		if pkg.Dir == "" || (path != api.Module && !strings.HasPrefix(path, api.Module+"/")) || strings.HasPrefix(pkg.Dir+string(filepath.Separator), apis) {
			continue
		}
		if rel, err := filepath.Rel(api.Root, pkg.Dir); err == nil && !strings.HasPrefix(rel, "..") {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	sort.Strings(out)
	return out
}

// formatAll parses and gofmts every Go file in place; a file that does not
// parse is an error naming it, and nothing is written.
func formatAll(list []files.File) error {
	for i := range list {
		if !strings.HasSuffix(list[i].Path, ".go") {
			continue
		}
		out, err := files.FormatGo(list[i].Path, list[i].Content)
		if err != nil {
			return err
		}
		list[i].Content = out
	}
	return nil
}

// memoryFiles is a gengo FileType that keeps assembled files in memory.
type memoryFiles struct {
	files []files.File
}

func (m *memoryFiles) AssembleFile(f *generator.File, path string) error {
	// gengo's own assembly; formatAll gofmts (imports sorted) before anything is written.
	var b bytes.Buffer
	generator.NewGoFile().Assemble(&b, f)
	content := files.SetGenerator(b.Bytes(), "apiserver-boot")
	m.files = append(m.files, files.File{Path: path, Content: content})
	return nil
}

// discardFiles is a FileType for side reports (openapi-gen's API rule
// violations) that apiserver-boot does not write.
type discardFiles struct{}

func (discardFiles) AssembleFile(*generator.File, string) error { return nil }
