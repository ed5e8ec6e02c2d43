//go:build !apiserverboot_nokine

package storage

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/k3s-io/kine/pkg/drivers"
	"github.com/k3s-io/kine/pkg/drivers/generic"
	_ "github.com/k3s-io/kine/pkg/drivers/mysql" // registers mysql://
	_ "github.com/k3s-io/kine/pkg/drivers/pgsql" // registers postgres:// and postgresql://
	kineserver "github.com/k3s-io/kine/pkg/server"
	"github.com/sirupsen/logrus"
	"go.etcd.io/etcd/server/v3/embed"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/runlock"
)

// builtWithKine: this build has kine (nokine.go is the build without it).
func (o *SQL) builtWithKine() error { return nil }

// startKine checks the database of --datastore-endpoint (it answers within
// the timeout and takes the credentials; a SQLite file is not in use by
// another process) and starts kine on it, serving etcd's API on a unix
// socket in a new private folder. Any failure is returned before anything
// serves, naming the flag; the password is never in it.
func (o *SQL) startKine(ctx context.Context) (*kine, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	scheme, dsn, _ := strings.Cut(o.Endpoint, "://")
	var release func()
	var err error
	switch scheme {
	case "sqlite":
		release, err = o.lockSQLite(dsn)
	case "postgres", "postgresql":
		err = o.checkPostgres(ctx, dsn)
	case "mysql":
		err = o.checkMySQL(ctx, dsn)
	}
	if err != nil {
		return nil, err
	}
	if release == nil {
		release = func() {}
	}
	k, err := o.serveKine(ctx)
	if err != nil {
		release()
		return nil, err
	}
	stop := k.stop
	k.stop = func() { stop(); release() }
	return k, nil
}

// lockSQLite refuses a database file another process holds: SQLite serves
// one apiserver process (one replica) only, since kine in each process
// would poll the file as another writer's. The lock is an exclusive flock(2)
// on the file, held until release (SQLite's own locks are fcntl ones,
// independent of it); the kernel drops it when the process ends.
func (o *SQL) lockSQLite(dsn string) (release func(), err error) {
	path, _, _ := strings.Cut(dsn, "?")
	if err := private.Dir(filepath.Dir(path)); err != nil {
		return nil, o.datastoreError("creating the folder of the database: %v", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, o.datastoreError("%v", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			who, _, _ := runlock.HeldBy(path)
			if who == "" {
				who = "another process"
			}
			return nil, o.datastoreError("%s is in use by %s: SQLite serves one apiserver process only (one replica): stop it, give another file, "+
				"or for more than one replica use postgres://USER:PASSWORD@HOST:PORT/DATABASE or mysql://USER:PASSWORD@tcp(HOST:PORT)/DATABASE", path, who)
		}
		return nil, o.datastoreError("locking %s: %v", path, err)
	}
	return func() { f.Close() }, nil
}

// checkPostgres connects once, bounded by the timeout, as kine will (its
// default database kubernetes, names in lower case). A database that does
// not exist is created by kine when the user may create databases.
func (o *SQL) checkPostgres(ctx context.Context, dsn string) error {
	u, err := url.Parse("postgres://" + dsn)
	if err != nil {
		return o.datastoreError("not a URL: use %s", datastore.Forms)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/kubernetes"
	}
	u.Path = strings.ToLower(u.Path)
	cfg, err := pgx.ParseConfig(u.String())
	if err != nil {
		return o.datastoreError("%v", err)
	}
	cfg.ConnectTimeout = o.ConnectTimeout
	ctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if pgCode(err) == "3D000" { // invalid_catalog_name: no such database
		other := cfg.Copy()
		other.Database = "postgres"
		if conn, err = pgx.ConnectConfig(ctx, other); err == nil {
			defer conn.Close(context.Background())
			var may bool
			if err := conn.QueryRow(ctx, "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user").Scan(&may); err != nil {
				return o.datastoreError("%v", err)
			}
			if !may {
				return o.datastoreError("database %q does not exist and user %q may not create it: create it (CREATE DATABASE %s OWNER %s) or name one that exists", cfg.Database, cfg.User, cfg.Database, cfg.User)
			}
			return nil
		}
		// kine would connect to the database postgres to create it, and
		// cannot either: say what is missing, not why that second try failed.
		return o.datastoreError("database %q does not exist, and user %q cannot connect to the database postgres to create it (%v): create it (CREATE DATABASE %s OWNER %s) or name one that exists", cfg.Database, cfg.User, err, cfg.Database, cfg.User)
	}
	if err != nil {
		return o.connectError(err, pgCode(err) == "28P01" || pgCode(err) == "28000")
	}
	conn.Close(context.Background())
	return nil
}

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// checkMySQL connects once, bounded by the timeout, without naming the
// database (kine creates it).
func (o *SQL) checkMySQL(ctx context.Context, dsn string) error {
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		return o.datastoreError("%v: use %s", err, datastore.Forms)
	}
	cfg.DBName = ""
	cfg.Timeout = o.ConnectTimeout
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return o.datastoreError("%v", err)
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, o.ConnectTimeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		var me *mysql.MySQLError
		return o.connectError(err, errors.As(err, &me) && (me.Number == 1045 || me.Number == 1044))
	}
	return nil
}

