package main

import (
	"context"
	"os/exec"
	"syscall"
)

// startProcess starts cmd in its own process group (so that stopping it also
// stops what it started, and the terminal's Ctrl-C reaches only us), with a
// parent-death signal as a backstop.
func startProcess(name string, cmd *exec.Cmd) (*child, error) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// runProcess runs cmd to completion as a child process; when ctx ends first
// (Ctrl-C), its process group is stopped as `run local` stops its children
// (SIGTERM, then SIGKILL after 15 s) and ctx's error is returned.
func runProcess(ctx context.Context, name string, cmd *exec.Cmd) error {
	c, err := startProcess(name, cmd)
	if err != nil {
		return err
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		stopAll([]*child{c})
		return ctx.Err()
	}
}
