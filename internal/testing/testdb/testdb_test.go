package testdb

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary is also the fake database's server (TESTDB_FAKE=server)
// and a test process interrupted with a server running
// (TESTDB_FAKE=interrupted).
func TestMain(m *testing.M) {
	switch os.Getenv("TESTDB_FAKE") {
	case "server":
		fakeServer(os.Args[1], os.Args[2])
	case "interrupted":
		interrupted()
	default:
		os.Exit(m.Run())
	}
}

// fakeServer listens on port until SIGTERM. mode "exit" fails at once,
// "bind-once" says the port is taken the first time it runs in its
// folder, "child" starts a child in a session of its own (as PostgreSQL's
// are), writes its pid to child.pid and stops it on SIGTERM.
func fakeServer(port, mode string) {
	var child *exec.Cmd
	switch mode {
	case "exit":
		fmt.Println("broken")
		os.Exit(3)
	case "bind-once":
		if _, err := os.Stat("bound-once"); err != nil {
			_ = os.WriteFile("bound-once", nil, 0o644)
			fmt.Println("port taken")
			os.Exit(1)
		}
	case "child":
		child = exec.Command("sleep", "300")
		child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := child.Start(); err != nil {
			panic(err)
		}
		_ = os.WriteFile("child.pid", []byte(strconv.Itoa(child.Process.Pid)), 0o644)
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	l, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		panic(err)
	}
	fmt.Println("listening on", port)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	<-term
	fmt.Println("stopping")
	if child != nil {
		_ = child.Process.Kill()
		_ = child.Wait()
	}
	os.Exit(0)
}

func fakeDatabase() *Database {
	return &Database{Name: "FakeDB", RequireEnv: "TESTDB_REQUIRE_FAKE", SystemUser: "root", DirPrefix: "testdb-",
		LogFile: "fake.log", BindFailed: "port taken", StopSignal: syscall.SIGTERM}
}

// newFake is a fake database's server in mode (see fakeServer).
func newFake(t testing.TB, mode string) *Server {
	t.Helper()
	s, err := fake(mode)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fake(mode string) (s *Server, err error) {
	command := func() *exec.Cmd {
		cmd := s.Command(os.Args[0], strconv.Itoa(s.Port), mode)
		cmd.Env = append(cmd.Env, "TESTDB_FAKE=server")
		return cmd
	}
	ready := func() error {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(s.Port), time.Second)
		if err == nil {
			c.Close()
		}
		return err
	}
	return New(fakeDatabase(), command, ready)
}

func answers(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err == nil {
		c.Close()
	}
	return err == nil
}

func gone(pid int) bool {
	_, state := procStat(pid)
	return state == 0 || state == 'Z'
}

