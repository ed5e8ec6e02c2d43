package testdb

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
)

// Start starts the server on Port, in its own process group, its output
// appended to the log, and returns once it answers (killing it when it
// does not within StartTimeout). New's caller starts it first with
// StartOnFreePort; call Start again after Stop or Kill.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.server != nil {
		s.mu.Unlock()
		return fmt.Errorf("%s is already running", s.db.Name)
	}
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	_ = s.chown(log.Name())
	cmd := s.command()
	cmd.Stdout, cmd.Stderr = log, log
	p, err := proc.Start(cmd, syscall.SIGKILL)
	if err != nil {
		log.Close()
		s.mu.Unlock()
		return err
	}
	exited := make(chan struct{})
	s.server, s.exited = p, exited
	s.mu.Unlock()
	go func() {
		<-p.Done()
		log.Close()
		s.mu.Lock()
		if s.server == p {
			s.server = nil
		}
		s.mu.Unlock()
		close(exited)
	}()
	if err := s.waitReady(p); err != nil {
		_ = s.Kill()
		return err
	}
	return nil
}

// waitReady tries to reach the server until it answers, it exits, or
// StartTimeout passes.
func (s *Server) waitReady(p *proc.Process) error {
	deadline := time.Now().Add(StartTimeout)
	for {
		err := s.ready()
		if err == nil {
			return nil
		}
		if p.Exited() {
			return fmt.Errorf("%s exited on start (%v); its log:\n%s", s.db.Name, p.Err(), s.Log())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not accept connections on 127.0.0.1:%d within %s (%v); its log:\n%s", s.db.Name, s.Port, StartTimeout, err, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Running tells whether the server process is running.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.server != nil
}

// Pid is the server process's id, also its process group's; 0 when it is
// not running.
func (s *Server) Pid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.server == nil {
		return 0
	}
	return s.server.Pid()
}

// Stop asks the server to shut down cleanly (Database.StopSignal to its
// process group) and waits for it; SIGKILL to the group after 30 s.
// Stopping a stopped server does nothing.
func (s *Server) Stop() error { return s.stop(s.db.StopSignal, stopGrace) }

// Kill kills the server (SIGKILL), as a crash would: its process group and
// the children that left it (PostgreSQL's call setsid), and waits until
// they are gone, so that none still holds the server's shared memory when
// it starts again. Start recovers from the database's log.
func (s *Server) Kill() error { return s.stop(syscall.SIGKILL, 0) }

func (s *Server) stop(sig syscall.Signal, grace time.Duration) error {
	s.mu.Lock()
	p, exited := s.server, s.exited
	s.mu.Unlock()
	if p == nil {
		return nil
	}
	if sig == syscall.SIGKILL {
		children := childrenOf(p.Pid())
		_ = p.Signal(syscall.SIGKILL)
		for _, c := range children {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		defer waitGone(children, 10*time.Second)
	}
	_ = p.Stop(sig, grace) // how a stopped server exited is no error
	<-exited
	return nil
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procStat(child); ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// procStat reads a process's parent and state from /proc/PID/stat (the
// state 'Z' of an exited process not yet reaped).
func procStat(pid int) (ppid int, state byte) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0][0]
}

// waitGone waits until every process of pids has exited (gone, or a
// zombie: it holds no memory any more), for at most timeout.
func waitGone(pids []int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, pid := range pids {
		for time.Now().Before(deadline) {
			if _, state := procStat(pid); state == 0 || state == 'Z' {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
