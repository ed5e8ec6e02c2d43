package apicompat

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// exampleBaseline stands for the last release until there is one (no tag
// vX.Y.Z yet): its example/ is the generated code TestPreviousExampleBuilds
// builds against this checkout. It is main before pkg/'s API was trimmed
// (issue 33). Once a release tag exists the test takes example/ from the
// highest one and this commit is no longer read (docs/releasing.md).
const exampleBaseline = "e46a6d4550bb46ae86f2c0a9f30adabf9b67ac13"

// TestPreviousExampleBuilds: the example project as the last release
// generated it (example/ at the last release tag, else at exampleBaseline)
// still builds and vets against this checkout's pkg/: its framework
// requirement replaced by the checkout and its go.mod tidied, as a user's
// `go get` of the new release would. Its own tests are not run: they need
// etcd. Slow (a build of the project): skipped with -short.
func TestPreviousExampleBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the previous release's example project")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := LastRelease(root, "")
	if err != nil {
		t.Fatal(err)
	}
	if ref == "" {
		ref = exampleBaseline
	}
	tmp := t.TempDir()
	if err := Extract(root, ref, tmp, "example"); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "example")
	for _, step := range [][]string{
		{"go", "mod", "edit", "-replace", version.Module + "=" + root},
		{"go", "mod", "tidy"},
		{"go", "build", "./..."},
		{"go", "vet", "./..."},
	} {
		cmd := exec.Command(step[0], step[1:]...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("example/ of %s against this checkout's pkg/: %s: %v\n%s\n"+
				"generated code of the last release no longer compiles: restore what it uses in pkg/ (docs/releasing.md)",
				ref, strings.Join(step, " "), err, out)
		}
	}
}
