package testdb

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

// The checks below are what the tests of testpg and testmysql ask of their
// servers alike; each test keeps what is its database's own.

// DB is how a check reaches the test user's database on a server: its
// table kv (k, v), which the test created.
type DB struct {
	// Connect connects to the database and closes the connection again.
	Connect func() error
	// Exec runs one statement, failing the test on an error.
	Exec func(statement string)
	// Count returns how many rows kv holds, failing the test on an error.
	Count func() int
}

// CheckRestart checks Stop, Start and Kill on s, a started server whose
// table kv holds one row: after Stop it is not running and nothing
// answers; Start brings back the same port and the row; a row committed
// before Kill (a crash, after which no process group is left) is there
// after Start.
func CheckRestart(t testing.TB, s *Server, db DB) {
	t.Helper()
	port := s.Port
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Error("running after Stop")
	}
	if err := db.Connect(); err == nil {
		t.Fatal("connected to a stopped server")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if s.Port != port {
		t.Errorf("port %d after a restart, want %d", s.Port, port)
	}
	if n := db.Count(); n != 1 {
		t.Errorf("%d rows after a restart, want 1", n)
	}

	db.Exec("INSERT INTO kv VALUES ('b', '2')")
	pid := s.Pid()
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server's process group is still there after Kill: %v", err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	if n := db.Count(); n != 2 {
		t.Errorf("%d rows after a crash, want 2", n)
	}
}

// CheckClose checks Close on s, a server started by a database's Start: no
// process group and no folder are left, and closing again is no error.
func CheckClose(t testing.TB, s *Server) {
	t.Helper()
	pid := s.Pid()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("the server's process group is still there after Close: %v", err)
	}
	if _, err := os.Stat(s.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s left after Close: %v", s.Dir, err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("a second Close: %v", err)
	}
}

// CheckNotInstalled checks a database's Start (start) when its binaries are
// not found (binDirEnv names an empty folder): the test is skipped with a
// message that says notInstalled (e.g. "PostgreSQL is not installed") and
// names requireEnv, or, with requireEnv=1, fails saying notInstalled.
func CheckNotInstalled(t *testing.T, start func(testing.TB), binDirEnv, requireEnv, notInstalled string) {
	t.Helper()
	t.Setenv(binDirEnv, t.TempDir())
	t.Setenv(requireEnv, "")
	f := runFake(t, start)
	if !strings.Contains(f.skipped, notInstalled) || !strings.Contains(f.skipped, requireEnv) || f.failed != "" {
		t.Errorf("not required: skipped %q, failed %q", f.skipped, f.failed)
	}
	t.Setenv(requireEnv, "1")
	f = runFake(t, start)
	if !strings.Contains(f.failed, notInstalled) || f.skipped != "" {
		t.Errorf("required: skipped %q, failed %q", f.skipped, f.failed)
	}
}

// fakeT records how a Start ended the test (Skip or Fatal stop its
// goroutine, as testing.T's do).
type fakeT struct {
	testing.TB
	skipped, failed string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Skipf(format string, args ...any) {
	f.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fakeT) Fatal(args ...any) {
	f.failed = fmt.Sprint(args...)
	runtime.Goexit()
}

// runFake runs start with a fakeT over t in a goroutine of its own and
// returns how start ended it.
func runFake(t testing.TB, start func(testing.TB)) *fakeT {
	f := &fakeT{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		start(f)
	}()
	<-done
	return f
}
