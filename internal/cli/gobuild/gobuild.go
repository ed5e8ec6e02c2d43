// Package gobuild runs the go build of a command (run local's binaries,
// build container's), its progress shown as packages compiled.
package gobuild

import (
	"context"
	"fmt"
	"os/exec"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// Run runs go build -v with args in root (env its environment, nil for
// this process's), its progress shown on con as step, stopped on ctx's
// end (Ctrl-C) as proc.Run stops it. It returns how long it took and how
// many packages it compiled.
func Run(ctx context.Context, con *progress.Console, step, root string, env []string, args ...string) (time.Duration, int, error) {
	task := con.Start(step, "packages compiled")
	build := exec.Command("go", append([]string{"build", "-v"}, args...)...)
	build.Dir, build.Env = root, env
	w := task.GoBuildOutput()
	build.Stdout, build.Stderr = con, w
	err := proc.Run(ctx, build)
	w.Close()
	d := task.Done()
	return d, task.Count(), err
}

// Compiled says how many packages a build compiled.
func Compiled(n int) string {
	if n == 1 {
		return "1 package compiled"
	}
	return fmt.Sprintf("%d packages compiled", n)
}
