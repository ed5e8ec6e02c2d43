// Package testmysql starts a throw-away MariaDB (or MySQL) server for
// tests, as internal/testing/testpg does for PostgreSQL: mariadb-install-db into a
// temporary folder, the server on a free loopback port (and a socket in
// that folder) in its own process group, a database and a user with a
// password, and the server stopped and its folder removed when the test
// ends (also when it fails; the server is killed if the test process dies).
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
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"
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
var ErrNotInstalled = errors.New("MariaDB is not installed")

// The user and database New creates for the tests.
const (
	User     = "testmy"
	Database = "testmy"
)

// StartTimeout bounds how long the server may take to accept connections.
const StartTimeout = 60 * time.Second

// Server is a running (or stopped) MariaDB server of a test.
type Server struct {
	// URL is the --datastore-endpoint reaching Database as User with its
	// password over loopback (kine's form):
	// mysql://testmy:PASSWORD@tcp(127.0.0.1:PORT)/testmy.
	URL string
	// DSN is the same for Go's MySQL driver (no mysql:// prefix).
	DSN string
	// Port is the loopback TCP port the server listens on (it keeps it
	// across Stop and Start).
	Port int
	// Password of User (random, hex).
	Password string
	// Dir holds the data folder (Dir/data), the socket and the server's
	// log (Dir/mariadb.log).
	Dir string

	server, install string // binaries
	cred            *syscall.Credential
	adminPass       string
	mu              sync.Mutex
	cmd             *exec.Cmd
	installing      int // the install's process group while it runs
	exited          chan struct{}
	exitErr         error
	closeOnce       sync.Once
	closeError      error
}

// Required tells whether $APISERVER_BOOT_REQUIRE_MYSQL asks for MariaDB.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Start starts a server for t, stopped and removed on t's cleanup. Without
// MariaDB it skips t (fails it when Required).
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := New()
	if errors.Is(err, ErrNotInstalled) && !Required() {
		t.Skipf("%v (set %s=1 to fail instead of skipping)", err, RequireEnv)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("stopping MariaDB: %v", err)
		}
	})
	return s
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
	s := &Server{server: server, install: install}
	track(s)
	if os.Geteuid() == 0 {
		if s.cred, err = mysqlUser(); err != nil {
			return nil, err
		}
	}
	if s.Dir, err = s.makeDir(); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			_ = s.Close()
		}
	}()
	s.adminPass, s.Password = randomHex(), randomHex()
	if err := s.installDB(); err != nil {
		return nil, err
	}
	// Another process may take the free port before the server binds it:
	// try another one then.
	for attempt := 0; ; attempt++ {
		if s.Port, err = freeport.Port(); err != nil {
			return nil, err
		}
		err = s.Start()
		if err == nil || attempt == 2 || !strings.Contains(s.Log(), "Can't start server: Bind on TCP/IP port") {
			break
		}
	}
	if err != nil {
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

// mysqlUser is the credential of the "mysql" system user, which Debian's
// package creates: the server refuses to run as root.
func mysqlUser() (*syscall.Credential, error) {
	u, err := user.Lookup("mysql")
	if err != nil {
		return nil, fmt.Errorf("running as root, MariaDB must run as another user, and there is no \"mysql\" user (%v): run the tests as a non-root user, or create one (useradd --system mysql)", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// makeDir creates the server's folder, owned by the user the server runs
// as, under a temporary folder that user can reach ($TMPDIR may be under
// /root, which the mysql user cannot enter: /tmp then). The socket's path
// must stay under 108 bytes: a long $TMPDIR is replaced by /tmp too.
func (s *Server) makeDir() (string, error) {
	parent := os.TempDir()
	if s.cred != nil && !reachable(parent) || len(parent) > 60 {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "testmysql-")
	if err != nil {
		return "", err
	}
	if s.cred != nil {
		if err := os.Chown(dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return "", err
		}
		if !reachable(dir) {
			os.RemoveAll(dir)
			return "", fmt.Errorf("%s cannot be reached by the mysql user (a parent folder is closed to others): set TMPDIR to a folder all users can enter", dir)
		}
	}
	return dir, nil
}

// reachable tells whether every folder above dir lets others through.
func reachable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil || st.Mode().Perm()&0o001 == 0 {
			return false
		}
		if d == filepath.Dir(d) {
			return true
		}
	}
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }
func (s *Server) socket() string  { return filepath.Join(s.Dir, "mysql.sock") }

// Log returns the server's log so far (for a test's failure message).
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "mariadb.log"))
	return string(b)
}

// command runs a binary as the server's user, in its own process group,
// killed if this process dies.
func (s *Server) command(path string, args ...string) *exec.Cmd {
	cmd := exec.Command(path, args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	return cmd
}

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
	if s.cred == nil {
		// Run by a non-root user, the script would chown to "mysql".
		if u, err := user.Current(); err == nil {
			args = append(args, "--user="+u.Username)
		}
	}
	cmd := s.command(s.install, args...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	s.mu.Lock()
	s.installing = cmd.Process.Pid
	s.mu.Unlock()
	err := cmd.Wait()
	s.mu.Lock()
	s.installing = 0
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", cmd, err, out.String())
	}
	return nil
}

