// Package apisnapshot is apiserver-boot api snapshot: it records what a
// release of a project publishes (its API description and a filled object
// of every kind in every served version and encoding) in
// pkg/apis/testdata/<release>/, against which later code is checked.
package apisnapshot

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// Record records release of the project at root (api as the command read
// it): the API description written by generate and fixtures written by the
// project's own test binary (go test, stopped on ctx's end), into a
// temporary folder renamed into place only when both succeeded. A release
// already recorded is refused.
func Record(ctx context.Context, root string, api *model.API, release string, out io.Writer) error {
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
