//go:build !apiserverboot_nokine

package storage

// The SQLite dialect of kine (github.com/k3s-io/kine v0.17.5,
// pkg/drivers/sqlite, Apache-2.0), on the pure-Go modernc.org/sqlite in
// every build. kine's own package picks mattn/go-sqlite3 (cgo) whenever cgo
// is on, and modernc.org/sqlite only without it: the same apiserver would
// then run on two SQLite implementations depending on how it was built (run
// local with cgo, `build container` with CGO_ENABLED=0), and a cgo build
// compiles SQLite's C source. The schema, queries and DSN translation below
// are kine's, unchanged, so a database file is kine's in both directions.

import (
	"context"
	"database/sql/driver"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"

	"github.com/k3s-io/kine/pkg/drivers"
	"github.com/k3s-io/kine/pkg/drivers/generic"
	"github.com/k3s-io/kine/pkg/logstructured"
	"github.com/k3s-io/kine/pkg/logstructured/sqllog"
	"github.com/k3s-io/kine/pkg/query"
	"github.com/k3s-io/kine/pkg/server"
	sqlite3 "modernc.org/sqlite"
	sqlite3lib "modernc.org/sqlite/lib"
)

// sqliteParams are kine's default SQLite parameters (its DefaultParams),
// used when the endpoint gives none.
const sqliteParams = "_journal_mode=WAL&_busy_timeout=30000&_synchronous=NORMAL&_txlock=immediate&_stmt_cache_size=20"

var sqliteSchema = []string{
	`CREATE TABLE IF NOT EXISTS kine
		(
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			name TEXT,
			created INTEGER,
			deleted INTEGER,
			create_revision INTEGER,
			prev_revision INTEGER,
			lease INTEGER,
			value BLOB,
			old_value BLOB
		)`,
	`CREATE INDEX IF NOT EXISTS kine_name_index ON kine (name)`,
	`CREATE INDEX IF NOT EXISTS kine_name_id_index ON kine (name,id)`,
	`CREATE INDEX IF NOT EXISTS kine_id_deleted_index ON kine (id,deleted)`,
	`CREATE INDEX IF NOT EXISTS kine_prev_revision_index ON kine (prev_revision)`,
	`CREATE UNIQUE INDEX IF NOT EXISTS kine_name_prev_revision_uindex ON kine (name, prev_revision)`,
	`CREATE INDEX IF NOT EXISTS kine_id_compact_rev_key_with_prev_revision_index ON kine(id, name, prev_revision) WHERE name != 'compact_rev_key' AND prev_revision != 0`,
	`PRAGMA wal_checkpoint(TRUNCATE)`,
}

func init() {
	drivers.Register("sqlite", newSQLiteBackend)
}

func newSQLiteBackend(ctx context.Context, wg *sync.WaitGroup, cfg *drivers.Config) (bool, server.Backend, error) {
	dsn, err := sqliteDSN(cfg.DataSourceName)
	if err != nil {
		return false, nil, err
	}
	connector, err := sqlite3.NewConnector(dsn)
	if err != nil {
		return false, nil, err
	}
	dialect, err := generic.OpenDB(ctx, wg, "sqlite", &sqliteConnector{driver: connector.Driver(), dsn: dsn}, cfg.ConnectionPoolConfig, "?", false, cfg.MetricsRegisterer)
	if err != nil {
		return false, nil, err
	}
	dialect.LastInsertID = true
	dialect.GetSizeSQL = query.New(`
		SELECT (page_count - freelist_count) * page_size
		FROM pragma_page_count(), pragma_freelist_count(), pragma_page_size()`,
		"?", false, "GetSize")
	dialect.CompactSQL = query.New(`
		DELETE FROM kine AS kv
		WHERE kv.id IN (
				SELECT kp.prev_revision AS id
				FROM kine AS kp
				WHERE
					kp.name != 'compact_rev_key' AND
					kp.prev_revision != 0 AND
					kp.id > ? AND
					kp.id <= ?
				UNION ALL
				SELECT kd.id AS id
				FROM kine AS kd
				WHERE
					kd.deleted != 0 AND
					kd.id > ? AND
					kd.id <= ?)`,
		"?", false, "Compact")
	dialect.PostCompactSQL = query.New(`PRAGMA wal_checkpoint(FULL)`, "?", false, "PostCompactSQL")
	dialect.TranslateErr = func(err error) error {
		if e, ok := err.(*sqlite3.Error); ok && e.Code() == sqlite3lib.SQLITE_CONSTRAINT_UNIQUE {
			return server.ErrKeyExists
		}
		return err
	}
	dialect.ErrCode = func(err error) string {
		if err == nil {
			return ""
		}
		if e, ok := err.(*sqlite3.Error); ok {
			return sqlite3.ErrorCodeString[e.Code()]
		}
		return err.Error()
	}
	for _, stmt := range sqliteSchema {
		if _, err := dialect.DB.Exec(stmt); err != nil {
			return false, nil, fmt.Errorf("setting up the SQLite schema: %w", err)
		}
	}
	return false, logstructured.New(sqllog.New(dialect, wg, cfg)), nil
}

// sqliteDSN turns kine's (mattn/go-sqlite3 style) DSN, PATH?PARAMS, into
// modernc.org/sqlite's, as kine's cgo-less build does.
func sqliteDSN(dsn string) (string, error) {
	path, params, _ := strings.Cut(dsn, "?")
	if params == "" {
		params = sqliteParams
	}
	old, err := url.ParseQuery(params)
	if err != nil {
		return "", err
	}
	if path, err = filepath.Abs(path); err != nil {
		return "", err
	}
	out := url.Values{}
	add := func(key, format string, vals []string) {
		for _, v := range vals {
			out.Add(key, fmt.Sprintf(format, v))
		}
	}
	for key, vals := range old {
		switch key {
		case "_busy_timeout", "_timeout":
			add("_pragma", "busy_timeout(%s)", vals)
		case "_journal", "_journal_mode":
			add("_pragma", "journal_mode(%s)", vals)
		case "_synchronous", "_sync":
			add("_pragma", "synchronous(%s)", vals)
		case "cache":
			// shared cache mode is not supported
		default:
			add(key, "%s", vals)
		}
	}
	q, err := url.QueryUnescape(out.Encode())
	if err != nil {
		return "", err
	}
	return "file://" + path + "?" + q, nil
}

type sqliteConnector struct {
	driver driver.Driver
	dsn    string
}

func (c *sqliteConnector) Connect(context.Context) (driver.Conn, error) { return c.driver.Open(c.dsn) }
func (c *sqliteConnector) Driver() driver.Driver                        { return c.driver }

var _ driver.Connector = (*sqliteConnector)(nil)