// Start starts the server on Port with the data folder of New, in its own
// process group, and returns once it accepts connections. New starts it;
// call Start again after Stop or Kill.
func (s *Server) Start() error {
	s.mu.Lock()
	if s.cmd != nil {
		s.mu.Unlock()
		return errors.New("MariaDB is already running")
	}
	log, err := os.OpenFile(filepath.Join(s.Dir, "mariadb.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	if s.cred != nil {
		_ = os.Chown(log.Name(), int(s.cred.Uid), int(s.cred.Gid))
	}
	args := append([]string{"--no-defaults", "--datadir=" + s.dataDir(), "--socket=" + s.socket(),
		"--port=" + strconv.Itoa(s.Port), "--bind-address=127.0.0.1", "--skip-networking=0",
		"--pid-file=" + filepath.Join(s.Dir, "mariadb.pid"), "--log-error=" + log.Name(),
		// Each commit is written to the OS, which keeps it when the server
		// crashes (kill -9), not when the machine does; tests crash only
		// processes.
		"--innodb-flush-log-at-trx-commit=2", "--innodb-doublewrite=0", "--skip-log-bin",
		"--max-connections=300"}, serverOptions()...)
	cmd := s.command(s.server, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		s.mu.Unlock()
		return err
	}
	exited := make(chan struct{})
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()
	go func() {
		err := cmd.Wait()
		log.Close()
		s.mu.Lock()
		s.exitErr = err
		if s.cmd == cmd {
			s.cmd = nil
		}
		s.mu.Unlock()
		close(exited)
	}()
	if err := s.waitReady(exited); err != nil {
		_ = s.Kill()
		return err
	}
	return nil
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

// waitReady waits until the server answers on its TCP port (with any
// answer: before setUp, as before it, root may log in without a password).
func (s *Server) waitReady(exited chan struct{}) error {
	deadline := time.Now().Add(StartTimeout)
	for {
		err := ping(s.dsn("root", s.adminPass, ""))
		var me *mysql.MySQLError
		if err == nil || errors.As(err, &me) {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("MariaDB exited on start (%v); its log:\n%s", s.exitErr, s.Log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("MariaDB did not accept connections on 127.0.0.1:%d within %s (%v); its log:\n%s", s.Port, StartTimeout, err, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	if name == "" {
		return "", errors.New("database name is empty")
	}
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return "", fmt.Errorf("database name %q: want lowercase letters, digits and '_', starting with a letter", name)
		}
	}
	if err := s.Admin(fmt.Sprintf("CREATE DATABASE `%s`", name),
		fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'127.0.0.1'", name, User)); err != nil {
		return "", err
	}
	return "mysql://" + s.dsn(User, s.Password, name), nil
}

// Running tells whether the server process is running.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Stop shuts the server down cleanly (SIGTERM: clients are disconnected,
// InnoDB flushes) and waits for it; SIGKILL to its process group after
// 30s. Stopping a stopped server does nothing.
func (s *Server) Stop() error { return s.stop(syscall.SIGTERM, 30*time.Second) }

// Kill kills the server's process group (SIGKILL), as a crash would;
// Start recovers from InnoDB's redo log.
func (s *Server) Kill() error { return s.stop(syscall.SIGKILL, 0) }

func (s *Server) stop(sig syscall.Signal, grace time.Duration) error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pgid := cmd.Process.Pid // its own process group; mariadbd runs threads, no children
	_ = syscall.Kill(-pgid, sig)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	return nil
}

// Close stops the server (and kills what is left of its process group)
// and removes its folder. Start registers it as t's cleanup.
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

// The servers not closed yet, closed when the test process is interrupted
// (Ctrl-C, SIGTERM), which runs no test cleanup: the server would die with
// the process anyway (Pdeathsig), but its folder would stay.
var (
	liveMu sync.Mutex
	live   = map[*Server]bool{}
	notify sync.Once
)

func track(s *Server) {
	notify.Do(func() {
		c := make(chan os.Signal, 1)
		signal.Notify(c, os.Interrupt, syscall.SIGTERM)
		go func() {
			sig := <-c
			liveMu.Lock()
			servers := make([]*Server, 0, len(live))
			for s := range live {
				servers = append(servers, s)
			}
			liveMu.Unlock()
			for _, s := range servers {
				s.mu.Lock()
				if s.installing != 0 {
					// The script and the server it runs to bootstrap.
					_ = syscall.Kill(-s.installing, syscall.SIGKILL)
				}
				s.mu.Unlock()
				_ = s.Kill()
				_ = s.Close()
			}
			// End as the signal would have.
			signal.Reset(sig)
			_ = syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	})
	liveMu.Lock()
	live[s] = true
	liveMu.Unlock()
}

func untrack(s *Server) {
	liveMu.Lock()
	delete(live, s)
	liveMu.Unlock()
}