func (o *SQL) connectError(err error, credentials bool) error {
	if credentials {
		return o.datastoreError("the database refused the credentials: %v: check user and password (the URL's USER:PASSWORD@)", err)
	}
	return o.datastoreError("the database did not answer within %s (--datastore-connect-timeout): %v: check that it runs and that host and port are right", o.ConnectTimeout, err)
}

// serveKine starts kine's backend on the database and serves etcd's API on
// a unix socket in a new 0700 folder.
func (o *SQL) serveKine(ctx context.Context) (*kine, error) {
	// kine logs with logrus: its warnings and errors only.
	if logrus.GetLevel() > logrus.WarnLevel {
		logrus.SetLevel(logrus.WarnLevel)
	}
	dir, err := os.MkdirTemp("", "apiserver-kine-")
	if err != nil {
		return nil, err
	}
	bctx, cancel := context.WithCancel(context.Background())
	wg := &sync.WaitGroup{}
	cleanup := func() {
		cancel()
		wg.Wait()
		os.RemoveAll(dir)
	}
	cfg := &drivers.Config{
		Endpoint:             o.Endpoint,
		ConnectionPoolConfig: generic.ConnectionPoolConfig{MaxIdle: 20, MaxIdleTime: 2 * time.Minute},
		CompactTimeout:       5 * time.Second,
		CompactMinRetain:     o.CompactMinRetain,
		CompactBatchSize:     1000,
		PollBatchSize:        500,
		// How often kine reads the rows other processes wrote, and how long
		// it waits after a revision gap it could not fill (a row another
		// process has yet to commit): a write through another replica
		// reaches this one's watches in 0.12 s median instead of 0.5 s at
		// kine's usual second, and a replica that restarts while another
		// writes catches up sooner. An idle poll is one indexed query.
		PollInterval: 250 * time.Millisecond,
	}
	backend, err := o.openBackend(ctx, bctx, cancel, wg, cfg)
	if err != nil {
		cleanup()
		return nil, o.datastoreError("starting kine: %v", err)
	}
	g := grpc.NewServer(
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: embed.DefaultGRPCKeepAliveMinTime}),
		grpc.KeepaliveParams(keepalive.ServerParameters{Time: embed.DefaultGRPCKeepAliveInterval, Timeout: embed.DefaultGRPCKeepAliveTimeout}),
		grpc.MaxConcurrentStreams(embed.DefaultMaxConcurrentStreams),
		grpc.MaxRecvMsgSize(int(embed.DefaultMaxRequestBytes)+512*1024),
	)
	// kine's defaults: progress notifications every 5s, and the etcd version
	// k8s.io/apiserver checks for RequestWatchProgress.
	// Reads and watches below the apiserver's compaction answer as etcd's
	// do (compactFloor); creates are read back (checkedCreates).
	// Watches, the current revision and reads at revision 0 are
	// revisionFeed's (kine_watch.go): none misses a write whose transaction
	// commits after a later revision's.
	feed, err := newRevisionFeed(ctx, bctx, wg, checkedCreates{backend}, o.Endpoint, cfg.PollInterval)
	if err != nil {
		cleanup()
		return nil, o.datastoreError("starting kine: %v", err)
	}
	kineserver.New(newCompactFloor(feed), "unix", 5*time.Second, "3.6.11").Register(g)
	sock := filepath.Join(dir, "kine.sock")
	l, err := (&net.ListenConfig{}).Listen(bctx, "unix", sock)
	if err == nil {
		err = os.Chmod(sock, 0o600)
	}
	if err != nil {
		cleanup()
		return nil, o.datastoreError("listening on %s: %v", sock, err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = g.Serve(l)
	}()
	return &kine{Endpoint: "unix://" + sock, stop: func() {
		timer := time.AfterFunc(2*time.Second, g.Stop)
		g.GracefulStop()
		timer.Stop()
		cleanup()
	}}, nil
}

