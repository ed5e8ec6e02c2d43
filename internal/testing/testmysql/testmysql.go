// Package testmysql starts a throw-away MariaDB (or MySQL) server for
// tests, as internal/testing/testpg does for PostgreSQL: mariadb-install-db into a
// temporary folder, the server on a free loopback port (and a socket in
// that folder) in its own process group, a database and a user with a
// password, and the server stopped and its folder removed when the test
// ends (also when it fails, or the test process is interrupted; the server
// is killed if the test process dies). internal/testing/testdb is the
// harness; this package says what is MariaDB's.
//
// It uses the binaries installed on the machine (Debian: apt-get install
// mariadb-server): mariadbd and mariadb-install-db (or mysqld and
// mysql_install_db) in $APISERVER_BOOT_MYSQL_BINDIR, /usr/sbin and
// /usr/bin, or on PATH. The system service is not used. The server refuses
// to run as root: when the tests run as root, it runs as the "mysql" system
// user (the package's), with a folder it can reach.
//
// Without MariaDB, Start skips the test, unless
// $APISERVER_BOOT_REQUIRE_MYSQL=1 (CI sets it): then the test fails.
package testmysql

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testdb"
)

// Environment variables read here.
const (
	// RequireEnv set to 1 turns "MariaDB is not installed" from a skip
	// into a failure, so that CI never skips silently.
	RequireEnv = "APISERVER_BOOT_REQUIRE_MYSQL"
	// BinDirEnv names a folder holding the server and its install script,
	// overriding the search.
	BinDirEnv = "APISERVER_BOOT_MYSQL_BINDIR"
)

// ErrNotInstalled is wrapped by New's error when no MariaDB binaries are found.
var ErrNotInstalled = fmt.Errorf("MariaDB is %w", testdb.ErrNotInstalled)

// The user and database New creates for the tests.
const (
	User     = "testmy"
	Database = "testmy"
)

// StartTimeout bounds how long the server may take to accept connections.
const StartTimeout = testdb.StartTimeout

// mariadb is what the harness knows of MariaDB.
var mariadb = testdb.Database{
	Name:       "MariaDB",
	RequireEnv: RequireEnv,
	SystemUser: "mysql",
	DirPrefix:  "testmysql-",
	ShortDir:   true, // the socket, mysql.sock
	LogFile:    "mariadb.log",
	BindFailed: "Can't start server: Bind on TCP/IP port",
	// Clients are disconnected, InnoDB flushes. (mariadbd runs threads,
	// no children.)
	StopSignal: syscall.SIGTERM,
}

// Server is a running (or stopped) MariaDB server of a test. Its harness
// (testdb.Server) holds Port, Password (User's), Dir (with the data
// folder, Dir/data, the socket and the server's log, Dir/mariadb.log) and
// Start, Stop, Kill, Running, Log and Close.
type Server struct {
	// URL is the --datastore-endpoint reaching Database as User with its
	// password over loopback (kine's form):
	// mysql://testmy:PASSWORD@tcp(127.0.0.1:PORT)/testmy.
	URL string
	// DSN is the same for Go's MySQL driver (no mysql:// prefix).
	DSN string
	*testdb.Server

	server, install string // binaries
	adminPass       string
}

// Required tells whether $APISERVER_BOOT_REQUIRE_MYSQL asks for MariaDB.
func Required() bool { return mariadb.Required() }

// Start starts a server for t, stopped and removed on t's cleanup. Without
// MariaDB it skips t (fails it when Required).
func Start(t testing.TB) *Server {
	t.Helper()
	return testdb.Start(t, &mariadb, New)
}

// Binaries returns the server and its install script, or an error wrapping
// ErrNotInstalled that says where it looked.
func Binaries() (server, install string, err error) {
	isFile := func(p string) bool {
		st, err := os.Stat(p)
		return err == nil && !st.IsDir()
	}
	pairs := [][2]string{{"mariadbd", "mariadb-install-db"}, {"mysqld", "mysql_install_db"}}
	var dirs []string
	if dir := os.Getenv(BinDirEnv); dir != "" {
		dirs = []string{dir}
	} else {
		dirs = []string{"/usr/sbin", "/usr/bin"}
	}
	for _, p := range pairs {
		for _, sd := range dirs {
			for _, id := range dirs {
				if isFile(filepath.Join(sd, p[0])) && isFile(filepath.Join(id, p[1])) {
					return filepath.Join(sd, p[0]), filepath.Join(id, p[1]), nil
				}
			}
		}
	}
	if os.Getenv(BinDirEnv) != "" {
		return "", "", fmt.Errorf("%w: $%s=%s holds no mariadbd and mariadb-install-db", ErrNotInstalled, BinDirEnv, dirs[0])
	}
	for _, p := range pairs {
		s, err1 := exec.LookPath(p[0])
		i, err2 := exec.LookPath(p[1])
		if err1 == nil && err2 == nil {
			return s, i, nil
		}
	}
	return "", "", fmt.Errorf("%w: no mariadbd and mariadb-install-db in /usr/sbin, /usr/bin, $%s or PATH (Debian: apt-get install mariadb-server)", ErrNotInstalled, BinDirEnv)
}

