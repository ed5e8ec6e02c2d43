package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

func newAPICommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "api",
		Short:   "Record releases of the API, against which later changes are checked",
		Example: `  apiserver-boot api snapshot v0.2.0`,
	}
	cmd.AddCommand(newAPISnapshotCommand())
	return cmd
}

func newAPISnapshotCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "snapshot <release>",
		Short: "Record the API of a release: compatibility fixtures and the API description",
		Long: `snapshot records what a release publishes, in pkg/apis/testdata/<release>/ (commit it):

  <group>.<version>.<Kind>.json, .yaml, .pb,  a filled object of every kind in every served
  .cbor                                       version, as today's code writes it (protobuf as
                                              stored in etcd; CBOR as served with the
                                              CBORServingAndStorage gate on)
  api.yaml                                    every field by JSON path: type, protobuf numbers,
                                              required; kinds and their storage versions

From then on, the generated TestCompatibility (go test ./pkg/apis) decodes the
fixtures of every recorded release with the code of the day and compares them field
by field, and generate compares the API with the latest release's api.yaml: a field
removed, renamed or retyped, a protobuf number changed, a required field added, or a
stored version dropped is an error until accepted with
+apiserver-boot:accept-breaking-change=<id> in the group's doc.go.

The release name is a semantic version with a leading v. A release already recorded
is never overwritten. Runs generate, then the project's test binary to write the
fixtures (go test, with the Go toolchain on PATH).`,
		Example: `  # after tagging v0.2.0 of the project
  apiserver-boot api snapshot v0.2.0
  git add pkg/apis/testdata/v0.2.0 && git commit -m "API of v0.2.0"`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return errors.New("api snapshot needs the release to record, e.g. apiserver-boot api snapshot v0.2.0")
			case len(args) > 1:
				return fmt.Errorf("unexpected argument %q: api snapshot records one release, e.g. apiserver-boot api snapshot %s", args[1], args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root, _, api, err := loadProject()
			if err != nil {
				return err
			}
			// Ctrl-C stops go test's process group and removes the unfinished folder.
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return snapshot(ctx, root, api, args[0], cmd.OutOrStdout())
		},
	}
}

// snapshot records release: the API description written by generate and
// fixtures written by the project's own test binary, into a temporary folder
// renamed into place only when both succeeded.
func snapshot(ctx context.Context, root string, api *model.API, release string, out io.Writer) error {
	if err := project.ValidateRelease(release); err != nil {
		return err
	}
	final := filepath.Join(root, filepath.FromSlash(generators.SnapshotsDir), release)
	if _, err := os.Stat(final); err == nil {
		return fmt.Errorf("release %s is already recorded in %s: recorded releases are history and are never overwritten (pick the next release name)", release, rel(root, final))
	}
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), "."+release+".")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	// One generate pass brings the code up to date, checks the API against
	// the latest release and describes it (api.yaml) into the new folder.
	if api.Header, err = project.Boilerplate(root); err != nil {
		return err
	}
	if _, err := generators.Run(api, generators.Options{SnapshotDir: tmp}); err != nil {
		return err
	}
	for _, w := range api.Warnings {
		fmt.Fprintf(out, "warning: %s\n", w)
	}

	// The fixtures come from the project's code: its types, conversions and
	// generated protobuf, through the generated TestCompatibility.
	test := exec.Command("go", "test", "-count=1", "-run", "^TestCompatibility$", "./pkg/apis/")
	test.Dir = root
	test.Env = append(os.Environ(), project.WriteFixturesEnv+"="+tmp)
	var log bytes.Buffer
	test.Stdout, test.Stderr = &log, &log
	if err := proc.Run(ctx, test); err != nil {
		return fmt.Errorf("writing the fixtures with go test ./pkg/apis: %w\n%s", err, log.String())
	}

	if err := os.Chmod(tmp, 0o755); err != nil { // MkdirTemp makes it private; it is a project folder
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return err
	}
	entries, _ := os.ReadDir(final)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	fmt.Fprintf(out, "recorded release %s in %s (%d files: %v)\n", release, rel(root, final), len(names), names)
	fmt.Fprintf(out, "commit it: go test ./pkg/apis now checks that later code reads these fixtures, and generate that the API keeps what %s published\n", release)
	return nil
}

func rel(root, path string) string {
	r, err := filepath.Rel(root, path)
	if err != nil {
		return path
	}
	return r
}
