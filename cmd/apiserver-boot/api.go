package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/apisnapshot"
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
			return apisnapshot.Record(ctx, root, api, args[0], cmd.OutOrStdout())
		},
	}
}
