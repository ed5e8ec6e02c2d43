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
