package datastore

import (
	"slices"
	"testing"
)

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://app:s3cr%40t@db:5432/crontab?sslmode=disable":       "postgres://app:xxxxx@db:5432/crontab?sslmode=disable",
		"postgres://app:p@ss/word@db:5432/crontab":                      "postgres://app:xxxxx@db:5432/crontab",
		"postgres://db:5432/crontab?user=app&password=hunter2&x=1":      "postgres://db:5432/crontab?user=app&password=xxxxx&x=1",
		"mysql://root:hunter2@tcp(127.0.0.1:3306)/crontab":              "mysql://root:xxxxx@tcp(127.0.0.1:3306)/crontab",
		"mysql://root@tcp(127.0.0.1:3306)/crontab":                      "mysql://root@tcp(127.0.0.1:3306)/crontab",
		"sqlite://.apiserver-boot/state.db?_journal_mode=WAL":           "sqlite://.apiserver-boot/state.db?_journal_mode=WAL",
		"redis://user:hunter2@cache:6379":                               "redis://user:xxxxx@cache:6379",
		"user:hunter2@host/db":                                          "user:xxxxx@host/db",
		"postgres://app@db/crontab?sslmode=verify-full&sslpassword=k3y": "postgres://app@db/crontab?sslmode=verify-full&sslpassword=xxxxx",
		"postgres://app:hunter2@db/crontab?application_name=a@b":        "postgres://app:xxxxx@db/crontab?application_name=a@b",
		"postgresql://app:hunter2@[::1]:5432/crontab?password=hunter":   "postgresql://app:xxxxx@[::1]:5432/crontab?password=xxxxx",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSecrets(t *testing.T) {
	for in, want := range map[string][]string{
		"postgres://app:hunter2@db/crontab?password=other&sslpassword=k3y": {"hunter2", "other", "k3y"},
		"postgres://app@db/crontab?application_name=a@b":                   nil,
		"sqlite://state.db": nil,
	} {
		if got := Secrets(in); !slices.Equal(got, want) {
			t.Errorf("Secrets(%q) = %q, want %q", in, got, want)
		}
	}
}
