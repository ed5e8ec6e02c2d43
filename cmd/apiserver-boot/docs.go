package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/apidocs"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
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
		if pages, err = apidocs.OpenAPIDocuments(cmd.Context(), con, root); err != nil {
			return err
		}
	} else if pages, err = apidocs.Pages(api, root, format == "html"); err != nil {
		return err
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
