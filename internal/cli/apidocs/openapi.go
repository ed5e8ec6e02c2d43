package apidocs

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// OpenAPIDocuments are the OpenAPI v3 documents the project's apiserver
// publishes, by "<group>/<version>.json": its own code writes them (`apiserver
// openapi`, built from the project as it is, generated files included),
// without serving or reaching a store. The build's progress shows on
// con; ctx's end stops the build and the run.
func OpenAPIDocuments(ctx context.Context, con *progress.Console, root string) (map[string][]byte, error) {
	tmp, err := os.MkdirTemp("", "apiserver-boot-openapi-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	task := con.Start("Building the apiserver for its OpenAPI documents", "")
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(tmp, "apiserver"), "./cmd/apiserver")
	build.Dir = root
	out, err := build.CombinedOutput()
	task.Done()
	if err != nil {
		return nil, fmt.Errorf("building cmd/apiserver: %w\n%s", err, out)
	}
	run := exec.CommandContext(ctx, filepath.Join(tmp, "apiserver"), "openapi", "--output", filepath.Join(tmp, "openapi"))
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