// openBackend opens kine's backend on the database and starts it. The
// database answered the check before: opening it again is quick. kine
// retries a failed open for minutes; past the timeout (or on ctx, a
// signal) it is given up: bctx is cancelled and the open awaited (kine's
// retries end on it), so that no database handle outlives the error (the
// SQLite file's lock is released after it).
func (o *SQL) openBackend(ctx, bctx context.Context, cancel context.CancelFunc, wg *sync.WaitGroup, cfg *drivers.Config) (kineserver.Backend, error) {
	type result struct {
		backend kineserver.Backend
		err     error
	}
	done := make(chan result, 1)
	go func() {
		_, backend, err := drivers.New(bctx, wg, cfg)
		done <- result{backend, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(o.ConnectTimeout + 30*time.Second):
		r.err = fmt.Errorf("the database did not open within %s", o.ConnectTimeout+30*time.Second)
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	if r.err != nil && r.backend == nil {
		// Given up: the open ends on bctx (a backend opened just now too;
		// its goroutines are counted in wg, which the caller awaits).
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
		}
		return nil, r.err
	}
	if r.err == nil {
		r.err = r.backend.Start(bctx)
	}
	return r.backend, r.err
}

// checkedCreates reads every create back before it is acknowledged. kine's
// log-structured Create (v0.17.5) answers an insert that failed with
// success when the key is then not found: the insert's error is dropped
// and the current revision returned, so that k8s.io/apiserver answers 201
// for an object that was never stored. It happens when the database ends a
// connection under the insert and the lookup after it gets a fresh one (a
// restart of PostgreSQL, under write load), or when the database refuses
// the row. A create is stored at the revision it returns: the key read at
// that revision has it as its ModRevision; anything else is returned as an
// error (the outcome is then unknown to the client, as of a timeout, never
// a false success). A create stored whose read-back fails is reported as
// failed: the client's retry then gets 409 AlreadyExists.
type checkedCreates struct{ kineserver.Backend }

func (b checkedCreates) Create(ctx context.Context, key string, value []byte, lease int64) (int64, error) {
	rev, err := b.Backend.Create(ctx, key, value, lease)
	if err != nil {
		return rev, err
	}
	_, kv, err := b.Backend.Get(ctx, key, rev, false)
	if err != nil {
		return 0, fmt.Errorf("creating %s: reading it back at revision %d: %w", key, rev, err)
	}
	// The value too: another replica may have created the key in the
	// meantime, at the revision kine then reports (its value holds another
	// UID).
	if kv == nil || kv.ModRevision != rev || !bytes.Equal(kv.Value, value) {
		return 0, fmt.Errorf("creating %s: the database did not store it (kine reported revision %d, which does not hold it): retry", key, rev)
	}
	return rev, nil
}
