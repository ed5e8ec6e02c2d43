//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/freeport"
)

// syncBuffer collects a child's output for assertions.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// freePort returns a free loopback port, never one given before in this
// test binary.
func freePort(t *testing.T) int {
	t.Helper()
	p, err := freeport.Port()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// process is a child started in its own process group and always stopped.
type process struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

func start(t *testing.T, dir string, name string, args ...string) *process {
	t.Helper()
	p := &process{out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.signal(syscall.SIGKILL)
		<-p.done
	})
	return p
}

func (p *process) signal(sig syscall.Signal) { _ = syscall.Kill(-p.cmd.Process.Pid, sig) }

// waitFor waits until the output contains s, failing if the process exits first.
func (p *process) waitFor(t *testing.T, s string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(p.out.String(), s) {
		select {
		case <-p.done:
			t.Fatalf("process exited (%v) before printing %q:\n%s", p.err, s, p.out.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q after %s:\n%s", s, timeout, p.out.String())
		}
	}
}

// stop sends SIGINT, as Ctrl-C does, and waits for a clean exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-p.done:
		if p.err != nil {
			t.Errorf("exit after SIGINT: %v\n%s", p.err, p.out.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("still running 60s after SIGINT:\n%s", p.out.String())
	}
}

// runLocal starts `apiserver-boot run local` and waits until it is ready.
func runLocal(t *testing.T, extra ...string) (*process, int) {
	t.Helper()
	port := freePort(t)
	args := append([]string{"run", "local", "--secure-port", fmt.Sprint(port)}, extra...)
	p := start(t, proj, cli, args...)
	p.waitFor(t, "Ready.", 5*time.Minute)
	for _, line := range strings.Split(p.out.String(), "\n") {
		if strings.HasPrefix(line, "apiserver ready in") {
			t.Log(line)
		}
	}
	return p, port
}

// projectProcesses lists processes running a binary of the project's bin/.
func projectProcesses() []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	binDir := filepath.Join(proj, "bin") + "/"
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, binDir) {
			out = append(out, e.Name()+" "+exe)
		}
	}
	return out
}

type result struct {
	stdout, stderr string
	err            error
}

func kubectl(args ...string) result {
	return kubectlWith(filepath.Join(proj, "kubeconfig"), "", args...)
}

// kubectlWith runs kubectl with a kubeconfig and, when not empty, stdin.
func kubectlWith(kubeconfig, stdin string, args ...string) result {
	// No discovery cache across calls: kubectl keys it by host:port, and a
	// port freed by one test's server is taken by another serving other
	// versions (kubectl then asks for a version that is not there).
	cache, err := os.MkdirTemp("", "kubectl-cache-")
	if err != nil {
		return result{"", "", err}
	}
	defer os.RemoveAll(cache)
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cache}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return result{stdout.String(), stderr.String(), err}
}

func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	r := kubectl(args...)
	if r.err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

func kubectlApplyStdin(t *testing.T, verb, manifest string) result {
	t.Helper()
	return kubectlStdin(manifest, verb, "-f", "-")
}

// kubectlStdin runs kubectl with manifest on its standard input.
func kubectlStdin(manifest string, args ...string) result {
	return kubectlWith(filepath.Join(proj, "kubeconfig"), manifest, args...)
}
