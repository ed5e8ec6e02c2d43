package storagesuite

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/testing/testmysql"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/testpg"
)

// TestSQLite runs the suite on kine and SQLite, a new file per test.
func TestSQLite(t *testing.T) {
	Run(t, func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "state.db") })
}

// TestPostgres runs the suite on kine and a real PostgreSQL (Debian's,
// started on loopback by the test), a new database per test.
func TestPostgres(t *testing.T) {
	pg := testpg.Start(t)
	var n atomic.Int64
	Run(t, func(t *testing.T) string {
		url, err := pg.CreateDatabase(fmt.Sprintf("kinestorage_%d", n.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		return url
	})
}

// TestMySQL runs the suite on kine and a real MariaDB (Debian's, started
// on loopback by the test), a new database per test.
func TestMySQL(t *testing.T) {
	my := testmysql.Start(t)
	var n atomic.Int64
	Run(t, func(t *testing.T) string {
		url, err := my.CreateDatabase(fmt.Sprintf("kinestorage_%d", n.Add(1)))
		if err != nil {
			t.Fatal(err)
		}
		return url
	})
}

// TestEndpoint runs the suite on the Postgres server of
// KINESTORAGE_ENDPOINT (postgres://USER:PASSWORD@HOST:PORT/), a new
// database per test (kine creates it), when set.
func TestEndpoint(t *testing.T) {
	base := os.Getenv("KINESTORAGE_ENDPOINT")
	if base == "" {
		t.Skip("KINESTORAGE_ENDPOINT is not set (postgres://USER:PASSWORD@HOST:PORT/)")
	}
	var n atomic.Int64
	stamp := time.Now().Unix()
	Run(t, func(t *testing.T) string {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("KINESTORAGE_ENDPOINT: %v", err)
		}
		u.Path = fmt.Sprintf("/kinestorage_%d_%d", stamp, n.Add(1))
		return u.String()
	})
}
