// Package testdb is the harness of a throw-away database server for tests,
// which testpg (PostgreSQL) and testmysql (MariaDB) fill in with what is
// their own (binaries, how the data folder is made, the server's options,
// the connection strings, how to tell the server answers).
//
// The harness makes the server's temporary folder, owned by the database's
// system user when the tests run as root (the servers refuse root) and
// under a folder that user can reach; runs the database's commands as that
// user, each in its own process group, killed should the test process die
// (internal/shared/proc); starts the server on a free loopback port, waits
// until it answers, stops it cleanly or kills it as a crash would, and
// starts it again; and on Close stops it and removes its folder. Servers
// not closed yet are killed and their folders removed when the test
// process is interrupted (SIGINT, SIGTERM), which runs no test cleanup.
package testdb

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
)

// ErrNotInstalled is wrapped by a database's "not installed" error: Start
// skips the test then (fails it when the database is required).
var ErrNotInstalled = errors.New("not installed")

// StartTimeout bounds how long a server may take to answer once started.
const StartTimeout = 60 * time.Second

// stopGrace is how long Stop lets a server shut down before killing it.
const stopGrace = 30 * time.Second

// Database is what the harness needs to know of one database's server.
type Database struct {
	// Name names the database in messages ("PostgreSQL").
	Name string
	// RequireEnv is the environment variable which, set to 1, turns "not
	// installed" from a skip into a failure (CI sets it).
	RequireEnv string
	// SystemUser is the user the server runs as when the tests run as
	// root (the package's system user, "postgres").
	SystemUser string
	// DirPrefix begins the name of the server's temporary folder.
	DirPrefix string
	// ShortDir keeps the folder's path short (under /tmp when $TMPDIR is
	// long): a Unix socket in it must fit in 108 bytes.
	ShortDir bool
	// LogFile is the server's log, in the folder.
	LogFile string
	// BindFailed is what the log says when another process took the port.
	BindFailed string
	// StopSignal asks the server to shut down cleanly.
	StopSignal syscall.Signal
}

// Required tells whether db.RequireEnv asks for the database.
func (db *Database) Required() bool { return os.Getenv(db.RequireEnv) == "1" }

// Start returns newServer's server for t, closed on t's cleanup. When the
// database is not installed (newServer's error wraps ErrNotInstalled) it
// skips t, or fails it when db.Required.
func Start[S io.Closer](t testing.TB, db *Database, newServer func() (S, error)) S {
	t.Helper()
	s, err := newServer()
	if errors.Is(err, ErrNotInstalled) && !db.Required() {
		t.Skipf("%v (set %s=1 to fail instead of skipping)", err, db.RequireEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stopping %s: %v", db.Name, err)
		}
	})
	return s
}

// Server is a running (or stopped) database server of a test.
type Server struct {
	// Port is the loopback TCP port the server listens on (it keeps it
	// across Stop and Start).
	Port int
	// Password is the test user's password (random, hex).
	Password string
	// Dir is the server's folder: its data, its log, what the database
	// puts there.
	Dir string

	db      *Database
	cred    *syscall.Credential // nil: run as this process's user
	command func() *exec.Cmd
	ready   func() error

	mu         sync.Mutex
	server     *proc.Process // nil when not running
	exited     chan struct{} // closed once server has exited and is cleared
	setup      *proc.Process // a command Run runs
	closeOnce  sync.Once
	closeError error
}

// New makes the folder of a server of db; the caller must Close it.
// command returns the server's command line (made by Command, for Port and
// Dir); ready tries once to reach the server and returns nil when it
// answers. The server is not started: StartOnFreePort starts it.
func New(db *Database, command func() *exec.Cmd, ready func() error) (*Server, error) {
	s := &Server{db: db, command: command, ready: ready, Password: Secret()}
	track(s)
	var err error
	if os.Geteuid() == 0 {
		if s.cred, err = systemUser(db); err != nil {
			untrack(s)
			return nil, err
		}
	}
	if s.Dir, err = s.makeDir(); err != nil {
		untrack(s)
		return nil, err
	}
	return s, nil
}

// Secret returns a random password (hex).
func Secret() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// CheckName refuses a database name that is not a lowercase SQL identifier
// (letters, digits and '_', starting with a letter or '_'), so that it may
// be written into a statement.
func CheckName(name string) error {
	if name == "" {
		return errors.New("database name is empty")
	}
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return fmt.Errorf("database name %q: want lowercase letters, digits and '_', starting with a letter", name)
		}
	}
	return nil
}

// AsSystemUser tells whether the database's commands run as its
// SystemUser (the tests run as root).
func (s *Server) AsSystemUser() bool { return s.cred != nil }

// Command makes a command running a database binary in Dir as the server's
// user, in the C locale and UTC, in its own process group, killed should
// the test process die.
func (s *Server) Command(path string, args ...string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	return proc.Group(cmd, syscall.SIGKILL)
}

// Run runs cmd (made by Command) to its end; its error carries the command
// and its output. An interrupted test process kills its process group.
func (s *Server) Run(cmd *exec.Cmd) error {
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	p, err := proc.Start(cmd, syscall.SIGKILL)
	if err != nil {
		return fmt.Errorf("%s: %v", cmd, err)
	}
	s.mu.Lock()
	s.setup = p
	s.mu.Unlock()
	err = p.Err()
	s.mu.Lock()
	s.setup = nil
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", cmd, err, out.String())
	}
	return nil
}

// WriteOwned writes the file name in Dir, readable only by the server's
// user, and returns its path.
func (s *Server) WriteOwned(name, content string) (string, error) {
	path := filepath.Join(s.Dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return "", err
	}
	if err := s.chown(path); err != nil {
		return "", err
	}
	return path, nil
}

// chown gives path to the server's user (when it is not this process's).
func (s *Server) chown(path string) error {
	if s.cred == nil {
		return nil
	}
	return os.Chown(path, int(s.cred.Uid), int(s.cred.Gid))
}

// Log returns the server's log so far (for a test's failure message).
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.logPath())
	return string(b)
}

func (s *Server) logPath() string { return filepath.Join(s.Dir, s.db.LogFile) }

// Close stops the server (and kills what is left of its process group)
// and removes its folder. A second Close does nothing and returns the
// first one's error.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		err := s.Stop()
		if s.Dir != "" {
			err = errors.Join(err, os.RemoveAll(s.Dir))
		}
		s.closeError = err
		untrack(s)
	})
	return s.closeError
}

// StartOnFreePort picks a free loopback port and starts the server on it.
// Another process may take the port before the server binds it: when the
// log then says Database.BindFailed, it tries another one (three in all).
func (s *Server) StartOnFreePort() error {
	for attempt := 0; ; attempt++ {
		var err error
		if s.Port, err = freeport.Port(); err != nil {
			return err
		}
		err = s.Start()
		if err == nil || attempt == 2 || !strings.Contains(s.Log(), s.db.BindFailed) {
			return err
		}
	}
}
