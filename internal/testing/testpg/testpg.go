// Package testpg starts a throw-away PostgreSQL server for tests: initdb
// into a temporary folder, the server on a free loopback port in its own
// process group, a database and a user with a password, and the server
// stopped and its folder removed when the test ends (also when it fails,
// or the test process is interrupted). internal/testing/testdb is the
// harness; this package says what is PostgreSQL's.
//
// It uses the PostgreSQL binaries installed on the machine: Debian's
// packages keep them out of PATH, in /usr/lib/postgresql/<major>/bin (the
// newest major there is used); $APISERVER_BOOT_POSTGRES_BINDIR names
// another folder, and initdb on PATH is the last resort. initdb and the
// server refuse to run as root: when the tests run as root, both run as the
// "postgres" system user (the package's), with a folder it can reach.
//
// Without PostgreSQL, Start skips the test, unless
// $APISERVER_BOOT_REQUIRE_POSTGRES=1 (CI sets it): then the test fails.
package testpg

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testdb"
)

// Environment variables read here.
const (
	// RequireEnv set to 1 turns "PostgreSQL is not installed" from a skip
	// into a failure, so that CI never skips silently.
	RequireEnv = "APISERVER_BOOT_REQUIRE_POSTGRES"
	// BinDirEnv names the folder of initdb and postgres, overriding the search.
	BinDirEnv = "APISERVER_BOOT_POSTGRES_BINDIR"
)

// ErrNotInstalled is wrapped by New's error when no PostgreSQL binaries are found.
var ErrNotInstalled = fmt.Errorf("PostgreSQL is %w", testdb.ErrNotInstalled)

// The superuser initdb creates, and the user and database New creates for the tests.
const (
	adminUser = "postgres"
	User      = "testpg"
	Database  = "testpg"
)

// StartTimeout bounds how long the server may take to accept connections.
const StartTimeout = testdb.StartTimeout

// postgres is what the harness knows of PostgreSQL.
var postgres = testdb.Database{
	Name:       "PostgreSQL",
	RequireEnv: RequireEnv,
	SystemUser: "postgres",
	DirPrefix:  "testpg-",
	LogFile:    "postgres.log",
	BindFailed: "could not bind",
	// PostgreSQL's fast shutdown: open transactions roll back, clients
	// are disconnected. (Its children call setsid: the signal reaches
	// the postmaster, which stops them, then itself.)
	StopSignal: syscall.SIGINT,
}

// Server is a running (or stopped) PostgreSQL server of a test. Its
// harness (testdb.Server) holds Port, Password (User's), Dir (with the
// data folder, Dir/data, and the server's log, Dir/postgres.log) and
// Start, Stop, Kill, Running, Log and Close.
type Server struct {
	// URL reaches Database as User with its password over loopback:
	// postgres://testpg:PASSWORD@127.0.0.1:PORT/testpg?sslmode=disable.
	URL string
	*testdb.Server

	bin       string
	adminPass string
}

// Required tells whether $APISERVER_BOOT_REQUIRE_POSTGRES asks for PostgreSQL.
func Required() bool { return postgres.Required() }

// Start starts a server for t, stopped and removed on t's cleanup. Without
// PostgreSQL it skips t (fails it when Required).
func Start(t testing.TB) *Server {
	t.Helper()
	return testdb.Start(t, &postgres, New)
}

// BinDir returns the folder holding initdb and postgres, or an error
// wrapping ErrNotInstalled that says where it looked.
func BinDir() (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() {
				return false
			}
		}
		return true
	}
	if dir := os.Getenv(BinDirEnv); dir != "" {
		if !has(dir) {
			return "", fmt.Errorf("%w: $%s=%s holds no initdb and postgres", ErrNotInstalled, BinDirEnv, dir)
		}
		return dir, nil
	}
	// Debian and Ubuntu: /usr/lib/postgresql/<major>/bin, the newest major first.
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		a, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		b, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return a > b
	})
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if initdb, err := exec.LookPath("initdb"); err == nil && has(filepath.Dir(initdb)) {
		return filepath.Dir(initdb), nil
	}
	return "", fmt.Errorf("%w: no initdb and postgres in /usr/lib/postgresql/*/bin, $%s or PATH (Debian: apt-get install postgresql)", ErrNotInstalled, BinDirEnv)
}

// New initialises a data folder, starts the server and creates User and
// Database. The caller must Close it.
func New() (*Server, error) {
	bin, err := BinDir()
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, adminPass: testdb.Secret()}
	if s.Server, err = testdb.New(&postgres, s.serverCommand, s.ready); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	if err := s.initdb(); err != nil {
		return nil, err
	}
	if err := s.StartOnFreePort(); err != nil {
		return nil, err
	}
	if err := s.createUser(); err != nil {
		return nil, err
	}
	s.URL = s.urlFor(User, s.Password, Database)
	ok = true
	return s, nil
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }

// initdb creates the data folder: password (SCRAM) authentication for
// everyone, the superuser's password from a file removed afterwards.
func (s *Server) initdb() error {
	pwfile, err := s.WriteOwned("pwfile", s.adminPass+"\n")
	if err != nil {
		return err
	}
	defer os.Remove(pwfile)
	return s.Run(s.Command(filepath.Join(s.bin, "initdb"), "--pgdata", s.dataDir(), "--username", adminUser, "--pwfile", pwfile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C", "--no-sync", "--no-instructions"))
}

// serverCommand is the server on Port with the data folder of New.
func (s *Server) serverCommand() *exec.Cmd {
	return s.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir(), "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", // TCP on loopback only: no socket in /var/run/postgresql
		// fsync=off: written data survives the server's crash (kill -9),
		// not the machine's; tests crash only processes.
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "dynamic_shared_memory_type=mmap", // not /dev/shm, small in containers
		"-c", "max_connections=200",
		"-c", "logging_collector=off")
}

// ready connects once as the superuser.
func (s *Server) ready() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.urlFor(adminUser, s.adminPass, "postgres"))
	if err != nil {
		return err
	}
	conn.Close(ctx)
	return nil
}

func (s *Server) urlFor(user, password, db string) string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(user, password), Host: "127.0.0.1:" + strconv.Itoa(s.Port), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// Admin runs statements as the superuser (in the database postgres), e.g.
// to take a privilege from User.
func (s *Server) Admin(statements ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.urlFor(adminUser, s.adminPass, "postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, st := range statements {
		if _, err := conn.Exec(ctx, st); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
	}
	return nil
}

func (s *Server) createUser() error {
	return s.Admin(
		fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s'", User, s.Password),
		fmt.Sprintf("CREATE DATABASE %s OWNER %s", Database, User))
}

// CreateDatabase creates another database owned by User (a fresh one per
// test, say) and returns its URL. name must be a lowercase SQL identifier.
func (s *Server) CreateDatabase(name string) (string, error) {
	if err := testdb.CheckName(name); err != nil {
		return "", err
	}
	if err := s.Admin(fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, User)); err != nil {
		return "", err
	}
	return s.urlFor(User, s.Password, name), nil
}
