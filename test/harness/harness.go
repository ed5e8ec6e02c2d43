// Package harness runs the child processes of the end-to-end and fault
// tiers: each in its own process group (internal/shared/proc), its output
// collected, always stopped when the test ends (also when it fails
// half-way), killed should the test process die.
package harness

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
)

// Buffer collects a child's output; safe to read while the child writes.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Process is a child in its own process group, killed (with its children)
// when the test ends or the test process dies.
type Process struct {
	Name string
	Args []string
	Dir  string
	Cmd  *exec.Cmd
	Out  *Buffer

	proc *proc.Process
}

// Start runs name with args in dir, stdin closed.
func Start(t testing.TB, dir, name string, args ...string) *Process {
	t.Helper()
	p := &Process{Name: name, Args: args, Dir: dir}
	p.Restart(t)
	t.Cleanup(func() { p.Kill(syscall.SIGKILL) })
	return p
}

// Restart starts the process again with the same arguments, after it ended
// (or starts it the first time); its output starts empty.
func (p *Process) Restart(t testing.TB) {
	t.Helper()
	p.Out = &Buffer{}
	p.Cmd = exec.Command(p.Name, p.Args...)
	p.Cmd.Dir, p.Cmd.Stdin = p.Dir, nil
	p.Cmd.Stdout, p.Cmd.Stderr = p.Out, p.Out
	started, err := proc.Start(p.Cmd, syscall.SIGKILL)
	if err != nil {
		t.Fatal(err)
	}
	p.proc = started
}

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.proc.Done() }

// Err is how the process ended; read it after Done (nil before).
func (p *Process) Err() error {
	if !p.proc.Exited() {
		return nil
	}
	return p.proc.Err()
}

// Pid is the process's id, also its process group's.
func (p *Process) Pid() int { return p.proc.Pid() }

// Signal sends sig to the process group without waiting.
func (p *Process) Signal(sig syscall.Signal) { _ = p.proc.Signal(sig) }

// Kill sends sig to the process group and waits for the process to end,
// killing the group after 30s. Children the leader left in its group (an
// apiserver, an etcd) are killed too once it has ended.
func (p *Process) Kill(sig syscall.Signal) {
	_ = p.proc.Stop(sig, 30*time.Second)
	_ = p.proc.Signal(syscall.SIGKILL) // what the leader left behind in its group
}

// Stop sends SIGINT to the process, as Ctrl-C does, and fails the test
// unless it exits cleanly within 60s.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	_ = p.Cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.Done():
		if err := p.Err(); err != nil {
			t.Errorf("exit after SIGINT: %v\n%s", err, p.Out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("still running 60s after SIGINT:\n%s", p.Out.String())
	}
}

// WaitFor waits until the output contains s, failing if the process exits
// first or timeout passes.
func (p *Process) WaitFor(t testing.TB, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.Out.String(), s) {
		select {
		case <-p.Done():
			t.Fatalf("process exited (%v) before printing %q:\n%s", p.Err(), s, p.Out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q after %s:\n%s", s, timeout, p.Out.String())
		}
	}
}

// Sh runs name with args in dir, stdin closed, and returns its combined
// output; the error carries the command and its output.
func Sh(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Stdin = dir, nil
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// FreePort returns a free loopback port, never one given before in this
// test binary.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// WaitUntil polls f until it holds or timeout passes, and says whether it
// held.
func WaitUntil(timeout time.Duration, f func() bool) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if f() {
			return true
		}
	}
	return f()
}
