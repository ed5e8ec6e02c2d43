package proc

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRunStopsTheGroup: Ctrl-C stops a child and what it started.
func TestRunStopsTheGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for { // cancel once the grandchild runs
			if _, err := os.Stat(pidFile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	err := Run(ctx, exec.Command("sh", "-c", "sleep 300 & echo $! > "+pidFile+".tmp; mv "+pidFile+".tmp "+pidFile+"; wait"))
	if err != context.Canceled || time.Since(start) > 20*time.Second {
		t.Fatalf("Run returned %v after %s", err, time.Since(start))
	}
	b, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	// Gone, or a zombie waiting for init to reap it.
	alive := func() bool {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		return syscall.Kill(pid, 0) == nil && (err != nil || !strings.Contains(string(stat), ") Z "))
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive() {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the grandchild %d survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