// New initialises a data folder, starts the server and creates User and
// Database. The caller must Close it.
func New() (*Server, error) {
	server, install, err := Binaries()
	if err != nil {
		return nil, err
	}
	s := &Server{server: server, install: install, adminPass: testdb.Secret()}
	if s.Server, err = testdb.New(&mariadb, s.serverCommand, s.ready); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	if err := s.installDB(); err != nil {
		return nil, err
	}
	if err := s.StartOnFreePort(); err != nil {
		return nil, err
	}
	if err := s.setUp(); err != nil {
		return nil, err
	}
	s.DSN = s.dsn(User, s.Password, Database)
	s.URL = "mysql://" + s.DSN
	ok = true
	return s, nil
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }
func (s *Server) socket() string  { return filepath.Join(s.Dir, "mysql.sock") }

// serverOptions are the server's options shared by the install and the
// server: no option file is read (--no-defaults, first), small InnoDB files.
func serverOptions() []string {
	return []string{"--innodb-log-file-size=8M", "--innodb-buffer-pool-size=32M", "--skip-name-resolve"}
}

// installDB creates the data folder (the system tables, no test database).
// root@localhost has no password until setUp gives it one; the server
// listens on no port before that (the install runs it without networking).
func (s *Server) installDB() error {
	args := append([]string{"--no-defaults", "--datadir=" + s.dataDir(), "--auth-root-authentication-method=normal",
		"--skip-test-db"}, serverOptions()...)
	if !s.AsSystemUser() {
		// Run by a non-root user, the script would chown to "mysql".
		if u, err := user.Current(); err == nil {
			args = append(args, "--user="+u.Username)
		}
	}
	return s.Run(s.Command(s.install, args...))
}

// serverCommand is the server on Port with the data folder of New.
func (s *Server) serverCommand() *exec.Cmd {
	args := append([]string{"--no-defaults", "--datadir=" + s.dataDir(), "--socket=" + s.socket(),
		"--port=" + strconv.Itoa(s.Port), "--bind-address=127.0.0.1", "--skip-networking=0",
		"--pid-file=" + filepath.Join(s.Dir, "mariadb.pid"), "--log-error=" + filepath.Join(s.Dir, mariadb.LogFile),
		// Each commit is written to the OS, which keeps it when the server
		// crashes (kill -9), not when the machine does; tests crash only
		// processes.
		"--innodb-flush-log-at-trx-commit=2", "--innodb-doublewrite=0", "--skip-log-bin",
		"--max-connections=300"}, serverOptions()...)
	return s.Command(s.server, args...)
}

// adminDSN reaches the server as root on its socket (root has no password
// right after the install).
func (s *Server) adminDSN(password string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr = "root", password, "unix", s.socket()
	cfg.MultiStatements = true
	return cfg.FormatDSN()
}

func (s *Server) dsn(user, password, db string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Passwd, cfg.Net, cfg.Addr, cfg.DBName = user, password, "tcp", "127.0.0.1:"+strconv.Itoa(s.Port), db
	return cfg.FormatDSN()
}

// ping connects once to dsn.
func ping(dsn string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// ready tries once to reach the server on its TCP port (any answer will
// do: before setUp, as before it, root may log in without a password).
func (s *Server) ready() error {
	err := ping(s.dsn("root", s.adminPass, ""))
	var me *mysql.MySQLError
	if err == nil || errors.As(err, &me) {
		return nil
	}
	return err
}

func (s *Server) exec(dsn string, statements ...string) error {
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, st := range statements {
		if _, err := db.ExecContext(ctx, st); err != nil {
			return fmt.Errorf("%s: %w", st, err)
		}
	}
	return nil
}

// Admin runs statements as root (on the server's socket), e.g. to take a
// privilege from User.
func (s *Server) Admin(statements ...string) error {
	return s.exec(s.adminDSN(s.adminPass), statements...)
}

// setUp gives root a password, removes the other root accounts (which
// would let anyone on the machine in through the port without one), and
// creates User, allowed from 127.0.0.1 only, and Database, which User owns.
func (s *Server) setUp() error {
	return s.exec(s.adminDSN(""),
		fmt.Sprintf("ALTER USER root@localhost IDENTIFIED BY '%s'", s.adminPass),
		"DELETE FROM mysql.global_priv WHERE User = 'root' AND Host <> 'localhost'",
		"DELETE FROM mysql.global_priv WHERE User = ''",
		"FLUSH PRIVILEGES",
		fmt.Sprintf("CREATE USER '%s'@'127.0.0.1' IDENTIFIED BY '%s'", User, s.Password),
		fmt.Sprintf("CREATE DATABASE `%s`", Database),
		fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'127.0.0.1'", Database, User))
}

// CreateDatabase creates another database User may use (a fresh one per
// test, say) and returns its --datastore-endpoint URL. name must be a
// lowercase SQL identifier.
func (s *Server) CreateDatabase(name string) (string, error) {
	if err := testdb.CheckName(name); err != nil {
		return "", err
	}
	if err := s.Admin(fmt.Sprintf("CREATE DATABASE `%s`", name),
		fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'127.0.0.1'", name, User)); err != nil {
		return "", err
	}
	return "mysql://" + s.dsn(User, s.Password, name), nil
}
