package main

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators/crdschema"
	"github.com/apiserver-boot/apiserver-boot/generators/driver"
	"github.com/apiserver-boot/apiserver-boot/internal/apidocs"
)

// docsFormats are the formats build docs writes.
var docsFormats = []string{"markdown"}

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

It reads the schemas generate gives the server (the types and their markers,
as the server validates objects), so it needs no running server. Pages are
written only when their content changed: a second run writes nothing.`,
		Example: `  apiserver-boot build docs
  apiserver-boot build docs --output site/reference`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "markdown" {
				return fmt.Errorf("--format %q is not one build docs writes: valid is %q", format, docsFormats[0])
			}
			root, _, api, err := loadProject()
			if err != nil {
				return err
			}
			schemas, _, err := crdschema.GenerateDocumented(api, driver.LoadEnv())
			if err != nil {
				return err
			}
			groups, err := apidocs.Build(api, schemas)
			if err != nil {
				return err
			}
			if len(groups) == 0 {
				return fmt.Errorf("no kinds under %s: add one with `apiserver-boot create group version resource`", filepath.Join(root, "pkg", "apis"))
			}
			dir := output
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(root, dir)
			}
			written, err := apidocs.Write(dir, apidocs.Markdown(groups))
			if err != nil {
				return err
			}
			con := newConsole(cmd)
			for _, f := range written {
				fmt.Fprintf(con, "wrote %s\n", relToWd(f))
			}
			if len(written) == 0 {
				fmt.Fprintf(con.Info(), "%s is up to date\n", relToWd(dir))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&output, "output", filepath.Join("docs", "api"), "Folder to write the reference into, relative to the project root")
	cmd.Flags().StringVar(&format, "format", "markdown", "What to write: markdown (one page per group)")
	return cmd
}
