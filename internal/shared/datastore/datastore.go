// Package datastore is what both the CLI and the apiserver know of a
// --datastore-endpoint (kine's SQL datastores): its forms, and its
// password kept out of logs and errors. It has no database driver.
package datastore

import (
	"fmt"
	"path/filepath"
	"strings"
)

// NoKineTag is the build tag that leaves kine, the SQL storage of
// --datastore-endpoint, out of the generated apiserver
// (pkg/internal/storage/nokine.go; its packages and SQL drivers are about
// a tenth of what a rebuild links): run local sets it when it stores in
// etcd.
const NoKineTag = "apiserverboot_nokine"

// Schemes are the schemes --datastore-endpoint takes.
var Schemes = map[string]bool{"postgres": true, "postgresql": true, "mysql": true, "sqlite": true}

// Forms are the endpoint forms, for errors and help.
const Forms = "postgres://USER:PASSWORD@HOST:PORT/DATABASE, mysql://USER:PASSWORD@tcp(HOST:PORT)/DATABASE or sqlite://PATH"

// Validate checks an endpoint's form: a scheme kine serves and, for
// SQLite, a file; the error names the flag and the forms that work.
func Validate(endpoint string) error {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok || !Schemes[scheme] {
		what := fmt.Sprintf("unknown scheme %q", scheme)
		if !ok {
			what = "no scheme"
		}
		return fmt.Errorf("--datastore-endpoint %s: %s: use %s", Redact(endpoint), what, Forms)
	}
	if scheme == "sqlite" {
		if path, _, _ := strings.Cut(rest, "?"); path == "" {
			return fmt.Errorf("--datastore-endpoint %s: no file: use sqlite://PATH, e.g. sqlite://%s", Redact(endpoint), filepath.Join(".apiserver-boot", "state.db"))
		}
	}
	return nil
}

// Redact hides the password of a datastore endpoint (USER:PASSWORD@, and
// the password= and sslpassword= parameters), for logs and errors.
func Redact(endpoint string) string {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok {
		scheme, rest = "", endpoint // a mistake without a scheme may still hold one
	}
	// The user information ends at the last @ before the parameters (a
	// password may hold @ and /; mysql's host is tcp(HOST:PORT)).
	hostPart, params, hasParams := strings.Cut(rest, "?")
	if at := strings.LastIndex(hostPart, "@"); at >= 0 {
		if user, _, hasPassword := strings.Cut(hostPart[:at], ":"); hasPassword {
			hostPart = user + ":xxxxx" + hostPart[at:]
		}
	}
	if hasParams {
		hostPart = redactParams(hostPart + "?" + params)
	}
	if !ok {
		return hostPart
	}
	return scheme + "://" + hostPart
}

func redactParams(s string) string {
	path, params, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	var out []string
	for _, p := range strings.Split(params, "&") {
		if k, _, _ := strings.Cut(p, "="); secretParam(k) {
			p = k + "=xxxxx"
		}
		out = append(out, p)
	}
	return path + "?" + strings.Join(out, "&")
}

// Secrets are the endpoint's password and the parameters that hold one
// (password=, sslpassword=), to scrub from driver errors.
func Secrets(endpoint string) []string {
	_, rest, _ := strings.Cut(endpoint, "://")
	hostPart, params, _ := strings.Cut(rest, "?")
	var out []string
	if at := strings.LastIndex(hostPart, "@"); at >= 0 {
		if _, p, ok := strings.Cut(hostPart[:at], ":"); ok && p != "" {
			out = append(out, p)
		}
	}
	for _, p := range strings.Split(params, "&") {
		if k, v, _ := strings.Cut(p, "="); secretParam(k) && v != "" {
			out = append(out, v)
		}
	}
	return out
}

// secretParam tells a URL parameter that holds a password: the
// database's, or the client key's passphrase.
func secretParam(k string) bool {
	return strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword")
}

// ErrBothStores is the error for a --datastore-endpoint given with
// --etcd-servers: the objects are stored in one place.
func ErrBothStores(endpoint string) error {
	return fmt.Errorf("--datastore-endpoint %s and --etcd-servers both given: store in SQL (--datastore-endpoint) or in etcd (--etcd-servers), not both", Redact(endpoint))
}

// EtcdDB is the file that holds an etcd data directory's data (and the
// lock a running etcd holds on it): DIR/member/snap/db.
func EtcdDB(dataDir string) string {
	return filepath.Join(dataDir, "member", "snap", "db")
}
