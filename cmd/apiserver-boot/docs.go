package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/apidocs"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// docsFormats are the formats build docs writes.
var docsFormats = []string{"markdown", "html", "openapi"}

// docsOutput is where each format goes without --output.
var docsOutput = map[string]string{"markdown": filepath.Join("docs", "api"), "html": filepath.Join("docs", "api", "html"), "openapi": filepath.Join("docs", "api", "openapi")}

// runBuildDocs is build docs: the reference in format, into output (or the format's default folder).
func runBuildDocs(cmd *cobra.Command, format, output string) error {
	if !slices.Contains(docsFormats, format) {
		return fmt.Errorf("--format %q is not one build docs writes: valid are %s", format, strings.Join(docsFormats, ", "))
	}
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	dir := output
	if !cmd.Flags().Changed("output") {
		dir = docsOutput[format]
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	con := newConsole(cmd)
	var pages map[string][]byte
	if format == "openapi" {
		if _, err := codegen.WithProgress(con, root, generators.GenerateOptions{Project: p, API: api}); err != nil {
			return err
		}
		if pages, err = openAPIDocuments(cmd, con, root); err != nil {
			return err
		}
	} else {
		groups, err := apidocs.Load(api)
		if err != nil {
			return err
		}
		if len(groups) == 0 {
			return fmt.Errorf("no kinds under %s: add one with `apiserver-boot create group version resource`", filepath.Join(root, "pkg", "apis"))
		}
		pages = apidocs.Markdown(groups)
		if format == "html" {
			if pages, err = apidocs.HTML(groups); err != nil {
				return err
			}
		}
	}
	written, err := apidocs.Write(dir, pages)
	for _, f := range written {
		fmt.Fprintf(con, "wrote %s\n", files.RelToWd(f))
	}
	if err == nil && len(written) == 0 {
		fmt.Fprintf(con.Info(), "%s is up to date\n", files.RelToWd(dir))
	}
	return err
}

func newBuildDocsCommand() *cobra.Command {
	var output, format string
	cmd := &cobra.Command{
		Use:   "docs",
		Short: "Write the API reference of the project's types, without starting a server",
		Long: `docs writes the reference of every API group of the project, one Markdown
page per group (<output>/<group>.md, e.g. docs/api/stable.example.com.md):
each version, most preferred first, and each kind with its scope, names,
short names, categories, subresources, printer columns, selectable fields
and storage version; each field with its JSON path, type, whether it is
required, its description, default and constraints in words (bounds,
pattern, enum values, list type and map keys, CEL rules with their messages,
immutability); each object type once, linked from the fields holding it;
and the kind's sample (config/samples).

--format html writes the same content as a static site (index.html and
<group>.html, with a navigation of groups, versions and kinds), which loads
nothing: it works from the file system and from any static host. --format
openapi writes the OpenAPI v3 document of each group version
(<group>/<version>.json), byte for byte what the server publishes at
/openapi/v3/apis/<group>/<version>: the project's apiserver is built and
writes them itself (apiserver openapi), without serving or a store.

It reads the schemas generate gives the server (the types and their markers,
as the server validates objects), so it needs no running server. Pages are
written only when their content changed: a second run writes nothing.`,
		Example: `  apiserver-boot build docs
  apiserver-boot build docs --output site/reference
  apiserver-boot build docs --format html
  apiserver-boot build docs --format openapi`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBuildDocs(cmd, format, output)
		},
	}
	cmd.Flags().StringVar(&output, "output", "", "Folder to write the reference into, relative to the project root; default docs/api (markdown), docs/api/html, docs/api/openapi")
	cmd.Flags().StringVar(&format, "format", "markdown", "What to write: markdown (one page per group), html (a static site: index.html and one page per group, self-contained, no script, nothing loaded), openapi (the OpenAPI v3 document of each group version, <group>/<version>.json, as the server publishes it)")
	return cmd
}

// openAPIDocuments are the OpenAPI v3 documents the project's apiserver
// publishes, by "<group>/<version>.json": its own code writes them (`apiserver
// openapi`, built from the project as it is, generated files included),
// without serving or reaching a store.
func openAPIDocuments(cmd *cobra.Command, con *progress.Console, root string) (map[string][]byte, error) {
	tmp, err := os.MkdirTemp("", "apiserver-boot-openapi-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	task := con.Start("Building the apiserver for its OpenAPI documents", "")
	build := exec.CommandContext(cmd.Context(), "go", "build", "-o", filepath.Join(tmp, "apiserver"), "./cmd/apiserver")
	build.Dir = root
	out, err := build.CombinedOutput()
	task.Done()
	if err != nil {
		return nil, fmt.Errorf("building cmd/apiserver: %w\n%s", err, out)
	}
	run := exec.CommandContext(cmd.Context(), filepath.Join(tmp, "apiserver"), "openapi", "--output", filepath.Join(tmp, "openapi"))
	run.Dir = root
	if out, err := run.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("apiserver openapi: %w\n%s", err, out)
	}
	docs := map[string][]byte{}
	err = filepath.WalkDir(filepath.Join(tmp, "openapi"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(filepath.Join(tmp, "openapi"), path)
		b, err := os.ReadFile(path)
		docs[filepath.ToSlash(rel)] = b
		return err
	})
	return docs, err
}
