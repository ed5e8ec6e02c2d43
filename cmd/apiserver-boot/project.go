package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/gomod"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
	"github.com/apiserver-boot/apiserver-boot/internal/version"
)

// findRoot walks up from the working directory to the folder holding PROJECT.
func findRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, project.FileName)); err == nil {
			return dir, nil
		}
		if filepath.Dir(dir) == dir {
			return "", fmt.Errorf("no %s file in %s or above: run `apiserver-boot init repo --domain <domain>` in the project folder first", project.FileName, wd)
		}
	}
}

// loadProject finds the project around the working directory and reads its
// PROJECT file, with each kind's names, scope and subresources read from its
// markers (see fromMarkers).
func loadProject() (string, *project.Project, error) {
	root, err := findRoot()
	if err != nil {
		return "", nil, err
	}
	p, err := project.Load(root)
	if err != nil {
		return "", nil, err
	}
	return root, p, fromMarkers(root, p)
}

// fromMarkers fills in the names, scope and subresources of the project's
// kinds from their markers (model.API.Describe): the types are the only
// record of them, PROJECT records which kinds and controllers there are.
func fromMarkers(root string, p *project.Project) error {
	api, err := model.LoadAPI(root, p, version.Module, "")
	if err != nil {
		return err
	}
	api.Describe(p)
	return nil
}

// templateData is what project and resource templates see.
type templateData struct {
	Name, Module, Domain, Framework, Boilerplate string
	Group, FullGroup, Version, Kind, Plural      string
	Scope, Package                               string
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

func newTemplateData(root string, p *project.Project) (*templateData, error) {
	header, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(project.BoilerplateFile)))
	if err != nil {
		return nil, fmt.Errorf("reading the license header: %w", err)
	}
	return &templateData{
		Name: filepath.Base(p.Module), Module: p.Module, Domain: p.Domain,
		Framework: version.Module, Boilerplate: string(header),
	}, nil
}

// generateFiles runs every generator over the project at root, unless
// nothing it reads changed since the last run (see generators/cache.go) and
// force is off. It returns the files it wrote or removed (absolute paths;
// none when nothing changed).
func generateFiles(root string, out io.Writer, force bool) ([]string, error) {
	return generateRenumbering(root, out, force, nil)
}

// generateRenumbering is generateFiles numbering the protobuf fields of the
// kinds renumber names (<group>/<version>/<Kind>, or <Kind>) afresh.
func generateRenumbering(root string, out io.Writer, force bool, renumber []string) ([]string, error) {
	// The generated code is for this apiserver-boot's framework.
	if w := gomod.FrameworkSkew(root, version.Get()); w != "" {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	reads := generators.PreviousReads(root)
	inputs, err := generators.InputsHash(root, reads)
	if err != nil {
		return nil, err
	}
	if rec, ok := generators.UpToDate(root, inputs); ok && !force && len(renumber) == 0 {
		for _, w := range rec.Warnings {
			fmt.Fprintf(out, "warning: %s\n", w)
		}
		fmt.Fprintf(out, "generate: up to date, %d files unchanged (nothing it reads changed since the last run; --force runs it anyway)\n", len(rec.Outputs))
		return nil, nil
	}
	p, err := project.Load(root)
	if err != nil {
		return nil, err
	}
	data, err := newTemplateData(root, p)
	if err != nil {
		return nil, err
	}
	api, err := model.LoadAPI(root, p, version.Module, data.Boilerplate)
	if err != nil {
		return nil, err
	}
	units, err := renumberUnits(p, api, renumber)
	if err != nil {
		return nil, err
	}
	res, err := generators.Run(api, generators.Options{Renumber: units})
	// Fields lost through the internal type fail the run with every file
	// written (the conversion stubs to fill in included): reported after them.
	var lost *generators.LostFieldsError
	if err != nil && !errors.As(err, &lost) {
		return nil, err
	}
	for _, w := range res.Written {
		rel, _ := filepath.Rel(root, w)
		fmt.Fprintf(out, "generated %s\n", rel)
	}
	for _, r := range res.Removed {
		rel, _ := filepath.Rel(root, r)
		fmt.Fprintf(out, "removed %s (no longer generated)\n", rel)
	}
	for _, w := range slices.Concat(api.Warnings, res.Renumbered) {
		fmt.Fprintf(out, "warning: %s\n", w)
	}
	fmt.Fprintf(out, "generate: %d files written, %d unchanged\n", len(res.Written), res.Unchanged)
	// A run that wrote conversion stubs under pkg/apis changed its own inputs
	// (and its warnings were about that): leave the record to the next run.
	changed := append(append([]string(nil), res.Written...), res.Removed...)
	if lost != nil {
		// No record: the next generate runs again, and fails again until
		// every field round-trips.
		return changed, lost
	}
	if after, err := generators.InputsHash(root, reads); err != nil || after != inputs {
		return changed, err
	}
	// The packages this run's load read, outside pkg/apis, are inputs of the next.
	final, err := generators.InputsHash(root, res.Reads)
	if err != nil {
		return changed, err
	}
	return changed, generators.SaveCache(root, final, res.Reads, res.Files, api.Warnings)
}

// renumberUnits reads --renumber values: <group>/<version>/<Kind> (the
// group as --group takes it), or a kind's name alone when one version of
// one group has it.
func renumberUnits(p *project.Project, api *model.API, values []string) ([]string, error) {
	var out []string
	for _, val := range values {
		parts := strings.Split(val, "/")
		switch len(parts) {
		case 3:
			group, err := p.ResolveGroup(parts[0])
			if err != nil {
				return nil, fmt.Errorf("--renumber %s: %w", val, err)
			}
			out = append(out, group+"/"+parts[1]+"/"+parts[2])
		case 1:
			var found []string
			for _, g := range api.Groups {
				for _, v := range g.Versions {
					for _, k := range v.Kinds {
						if k.Name == val {
							found = append(found, g.Name+"/"+v.Name+"/"+k.Name)
						}
					}
				}
			}
			if len(found) != 1 {
				return nil, fmt.Errorf("--renumber %s: want <group>/<version>/<Kind>; %d versions have a kind %s (%s)", val, len(found), val, strings.Join(found, ", "))
			}
			out = append(out, found[0])
		default:
			return nil, fmt.Errorf("--renumber %s: want <group>/<version>/<Kind>, such as stable/v1/CronTab", val)
		}
	}
	return out, nil
}

// applyAndGenerate writes a scaffold plan, then generates code; if generating
// fails, the files the plan wrote are restored, so nothing is half done.
func applyAndGenerate(cmd *cobra.Command, root string, plan *scaffold.Plan, nothingToDo string) error {
	rep, err := plan.Apply()
	if err != nil {
		return err
	}
	// With --quiet, the files written and generated go unsaid; warnings,
	// errors and "Nothing to do" are still printed.
	con := newConsole(cmd)
	rep.Print(con.Info(), con)
	if !rep.Changed() {
		fmt.Fprintln(con, "Nothing to do: "+nothingToDo)
		return nil
	}
	if _, err := generateOn(con, func(out io.Writer) ([]string, error) { return generateFiles(root, out, false) }); err != nil {
		var lost *generators.LostFieldsError
		if errors.As(err, &lost) {
			// Consistent, and what is left to do is in the new types.
			return fmt.Errorf("generating code: %w\nthe files written above are kept", err)
		}
		if uerr := rep.Undo(); uerr != nil {
			return fmt.Errorf("generating code: %w (and restoring the files written above failed: %v)", err, uerr)
		}
		return fmt.Errorf("generating code: %w; the files written above were restored", err)
	}
	return nil
}
