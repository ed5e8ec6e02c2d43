package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Every command and server the bench starts runs in its own process group,
// so that stopping it also stops what it started (go build's compilers,
// kube_codegen.sh's generators, run local's apiserver). Servers are tracked
// and stopped when the bench ends, also on Ctrl-C.

// command runs name in dir with env added to the environment and returns its
// combined output. A cancelled ctx kills the whole process group.
func command(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s (in %s): %w\n%s", name, strings.Join(args, " "), dir, err, tail(out.String(), 40))
	}
	return out.String(), nil
}

// timedCommand is command, returning how long it ran.
func timedCommand(ctx context.Context, dir string, env []string, name string, args ...string) (time.Duration, string, error) {
	start := time.Now()
	out, err := command(ctx, dir, env, name, args...)
	return time.Since(start), out, err
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// head returns the first n lines of s.
func head(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// server is a long-running child whose output goes to a log file.
type server struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error
}

var (
	serversMu sync.Mutex
	servers   []*server
)

// startServer starts bin in dir in its own process group, logging to logDir/<name>.log.
func startServer(dir, logDir, name, bin string, env []string, args ...string) (*server, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s := &server{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		s.err = cmd.Wait()
		f.Close()
		close(s.done)
	}()
	serversMu.Lock()
	servers = append(servers, s)
	serversMu.Unlock()
	return s, nil
}

func (s *server) pid() int { return s.cmd.Process.Pid }

func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// logTail is the end of the server's log, for error messages.
func (s *server) logTail() string {
	b, _ := os.ReadFile(s.log)
	return tail(string(b), 30)
}

// stop sends SIGTERM to the server's process group, then SIGKILL after grace.
func (s *server) stop(grace time.Duration) {
	if s.exited() {
		return
	}
	_ = syscall.Kill(-s.pid(), syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(grace):
		_ = syscall.Kill(-s.pid(), syscall.SIGKILL)
		<-s.done
	}
}

// stopServers stops every server still running, the last started first.
func stopServers() {
	serversMu.Lock()
	defer serversMu.Unlock()
	for i := len(servers) - 1; i >= 0; i-- {
		servers[i].stop(15 * time.Second)
	}
	servers = nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// rssMB reads VmRSS of pid from /proc, in MB.
func rssMB(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmRSS:")), "%f kB", &kb); err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	return 0, fmt.Errorf("no VmRSS in /proc/%d/status", pid)
}
