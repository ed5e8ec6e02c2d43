// Package datastore is what both the CLI and the apiserver know of a
// --datastore-endpoint (kine's SQL datastores): its forms, and its
// password kept out of logs and errors. It has no database driver.
package datastore

import (
	"fmt"
	"path/filepath"
	"strings"
)

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

// Redact hides the password of a datastore endpoint (USER:PASSWORD@ and a
// password= parameter), for logs and errors.
func Redact(endpoint string) string {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok {
		return redactParams(endpoint)
	}
	// The user information ends at the last @ before the path (a password
	// may hold @ and /; mysql's host is tcp(HOST:PORT)).
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if user, _, hasPassword := strings.Cut(rest[:at], ":"); hasPassword {
			rest = user + ":xxxxx" + rest[at:]
		}
	}
	return scheme + "://" + redactParams(rest)
}

func redactParams(s string) string {
	path, params, ok := strings.Cut(s, "?")
	if !ok {
		return s
	}
	var out []string
	for _, p := range strings.Split(params, "&") {
		if k, _, _ := strings.Cut(p, "="); strings.EqualFold(k, "password") {
			p = k + "=xxxxx"
		}
		out = append(out, p)
	}
	return path + "?" + strings.Join(out, "&")
}

// Password is the endpoint's password, to scrub from driver errors.
func Password(endpoint string) string {
	_, rest, _ := strings.Cut(endpoint, "://")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		if _, p, ok := strings.Cut(rest[:at], ":"); ok {
			return p
		}
	}
	_, params, _ := strings.Cut(rest, "?")
	for _, p := range strings.Split(params, "&") {
		if k, v, _ := strings.Cut(p, "="); strings.EqualFold(k, "password") {
			return v
		}
	}
	return ""
}
