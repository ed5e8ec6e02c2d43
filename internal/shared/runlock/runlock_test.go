package runlock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func record(pid int) Record {
	return Record{PID: pid, APIServer: "https://127.0.0.1:9443", ControllerManager: "127.0.0.1:9440", Etcd: "embedded", Kubeconfig: "./kubeconfig", Started: time.Now()}
}

func TestSecondAcquireNamesTheFirst(t *testing.T) {
	state := filepath.Join(t.TempDir(), ".apiserver-boot")
	first, err := Acquire(state, record(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(state, FileName))

	second := record(4242)
	second.APIServer = "https://127.0.0.1:10443"
	_, err = Acquire(state, second)
	var held *HeldError
	if !errors.As(err, &held) {
		t.Fatalf("second Acquire: want a *HeldError, got %v", err)
	}
	want := fmt.Sprintf("run local is already running in this project (pid %d, apiserver https://127.0.0.1:9443, controller-manager 127.0.0.1:9440, kubeconfig ./kubeconfig, since ", os.Getpid())
	if !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), fmt.Sprintf("stop it first (Ctrl-C in its terminal, or kill %d)", os.Getpid())) {
		t.Errorf("error:\n%s\nwant it to start with\n%s", err, want)
	}
	if after, _ := os.ReadFile(filepath.Join(state, FileName)); string(after) != string(before) {
		t.Errorf("the refused Acquire changed the record:\n%s\nwas\n%s", after, before)
	}
	if st, err := os.Stat(filepath.Join(state, FileName)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("lock file: %v, mode %v, want 0600", err, st.Mode().Perm())
	}
	if st, err := os.Stat(state); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("state folder: %v, mode %v, want 0700", err, st.Mode().Perm())
	}

	if err := first.Release(); err != nil {
		t.Fatal(err)
	}
	third, err := Acquire(state, second)
	if err != nil {
		t.Fatalf("Acquire after Release: %v", err)
	}
	third.Release()
}

func TestExternalEtcdIsNamed(t *testing.T) {
	state := t.TempDir()
	r := record(os.Getpid())
	r.Etcd, r.ControllerManager = "http://127.0.0.1:2379", ""
	l, err := Acquire(state, r)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	_, err = Acquire(state, record(1))
	if err == nil || !strings.Contains(err.Error(), "apiserver https://127.0.0.1:9443, etcd http://127.0.0.1:2379, kubeconfig") || strings.Contains(err.Error(), "controller-manager") {
		t.Errorf("error: %v", err)
	}
}

// TestHelperHoldLock is the process TestReleasedWhenTheHolderIsKilled kills.
func TestHelperHoldLock(t *testing.T) {
	state := os.Getenv("RUNLOCK_TEST_STATE")
	if state == "" {
		t.Skip("started by TestReleasedWhenTheHolderIsKilled")
	}
	if _, err := Acquire(state, record(os.Getpid())); err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	db, err := os.OpenFile(filepath.Join(state, "db"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil || syscall.Flock(int(db.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		fmt.Println("error: locking db:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	time.Sleep(time.Minute)
	os.Exit(1)
}

// TestReleasedWhenTheHolderIsKilled: a holder killed with SIGKILL leaves its
// record, which does not block the next Acquire; while it lives, Holder
// names it as the holder of a file it locks.
func TestReleasedWhenTheHolderIsKilled(t *testing.T) {
	state := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestHelperHoldLock$")
	cmd.Env = append(os.Environ(), "RUNLOCK_TEST_STATE="+state)
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if line != "locked\n" {
		t.Fatalf("helper: %q", line)
	}
	_, err := Acquire(state, record(os.Getpid()))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("(pid %d,", cmd.Process.Pid)) {
		t.Fatalf("Acquire while the helper holds the lock: want an error naming pid %d, got %v", cmd.Process.Pid, err)
	}
	held, pid, err := Holder(filepath.Join(state, "db"))
	if err != nil || !held {
		t.Fatalf("Holder of the helper's db: held=%v err=%v", held, err)
	}
	if pid != cmd.Process.Pid {
		t.Errorf("Holder: pid %d, want the helper's %d", pid, cmd.Process.Pid)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	l, err := Acquire(state, record(os.Getpid()))
	if err != nil {
		t.Fatalf("Acquire after the holder was killed: %v", err)
	}
	l.Release()
	if held, _, err := Holder(filepath.Join(state, "db")); held || err != nil {
		t.Errorf("Holder after the holder was killed: held=%v err=%v", held, err)
	}
	if held, _, err := Holder(filepath.Join(state, "missing")); held || err != nil {
		t.Errorf("Holder of a missing file: held=%v err=%v", held, err)
	}
}
