package proc

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// StopGrace is how long a child stopped with SIGTERM (Run on Ctrl-C, run
// local's servers) has to exit before its group is killed.
const StopGrace = 15 * time.Second

// Run runs cmd to completion as Start starts it (parent-death signal
// SIGTERM) and returns how it exited. When ctx ends first (Ctrl-C), its
// process group is stopped (SIGTERM, then SIGKILL after StopGrace) and ctx's
// error is returned.
func Run(ctx context.Context, cmd *exec.Cmd) error {
	p, err := Start(cmd, syscall.SIGTERM)
	if err != nil {
		return err
	}
	select {
	case <-p.Done():
		return p.Err()
	case <-ctx.Done():
		p.Stop(syscall.SIGTERM, StopGrace)
		return ctx.Err()
	}
}
