package scaffold

import (
	"context"
	"os"
	"path/filepath"

	apiserverboot "github.com/apiserver-boot/apiserver-boot"
	"github.com/apiserver-boot/apiserver-boot/boilerplate"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/gomod"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// RepoOptions are the flags of `init repo`, checked by the command.
type RepoOptions struct {
	Domain, Module string
	// Owner is the copyright owner of the license header; default The
	// <module> Authors.
	Owner, License string
	// GoMod is the folder's go.mod, if it has one.
	GoMod []byte
	// Year is the copyright year.
	Year int
	// CLI is the apiserver-boot writing the project; nil: this one
	// (version.Get).
	CLI *version.Info
}

// Repo is the plan of `init repo` in root: go.mod and go.sum merged with
// what this apiserver-boot was tested with, PROJECT (keeping the kinds it
// records for the same module), the license header, the Makefile and
// Dockerfile, the commands and the pkg/ layout. A released apiserver-boot
// makes the project require the framework at its release (go.sum gets the
// release's checksums) and records itself in PROJECT (cliVersion).
func Repo(root string, o RepoOptions) (*Plan, error) {
	cli := version.Get()
	if o.CLI != nil {
		cli = *o.CLI
	}
	goMod, err := gomod.Merge(o.GoMod, apiserverboot.GoMod, o.Module, root, cli)
	if err != nil {
		return nil, err
	}
	releaseSums, err := gomod.ReleaseSums(context.Background(), cli, apiserverboot.GoMod)
	if err != nil {
		return nil, err
	}
	oldSum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	owner := o.Owner
	if owner == "" {
		owner = "The " + filepath.Base(o.Module) + " Authors"
	}
	header, err := boilerplate.Header(o.License, owner, o.Year)
	if err != nil {
		return nil, err
	}
	p := &project.Project{Version: "1", Domain: o.Domain, Module: o.Module, CLIVersion: cli.Version}
	if old, err := project.Load(root); err == nil && old.Module == o.Module {
		p.Resources = old.Resources
		if p.CLIVersion == "" {
			p.CLIVersion = old.CLIVersion // a devel CLI keeps the release recorded
		}
	}
	rec, err := p.Marshal()
	if err != nil {
		return nil, err
	}
	data := &Data{Name: filepath.Base(o.Module), Module: o.Module, Domain: o.Domain, Framework: version.Module, Boilerplate: string(header), GoVersion: gomod.GoMinor(apiserverboot.GoMod)}
	return &Plan{Root: root, Data: data, NothingToDo: "the project is already initialised.", Files: []File{
		{Path: "go.mod", Content: goMod, IfExists: Replace},
		{Path: "go.sum", Content: gomod.MergeSum(gomod.MergeSum(oldSum, apiserverboot.GoSum), releaseSums), IfExists: Replace},
		{Path: project.FileName, Content: rec},
		{Path: project.BoilerplateFile, Content: header},
		{Path: "Makefile", Template: "project/Makefile.tmpl"},
		{Path: ".gitignore", Template: "project/gitignore.tmpl"},
		{Path: "Dockerfile", Template: "project/Dockerfile.tmpl"},
		{Path: ".dockerignore", Template: "project/dockerignore.tmpl"},
		{Path: "cmd/apiserver/main.go", Template: "project/cmd/apiserver/main.go.tmpl"},
		{Path: "cmd/controller-manager/main.go", Template: "project/cmd/controller-manager/main.go.tmpl"},
		{Path: project.APIsDir + "/doc.go", Template: "project/pkg/apis/doc.go.tmpl"},
		{Path: project.OpenAPIDir + "/doc.go", Template: "project/pkg/openapi/doc.go.tmpl"},
		{Path: project.ControllerDir + "/doc.go", Template: "project/pkg/controller/doc.go.tmpl"},
	}}, nil
}
