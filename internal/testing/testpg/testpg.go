// Package testpg starts a throw-away PostgreSQL server for tests: initdb
// into a temporary folder, the server on a free loopback port in its own
// process group, a database and a user with a password, and the server
// stopped and its folder removed when the test ends (also when it fails).
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
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/freeport"
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
var ErrNotInstalled = errors.New("PostgreSQL is not installed")

// The superuser initdb creates, and the user and database New creates for the tests.
const (
	adminUser = "postgres"
	User      = "testpg"
	Database  = "testpg"
)

// StartTimeout bounds how long the server may take to accept connections.
const StartTimeout = 60 * time.Second

// Server is a running (or stopped) PostgreSQL server of a test.
type Server struct {
	// URL reaches Database as User with its password over loopback:
	// postgres://testpg:PASSWORD@127.0.0.1:PORT/testpg?sslmode=disable.
	URL string
	// Port is the loopback TCP port the server listens on (it keeps it
	// across Stop and Start).
	Port int
	// Password of User (random, hex).
	Password string
	// Dir holds the data folder (Dir/data) and the server's log (Dir/postgres.log).
	Dir string

	bin        string
	cred       *syscall.Credential // nil: run as this process's user
	adminPass  string
	mu         sync.Mutex
	cmd        *exec.Cmd
	exited     chan struct{}
	exitErr    error
	closeOnce  sync.Once
	closeError error
}

// Required tells whether $APISERVER_BOOT_REQUIRE_POSTGRES asks for PostgreSQL.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Start starts a server for t, stopped and removed on t's cleanup. Without
// PostgreSQL it skips t (fails it when Required).
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
			t.Errorf("stopping PostgreSQL: %v", err)
		}
	})
	return s
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
	s := &Server{bin: bin}
	if os.Geteuid() == 0 {
		if s.cred, err = postgresUser(); err != nil {
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
	if err := s.initdb(); err != nil {
		return nil, err
	}
	// Another process may take the free port before the server binds it:
	// try another one then.
	for attempt := 0; ; attempt++ {
		if s.Port, err = freeport.Port(); err != nil {
			return nil, err
		}
		err = s.Start()
		if err == nil || attempt == 2 || !strings.Contains(s.Log(), "could not bind") {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	if err := s.createUser(); err != nil {
		return nil, err
	}
	s.URL = s.urlFor(User, s.Password, Database)
	ok = true
	return s, nil
}

// postgresUser is the credential of the "postgres" system user, which
// Debian's package creates: initdb and the server refuse to run as root.
func postgresUser() (*syscall.Credential, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root, PostgreSQL must run as another user, and there is no \"postgres\" user (%v): run the tests as a non-root user, or create one (useradd --system postgres)", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// makeDir creates the server's folder, owned by the user the server runs
// as, under a temporary folder that user can reach ($TMPDIR may be under
// /root, which the postgres user cannot enter: /tmp then).
func (s *Server) makeDir() (string, error) {
	parent := os.TempDir()
	if s.cred != nil && !reachable(parent) {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "testpg-")
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
			return "", fmt.Errorf("%s cannot be reached by the postgres user (a parent folder is closed to others): set TMPDIR to a folder all users can enter", dir)
		}
	}
	return dir, nil
}

// reachable tells whether every folder above dir lets others through
// (the postgres user is neither their owner nor, as a rule, in their group).
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

// command runs a PostgreSQL binary as the server's user, in its own
// process group, killed if this process dies.
func (s *Server) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: s.cred}
	return cmd
}

// writeOwned writes a file readable only by the server's user.
func (s *Server) writeOwned(name, content string) (string, error) {
	path := filepath.Join(s.Dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		return "", err
	}
	if s.cred != nil {
		if err := os.Chown(path, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return "", err
		}
	}
	return path, nil
}

func (s *Server) dataDir() string { return filepath.Join(s.Dir, "data") }

// Log returns the server's log so far (for a test's failure message).
func (s *Server) Log() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
	return string(b)
}

