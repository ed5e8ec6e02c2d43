// Package proc is the one way this module starts a child process: in its own
// process group (stopping it also stops what it started, and a terminal's
// Ctrl-C reaches only the parent), with a parent-death signal as a backstop
// should the parent die without stopping it.
package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Group makes cmd, once started, the leader of its own process group, sent
// deathSignal if this process dies first. It keeps a Credential cmd already
// has. Use it for a command run with cmd.Run or cmd.Output; Start also
// tracks the process.
func Group(cmd *exec.Cmd, deathSignal syscall.Signal) *exec.Cmd {
	attr := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: deathSignal}
	if cmd.SysProcAttr != nil {
		attr.Credential = cmd.SysProcAttr.Credential
	}
	cmd.SysProcAttr = attr
	return cmd
}

// CommandContext is exec.CommandContext set up by Group, whose cancel (ctx
// done) kills the whole process group, not only its leader.
func CommandContext(ctx context.Context, deathSignal syscall.Signal, name string, args ...string) *exec.Cmd {
	cmd := Group(exec.CommandContext(ctx, name, args...), deathSignal)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	return cmd
}

// Process is a started child: the leader of its own process group.
type Process struct {
	Cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// Start starts cmd as Group sets it up and waits for it in the background.
func Start(cmd *exec.Cmd, deathSignal syscall.Signal) (*Process, error) {
	if err := Group(cmd, deathSignal).Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process's id, also its process group's.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err waits for the process to exit and returns how it exited (cmd.Wait's error).
func (p *Process) Err() error {
	<-p.done
	return p.err
}

// Exited tells whether the process has exited.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process's group without waiting. A group already
// gone is not an error.
func (p *Process) Signal(sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid(), sig); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// Stop sends sig to the process's group and waits for the process to exit,
// killing the group (SIGKILL) after grace. A process that has already
// exited is sent nothing. It returns how the process exited. What the
// leader leaves behind in its group when it exits within grace is not
// killed (as run local has always stopped its children); a caller that
// wants the group gone sends SIGKILL after Stop (Signal).
func (p *Process) Stop(sig syscall.Signal, grace time.Duration) error {
	if !p.Exited() {
		_ = p.Signal(sig)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = p.Signal(syscall.SIGKILL)
			<-p.done
		}
	}
	return p.err
}

// Interrupt is the signal a terminal's Ctrl-C sends, for Stop.
var Interrupt = os.Interrupt.(syscall.Signal)