// TestServer: the server starts on a free port in its own process group,
// stops cleanly, starts again on the same port, dies with its children
// (also those in a session of their own) on Kill, and Close leaves no
// process and no folder.
func TestServer(t *testing.T) {
	s := newFake(t, "child")
	defer s.Close()
	if err := s.StartOnFreePort(); err != nil {
		t.Fatal(err)
	}
	pid := s.Pid()
	if pgid, err := syscall.Getpgid(pid); err != nil || pgid != pid || !s.Running() || !answers(s.Port) {
		t.Fatalf("pid %d, group %d (%v), running %v", pid, pgid, err, s.Running())
	}
	if err := s.Start(); err == nil || !strings.Contains(err.Error(), "FakeDB is already running") {
		t.Errorf("a second Start: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.Running() || s.Pid() != 0 || answers(s.Port) {
		t.Fatal("still running after Stop")
	}
	if !strings.Contains(s.Log(), "stopping") {
		t.Errorf("not stopped by StopSignal; its log:\n%s", s.Log())
	}
	port := s.Port
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if s.Port != port || !answers(port) {
		t.Errorf("started again on %d, answers %v, want %d", s.Port, answers(s.Port), port)
	}
	b, err := os.ReadFile(filepath.Join(s.Dir, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	child, _ := strconv.Atoi(string(b))
	pid = s.Pid()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if !gone(child) || !errors.Is(syscall.Kill(-pid, 0), syscall.ESRCH) || s.Running() {
		t.Errorf("after Kill: the child gone %v, the group %v, running %v", gone(child), syscall.Kill(-pid, 0), s.Running())
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) || s.Running() {
		t.Errorf("after Close: %s %v, running %v", s.Dir, err, s.Running())
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// TestStartOnFreePortRetries: a port taken before the server binds it is
// replaced by another.
func TestStartOnFreePortRetries(t *testing.T) {
	s := newFake(t, "bind-once")
	defer s.Close()
	if err := s.StartOnFreePort(); err != nil {
		t.Fatal(err)
	}
	if !answers(s.Port) || !strings.Contains(s.Log(), "port taken") {
		t.Errorf("not serving on %d after a taken port; its log:\n%s", s.Port, s.Log())
	}
}

// TestStartExited: a server that exits on start is an error with its log.
func TestStartExited(t *testing.T) {
	s := newFake(t, "exit")
	defer s.Close()
	err := s.StartOnFreePort()
	if err == nil || !strings.Contains(err.Error(), "FakeDB exited on start (exit status 3)") || !strings.Contains(err.Error(), "broken") {
		t.Errorf("StartOnFreePort: %v", err)
	}
	if s.Running() {
		t.Error("running")
	}
}

// TestRun: a command's failure carries the command and its output.
func TestRun(t *testing.T) {
	s := newFake(t, "")
	defer s.Close()
	if err := s.Run(s.Command("sh", "-c", "pwd; echo oops; exit 2")); err == nil ||
		!strings.Contains(err.Error(), "exit status 2") || !strings.Contains(err.Error(), "oops") || !strings.Contains(err.Error(), s.Dir) {
		t.Errorf("Run: %v", err)
	}
	if err := s.Run(s.Command("true")); err != nil {
		t.Error(err)
	}
}

// TestStartNotInstalled: a database not installed skips the test, or fails
// it when required; another error fails it.
func TestStartNotInstalled(t *testing.T) {
	db := fakeDatabase()
	start := func(err error) *fakeT {
		return runFake(t, func(f testing.TB) { Start(f, db, func() (*Server, error) { return nil, err }) })
	}
	notInstalled := fmt.Errorf("%w: no fakedb", fmt.Errorf("FakeDB is %w", ErrNotInstalled))
	t.Setenv(db.RequireEnv, "")
	if f := start(notInstalled); f.skipped != "FakeDB is not installed: no fakedb (set TESTDB_REQUIRE_FAKE=1 to fail instead of skipping)" || f.failed != "" {
		t.Errorf("not required: skipped %q, failed %q", f.skipped, f.failed)
	}
	if f := start(errors.New("broken")); f.failed != "broken" || f.skipped != "" {
		t.Errorf("another error: skipped %q, failed %q", f.skipped, f.failed)
	}
	t.Setenv(db.RequireEnv, "1")
	if f := start(notInstalled); !strings.Contains(f.failed, "FakeDB is not installed") || f.skipped != "" {
		t.Errorf("required: skipped %q, failed %q", f.skipped, f.failed)
	}
}

// TestCheckName: only lowercase SQL identifiers.
func TestCheckName(t *testing.T) {
	for name, ok := range map[string]bool{"other_1": true, "_x": true, "": false, "1a": false, "A": false, "x; DROP DATABASE y": false, "a-b": false} {
		if err := CheckName(name); (err == nil) != ok {
			t.Errorf("CheckName(%q): %v", name, err)
		}
	}
}

// interrupted starts a fake server, says where, and waits to be interrupted.
func interrupted() {
	s, err := fake("")
	if err == nil {
		err = s.StartOnFreePort()
	}
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Dir, s.Pid())
	select {}
}

// TestInterrupted: SIGINT to a test process kills its servers and removes
// their folders, and the process ends by the signal.
func TestInterrupted(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "TESTDB_FAKE=interrupted")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line, err := bufio.NewReader(out).ReadString('\n')
	var dir string
	var pid int
	if _, err2 := fmt.Sscan(line, &dir, &pid); err != nil || err2 != nil {
		t.Fatalf("%q: %v %v", line, err, err2)
	}
	defer os.RemoveAll(dir)
	_ = cmd.Process.Signal(os.Interrupt)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || !ee.Sys().(syscall.WaitStatus).Signaled() || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGINT {
		t.Errorf("the test process ended with %v, want by SIGINT", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left: %v", dir, err)
	}
	if !gone(pid) {
		t.Errorf("the server %d is still there", pid)
	}
}