// initdb creates the data folder: password (SCRAM) authentication for
// everyone, the superuser's password from a file removed afterwards.
func (s *Server) initdb() error {
	pwfile, err := s.writeOwned("pwfile", s.adminPass+"\n")
	if err != nil {
		return err
	}
	defer os.Remove(pwfile)
	cmd := s.command("initdb", "--pgdata", s.dataDir(), "--username", adminUser, "--pwfile", pwfile,
		"--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C", "--no-sync", "--no-instructions")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s: %v\n%s", cmd, err, out)
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
		return errors.New("PostgreSQL is already running")
	}
	log, err := os.OpenFile(filepath.Join(s.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		s.mu.Unlock()
		return err
	}
	cmd := s.command("postgres", "-D", s.dataDir(), "-p", strconv.Itoa(s.Port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories=", // TCP on loopback only: no socket in /var/run/postgresql
		// fsync=off: written data survives the server's crash (kill -9),
		// not the machine's; tests crash only processes.
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "dynamic_shared_memory_type=mmap", // not /dev/shm, small in containers
		"-c", "max_connections=200",
		"-c", "logging_collector=off")
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

// waitReady connects as the superuser until the server answers.
func (s *Server) waitReady(exited chan struct{}) error {
	deadline := time.Now().Add(StartTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.urlFor(adminUser, s.adminPass, "postgres"))
		if err == nil {
			conn.Close(ctx)
			cancel()
			return nil
		}
		cancel()
		select {
		case <-exited:
			return fmt.Errorf("PostgreSQL exited on start (%v); its log:\n%s", s.exitErr, s.Log())
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("PostgreSQL did not accept connections on 127.0.0.1:%d within %s (%v); its log:\n%s", s.Port, StartTimeout, err, s.Log())
		}
		time.Sleep(50 * time.Millisecond)
	}
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
	for i, r := range name {
		if !(r >= 'a' && r <= 'z' || r == '_' || i > 0 && r >= '0' && r <= '9') {
			return "", fmt.Errorf("database name %q: want lowercase letters, digits and '_', starting with a letter", name)
		}
	}
	if name == "" {
		return "", errors.New("database name is empty")
	}
	if err := s.Admin(fmt.Sprintf("CREATE DATABASE %s OWNER %s", name, User)); err != nil {
		return "", err
	}
	return s.urlFor(User, s.Password, name), nil
}

// Running tells whether the server process is running.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// Stop shuts the server down cleanly (PostgreSQL's fast shutdown: open
// transactions roll back, clients are disconnected) and waits for it;
// SIGKILL to its process group after 30s. Stopping a stopped server does nothing.
func (s *Server) Stop() error { return s.stop(syscall.SIGINT, 30*time.Second) }

// Kill kills the server's process group (SIGKILL), as a crash would;
// Start recovers from its write-ahead log.
func (s *Server) Kill() error { return s.stop(syscall.SIGKILL, 0) }

func (s *Server) stop(sig syscall.Signal, grace time.Duration) error {
	s.mu.Lock()
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return nil
	}
	pgid := cmd.Process.Pid // its own process group
	if sig == syscall.SIGKILL {
		// PostgreSQL's children (backends, checkpointer, ...) call setsid:
		// they are not in the group. Killed with the postmaster, and
		// awaited, so that none still holds the shared memory when the
		// server starts again ("pre-existing shared memory block").
		children := childrenOf(pgid)
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		for _, c := range children {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		defer waitGone(children, 10*time.Second)
	} else {
		_ = syscall.Kill(pgid, sig) // the postmaster stops its backends, then itself
	}
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
	})
	return s.closeError
}

// childrenOf lists the processes whose parent is pid, from /proc.
func childrenOf(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, _ := procStat(child); ppid == pid {
			out = append(out, child)
		}
	}
	return out
}

// procStat reads a process's parent and state from /proc/PID/stat (the
// state 'Z' of an exited process not yet reaped).
func procStat(pid int) (ppid int, state byte) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0, 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0, 0
	}
	ppid, _ = strconv.Atoi(f[1])
	return ppid, f[0][0]
}

// waitGone waits until every process of pids has exited (gone, or a
// zombie: it holds no memory any more), for at most timeout.
func waitGone(pids []int, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for _, pid := range pids {
		for time.Now().Before(deadline) {
			if _, state := procStat(pid); state == 0 || state == 'Z' {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
