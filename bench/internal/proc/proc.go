// Package proc starts and stops the commands and servers of make bench, each
// in its own process group (stopping one also stops what it started: go
// build's compilers, kube_codegen.sh's generators, run local's apiserver)
// through internal/shared/proc, and reads what /proc says about them.
package proc

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	sharedproc "github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
)

// Every command and server the bench starts runs in its own process group,
// so that stopping it also stops what it started (go build's compilers,
// kube_codegen.sh's generators, run local's apiserver). Servers are tracked
// and stopped when the bench ends, also on Ctrl-C.

// Command runs name in dir with env added to the environment and returns its
// combined output. A cancelled ctx kills the whole process group.
func Command(ctx context.Context, dir string, env []string, name string, args ...string) (string, error) {
	cmd := sharedproc.CommandContext(ctx, syscall.SIGKILL, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s (in %s): %w\n%s", name, strings.Join(args, " "), dir, err, Tail(out.String(), 40))
	}
	return out.String(), nil
}

// TimedCommand is Command, returning how long it ran.
func TimedCommand(ctx context.Context, dir string, env []string, name string, args ...string) (time.Duration, string, error) {
	start := time.Now()
	out, err := Command(ctx, dir, env, name, args...)
	return time.Since(start), out, err
}

// Tail returns the last n lines of s.
func Tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Head returns the first n lines of s.
func Head(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append(lines[:n], "…")
	}
	return strings.Join(lines, "\n")
}

// Server is a long-running child whose output goes to a log file: the
// leader of its own process group, sent SIGTERM should the bench die.
// Its Process says its Pid, Done, Err and Exited.
type Server struct {
	Name string
	Log  string // its output
	*sharedproc.Process
}

var (
	serversMu sync.Mutex
	servers   []*Server
)

// StartServer starts bin in dir in its own process group, logging to logDir/<name>.log.
func StartServer(dir, logDir, name, bin string, env []string, args ...string) (*Server, error) {
	logPath := filepath.Join(logDir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	p, err := sharedproc.Start(cmd, syscall.SIGTERM)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	s := &Server{Name: name, Log: logPath, Process: p}
	go func() {
		<-p.Done()
		f.Close()
	}()
	serversMu.Lock()
	servers = append(servers, s)
	serversMu.Unlock()
	return s, nil
}

// LogTail is the end of the server's log, for error messages.
func (s *Server) LogTail() string {
	b, _ := os.ReadFile(s.Log)
	return Tail(string(b), 30)
}

// Stop sends SIGTERM to the server's process group, then SIGKILL after
// grace, and kills what the server left in its group once it has exited.
func (s *Server) Stop(grace time.Duration) {
	_ = s.Process.Stop(syscall.SIGTERM, grace)
}

// StopServers stops every server still running, the last started first.
func StopServers() {
	serversMu.Lock()
	defer serversMu.Unlock()
	for i := len(servers) - 1; i >= 0; i-- {
		servers[i].Stop(15 * time.Second)
	}
	servers = nil
}

// RSSMB reads VmRSS of pid from /proc, in MB.
func RSSMB(pid int) (float64, error) {
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

// LoadAvg is the 1, 5 and 15 minute load average.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// CPUTime is the user and system CPU time pid has used.
func CPUTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	fmt.Sscan(f[11], &utime)
	fmt.Sscan(f[12], &stime)
	// USER_HZ is 100 on Linux.
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
