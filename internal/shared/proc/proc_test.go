package proc

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStopStopsTheGroup: a child's own child dies with it, and the child is
// the leader of its own group.
func TestStopStopsTheGroup(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "sleep 300 & echo $!; wait"), syscall.SIGKILL)
	if err != nil {
		t.Fatal(err)
	}
	pgid, err := syscall.Getpgid(p.Pid())
	if err != nil || pgid != p.Pid() {
		t.Fatalf("process group %d (%v), want its own (%d)", pgid, err, p.Pid())
	}
	if pgid == syscall.Getpgrp() {
		t.Fatal("the child shares the test's process group")
	}
	out, _ := exec.Command("pgrep", "-g", strconv.Itoa(pgid)).Output()
	if len(strings.Fields(string(out))) < 1 {
		t.Skip("pgrep lists nothing here")
	}
	p.Stop(syscall.SIGTERM, 5*time.Second)
	if !p.Exited() {
		t.Fatal("not exited after Stop")
	}
	groupGone(t, pgid)
}

// groupGone fails unless process group pgid is empty within 5 s.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, _ := exec.Command("pgrep", "-g", strconv.Itoa(pgid)).Output()
		if strings.TrimSpace(string(out)) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("processes left in the group: %s", out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStopKillsAfterGrace: a child that ignores SIGTERM is killed.
func TestStopKillsAfterGrace(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "trap '' TERM; sleep 300"), syscall.SIGKILL)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	err = p.Stop(syscall.SIGTERM, 300*time.Millisecond)
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("Stop: %v after %s", err, time.Since(start))
	}
}

// TestCommandContextKillsTheGroup: a cancelled context kills the child's children too.
func TestCommandContextKillsTheGroup(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	cmd := CommandContext(ctx, syscall.SIGKILL, "sh", "-c", "sleep 300 & wait")
	start := time.Now()
	if err := cmd.Run(); err == nil {
		t.Fatal("no error from a cancelled command")
	}
	if time.Since(start) > 10*time.Second {
		t.Fatalf("the cancelled command ran %s", time.Since(start))
	}
	groupGone(t, cmd.Process.Pid)
}
