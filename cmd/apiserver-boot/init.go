package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"
	gomodule "golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	apiserverboot "github.com/apiserver-boot/apiserver-boot"
	"github.com/apiserver-boot/apiserver-boot/boilerplate"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
	"github.com/apiserver-boot/apiserver-boot/internal/scaffold"
	"github.com/apiserver-boot/apiserver-boot/internal/version"
)

func newInitCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Initialise a project",
	}
	cmd.AddCommand(newInitRepoCommand())
	return cmd
}

type initOptions struct {
	domain, module, owner, license string
	force                          bool
}

func newInitRepoCommand() *cobra.Command {
	o := &initOptions{license: "apache2"}
	cmd := &cobra.Command{
		Use:   "repo",
		Short: "Scaffold a new apiserver project in the current folder",
		Long: `repo writes PROJECT, go.mod requirements (pinned to what this apiserver-boot was
tested with), a Makefile, the apiserver and controller-manager commands and the
pkg/ layout, then generates code so the project builds. It needs a go.mod
(from go mod init) or --module.`,
		Example: `  go mod init example.com/crontab && apiserver-boot init repo --domain example.com
  apiserver-boot init repo --domain example.com --module example.com/crontab`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	cmd.Flags().StringVar(&o.domain, "domain", "", "Domain of the API groups: group <g> is served as <g>.<domain> (required)")
	cmd.Flags().StringVar(&o.module, "module", "", "Go module path; default: the module of ./go.mod")
	cmd.Flags().StringVar(&o.owner, "owner", "", "Copyright owner in license headers; default: The <module> Authors")
	cmd.Flags().StringVar(&o.license, "license", o.license, "License header: "+strings.Join(boilerplate.Licenses(), ", "))
	cmd.Flags().BoolVar(&o.force, "force", false, "Overwrite files that exist with other content")
	return cmd
}

func (o *initOptions) run(cmd *cobra.Command) error {
	if o.domain == "" {
		return errors.New("--domain is required, e.g. --domain example.com")
	}
	if err := project.ValidateDomain(o.domain); err != nil {
		return err
	}
	root, err := os.Getwd()
	if err != nil {
		return err
	}
	goModPath := filepath.Join(root, "go.mod")
	existing, err := os.ReadFile(goModPath)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	module := o.module
	if existing != nil {
		current := modfile.ModulePath(existing)
		if module != "" && current != "" && module != current {
			return fmt.Errorf("--module %s differs from the module %s in go.mod", module, current)
		}
		module = current
	}
	if module == "" {
		return errors.New("no go.mod here: run `go mod init <module>` first or pass --module, e.g. --module example.com/crontab")
	}
	if err := gomodule.CheckImportPath(module); err != nil {
		return fmt.Errorf("--module %q is not a valid module path: %v", module, err)
	}
	if p, err := project.Load(root); err == nil && (p.Domain != o.domain || p.Module != module) && !o.force {
		return fmt.Errorf("this folder already holds project %s (domain %s); --force re-initialises it", p.Module, p.Domain)
	}

	info := version.Get()
	goMod, err := mergeGoMod(existing, module, root, info)
	if err != nil {
		return err
	}
	oldSum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	owner := o.owner
	if owner == "" {
		owner = "The " + filepath.Base(module) + " Authors"
	}
	header, err := boilerplate.Header(o.license, owner, time.Now().Year())
	if err != nil {
		return err
	}
	p := &project.Project{Version: "1", Domain: o.domain, Module: module}
	if old, err := project.Load(root); err == nil && old.Module == module {
		p.Resources = old.Resources
	}
	record, err := p.Marshal()
	if err != nil {
		return err
	}
	data := &templateData{Name: filepath.Base(module), Module: module, Domain: o.domain, Framework: version.Module, Boilerplate: string(header), GoVersion: goMinor()}
	plan := &scaffold.Plan{Root: root, Data: data, Force: o.force, Files: []scaffold.File{
		{Path: "go.mod", Content: goMod, IfExists: scaffold.Replace},
		{Path: "go.sum", Content: mergeGoSum(oldSum, apiserverboot.GoSum), IfExists: scaffold.Replace},
		{Path: project.FileName, Content: record},
		{Path: "hack/boilerplate.go.txt", Content: header},
		{Path: "Makefile", Template: "project/Makefile.tmpl"},
		{Path: ".gitignore", Template: "project/gitignore.tmpl"},
		{Path: "Dockerfile", Template: "project/Dockerfile.tmpl"},
		{Path: ".dockerignore", Template: "project/dockerignore.tmpl"},
		{Path: "cmd/apiserver/main.go", Template: "project/cmd/apiserver/main.go.tmpl"},
		{Path: "cmd/controller-manager/main.go", Template: "project/cmd/controller-manager/main.go.tmpl"},
		{Path: "pkg/apis/doc.go", Template: "project/pkg/apis/doc.go.tmpl"},
		{Path: "pkg/openapi/doc.go", Template: "project/pkg/openapi/doc.go.tmpl"},
		{Path: "pkg/controller/doc.go", Template: "project/pkg/controller/doc.go.tmpl"},
	}}
	if err := applyAndGenerate(cmd, root, plan, "the project is already initialised."); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Initialised %s (domain %s). Next: apiserver-boot create group version resource --group <group> --version v1 --kind <Kind>\n", module, o.domain)
	return nil
}

// mergeGoMod adds the framework and every module it was tested with to the
// project's go.mod, never lowering a version the project already requires.
// A CLI built from a source checkout adds a replace to that checkout.
func mergeGoMod(existing []byte, module, root string, info version.Info) ([]byte, error) {
	fw, err := modfile.Parse("go.mod", apiserverboot.GoMod, nil)
	if err != nil {
		return nil, err
	}
	f := &modfile.File{}
	if existing != nil {
		if f, err = modfile.Parse("go.mod", existing, nil); err != nil {
			return nil, fmt.Errorf("go.mod: %w", err)
		}
	} else if err := f.AddModuleStmt(module); err != nil {
		return nil, err
	}
	if f.Go == nil || semver.Compare("v"+f.Go.Version, "v"+fw.Go.Version) < 0 {
		if err := f.AddGoStmt(fw.Go.Version); err != nil {
			return nil, err
		}
	}
	have := map[string]string{}
	for _, r := range f.Require {
		have[r.Mod.Path] = r.Mod.Version
	}
	for _, r := range fw.Require {
		if v, ok := have[r.Mod.Path]; !ok || semver.Compare(v, r.Mod.Version) < 0 {
			f.AddNewRequire(r.Mod.Path, r.Mod.Version, true)
		}
	}
	fwVersion := info.Version
	if fwVersion == "" {
		if info.SourceDir == "" {
			return nil, errors.New("this apiserver-boot was built without a module version or source checkout; install a released version or set APISERVER_BOOT_SOURCE to its checkout")
		}
		fwVersion = "v0.0.0-00010101000000-000000000000"
		target := info.SourceDir
		if rel, err := filepath.Rel(root, info.SourceDir); err == nil && !strings.HasPrefix(filepath.ToSlash(rel), "../../") {
			target = rel // a project inside the checkout (example/) stays relocatable
		}
		if !strings.HasPrefix(target, "/") && !strings.HasPrefix(target, ".") {
			target = "./" + target
		}
		if err := f.AddReplace(version.Module, "", target, ""); err != nil {
			return nil, err
		}
	}
	if err := f.AddRequire(version.Module, fwVersion); err != nil {
		return nil, err
	}
	f.SetRequireSeparateIndirect(f.Require)
	f.Cleanup()
	return modfile.Format(f.Syntax), nil
}

// goMinor is the Go release the framework requires (1.26 for go 1.26.0):
// the Dockerfile's builder image.
func goMinor() string {
	f, err := modfile.ParseLax("go.mod", apiserverboot.GoMod, nil)
	if err != nil || f.Go == nil {
		return "1"
	}
	v := f.Go.Version
	if parts := strings.SplitN(v, ".", 3); len(parts) == 3 {
		v = parts[0] + "." + parts[1]
	}
	return v
}

// mergeGoSum returns the sorted union of two go.sum files.
func mergeGoSum(a, b []byte) []byte {
	lines := map[string]bool{}
	for _, src := range [][]byte{a, b} {
		for _, l := range bytes.Split(src, []byte("\n")) {
			if s := strings.TrimSpace(string(l)); s != "" {
				lines[s] = true
			}
		}
	}
	out := make([]string, 0, len(lines))
	for l := range lines {
		out = append(out, l)
	}
	sort.Strings(out)
	return []byte(strings.Join(out, "\n") + "\n")
}
