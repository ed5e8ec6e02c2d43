package proc

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCommand: the output comes back, a failure says the command and its
// output, and a cancelled context ends what the command started too.
func TestCommand(t *testing.T) {
	dir := t.TempDir()
	if out, err := Command(context.Background(), dir, []string{"GREETING=hi"}, "sh", "-c", "echo $GREETING; pwd"); err != nil || out != "hi\n"+dir+"\n" {
		t.Errorf("%q, %v", out, err)
	}
	if _, err := Command(context.Background(), dir, nil, "sh", "-c", "echo oops; exit 2"); err == nil ||
		!strings.Contains(err.Error(), "sh -c echo oops; exit 2 (in "+dir+"): exit status 2\noops") {
		t.Errorf("failure: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	out, err := Command(ctx, dir, nil, "sh", "-c", "sleep 300 & echo $!; wait")
	if err == nil || time.Since(start) > 10*time.Second {
		t.Fatalf("a cancelled command: %v after %s", err, time.Since(start))
	}
	child, _ := strconv.Atoi(strings.TrimSpace(out))
	if !gone(child) {
		t.Errorf("the command's child %d outlived the cancel", child)
	}
}

// gone waits up to 5 s for pid to end.
func gone(pid int) bool {
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			return true
		}
	}
	return false
}

// TestServer: a server logs to its file, leads its own process group, and
// StopServers stops it and what it started.
func TestServer(t *testing.T) {
	dir := t.TempDir()
	s, err := StartServer(dir, dir, "sleeper", "sh", nil, "-c", "sleep 300 & echo $!; wait")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop(time.Second)
	var child int
	for deadline := time.Now().Add(10 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, _ := os.ReadFile(s.Log)
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	if pgid, err := syscall.Getpgid(s.Pid()); err != nil || pgid != s.Pid() || child == 0 {
		t.Fatalf("group %d (%v) of %d, child %d; its log: %s", pgid, err, s.Pid(), child, s.LogTail())
	}
	StopServers()
	if !s.Exited() || !gone(child) {
		t.Errorf("after StopServers: exited %v, the child gone %v", s.Exited(), gone(child))
	}
	if err := s.Err(); err == nil {
		t.Error("no error from a stopped server")
	}
}
