package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"
	gomodule "golang.org/x/mod/module"

	"github.com/apiserver-boot/apiserver-boot/boilerplate"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/scaffold"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/gomod"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

func newInitCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "init",
		Short:   "Initialise a project",
		Example: `  apiserver-boot init repo --domain example.com`,
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
		Args: cmdline.NoArgs,
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

	plan, err := scaffold.Repo(root, scaffold.RepoOptions{Domain: o.domain, Module: module, Owner: o.owner, License: o.license, GoMod: existing, Year: time.Now().Year()})
	if err != nil {
		return err
	}
	plan.Force = o.force
	if err := plan.ApplyAndGenerate(cmd.OutOrStdout(), newConsole(cmd)); err != nil {
		return err
	}
	info := newConsole(cmd).Info()
	// A devel build says when it ties the project to its checkout (go.mod's replace).
	if note := gomod.CheckoutNote(root, version.Get()); note != "" {
		fmt.Fprintln(info, note)
	}
	fmt.Fprintf(info, "Initialised %s (domain %s). Next: apiserver-boot create group version resource --group <group> --version v1 --kind <Kind>\n", module, o.domain)
	return nil
}
