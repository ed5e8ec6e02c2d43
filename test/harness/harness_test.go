package harness

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestProcess: a child leads its own process group, its output is
// collected, Err is nil until it ends, Kill ends it and what it started,
// and Restart runs it again with fresh output.
func TestProcess(t *testing.T) {
	p := Start(t, t.TempDir(), "sh", "-c", "sleep 300 & echo started $!; wait")
	p.WaitFor(t, "started", 10*time.Second)
	if pgid, err := syscall.Getpgid(p.Pid()); err != nil || pgid != p.Pid() || pgid == syscall.Getpgrp() {
		t.Fatalf("process group %d (%v), want its own (%d)", pgid, err, p.Pid())
	}
	if p.Err() != nil {
		t.Errorf("Err before the end: %v", p.Err())
	}
	child, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(p.Out.String(), "started ")))
	p.Kill(syscall.SIGTERM)
	select {
	case <-p.Done():
	default:
		t.Fatal("not ended after Kill")
	}
	if p.Err() == nil {
		t.Error("no error from a killed process")
	}
	if !WaitUntil(5*time.Second, func() bool { return errors.Is(syscall.Kill(child, 0), syscall.ESRCH) }) {
		t.Errorf("its child %d outlived Kill", child)
	}
	p.Restart(t)
	if strings.Contains(p.Out.String(), "started "+strconv.Itoa(child)) {
		t.Error("the output of the first run is still there")
	}
	p.WaitFor(t, "started", 10*time.Second)
	p.Kill(syscall.SIGKILL)
}

// TestErrAfterExit: Err says how the process ended.
func TestErrAfterExit(t *testing.T) {
	p := Start(t, os.TempDir(), "sh", "-c", "echo bye; exit 3")
	<-p.Done()
	if err := p.Err(); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("Err: %v", err)
	}
}
