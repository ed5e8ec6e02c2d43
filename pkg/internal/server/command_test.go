package server

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCopyStorageCommand: copy-storage is a subcommand of the apiserver
// command, with both sides' flags and --etcd-prefix defaulting to the
// server's.
func TestCopyStorageCommand(t *testing.T) {
	cmd := newCommand(Project{Name: "test"})
	sub, rest, err := cmd.Find([]string{"copy-storage", "--from-embedded-etcd-data-dir", "x"})
	if err != nil || sub.Name() != "copy-storage" || len(rest) != 2 {
		t.Fatalf("copy-storage: %v %v %v", sub, rest, err)
	}
	for _, name := range []string{"from-etcd-servers", "from-etcd-cafile", "from-etcd-certfile", "from-etcd-keyfile", "from-embedded-etcd-data-dir", "from-datastore-endpoint", "from-datastore-endpoint-file",
		"to-etcd-servers", "to-etcd-cafile", "to-etcd-certfile", "to-etcd-keyfile", "to-embedded-etcd-data-dir", "to-datastore-endpoint", "to-datastore-endpoint-file"} {
		if sub.Flags().Lookup(name) == nil {
			t.Errorf("copy-storage has no --%s", name)
		}
	}
	if got := sub.Flags().Lookup("etcd-prefix").DefValue; got != NewOptions().Etcd.StorageConfig.Prefix || got != "/registry" {
		t.Errorf("--etcd-prefix defaults to %q, want the server's /registry", got)
	}
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"copy-storage", "--to-datastore-endpoint", "sqlite://x.db"})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "give exactly one of --from-etcd-servers") {
		t.Errorf("copy-storage without a source: %v", err)
	}
	if c, _, _ := cmd.Find([]string{"completion"}); c.Name() == "completion" {
		t.Errorf("the apiserver has a completion command")
	}
}

func TestDatastoreFlags(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	url, bad, empty := file("url", "postgres://app:hunter2@db/crontab\n"), file("bad", "redis://app:hunter2@cache:6379"), file("empty", "\n")
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"--datastore-endpoint", "sqlite://state.db"}, ""},
		{[]string{"--datastore-endpoint", "postgres://app:hunter2@db/crontab"}, ""},
		{[]string{"--datastore-endpoint", "mysql://app:hunter2@tcp(db:3306)/crontab"}, ""},
		{[]string{"--datastore-endpoint", "redis://app:hunter2@cache:6379"}, `--datastore-endpoint redis://app:xxxxx@cache:6379: unknown scheme "redis": use postgres://USER:PASSWORD@HOST:PORT/DATABASE, mysql://USER:PASSWORD@tcp(HOST:PORT)/DATABASE or sqlite://PATH`},
		{[]string{"--datastore-endpoint", "state.db"}, "--datastore-endpoint state.db: no scheme: use postgres://"},
		{[]string{"--datastore-endpoint", "sqlite://"}, "--datastore-endpoint sqlite://: no file: use sqlite://PATH"},
		{[]string{"--datastore-endpoint", "postgres://app:hunter2@db/crontab", "--etcd-servers", "http://127.0.0.1:2379"}, "--datastore-endpoint postgres://app:xxxxx@db/crontab and --etcd-servers both given"},
		{[]string{"--datastore-endpoint", "sqlite://state.db", "--embedded-etcd-data-dir", "d"}, "--embedded-etcd-data-dir applies to the embedded etcd, which does not run with --datastore-endpoint"},
		{[]string{"--datastore-endpoint", "sqlite://state.db", "--etcd-certfile", "c.crt"}, "--etcd-certfile applies to an etcd given by --etcd-servers, not to --datastore-endpoint"},
		// SQLite serves one process; a shared database serves several.
		{[]string{"--datastore-endpoint", "sqlite://state.db", "--datastore-replicas", "2"}, "--datastore-endpoint sqlite://state.db: SQLite serves one apiserver process, and --datastore-replicas is 2"},
		{[]string{"--datastore-endpoint", "postgres://app:hunter2@db/crontab", "--datastore-replicas", "3"}, ""},
		{[]string{"--datastore-endpoint", "postgres://app:hunter2@db/crontab", "--datastore-replicas", "-1"}, "--datastore-replicas must be 1 or more, not -1"},
		// The URL from a file (a mounted Secret), checked as the flag's.
		{[]string{"--datastore-endpoint-file", url}, ""},
		{[]string{"--datastore-endpoint-file", bad}, `--datastore-endpoint redis://app:xxxxx@cache:6379: unknown scheme "redis"`},
		{[]string{"--datastore-endpoint-file", empty}, "--datastore-endpoint-file " + empty + " is empty: want one line, "},
		{[]string{"--datastore-endpoint-file", filepath.Join(dir, "missing")}, "--datastore-endpoint-file: open " + filepath.Join(dir, "missing") + ": no such file or directory"},
		{[]string{"--datastore-endpoint-file", url, "--datastore-endpoint", "sqlite://state.db"}, "--datastore-endpoint and --datastore-endpoint-file both given"},
		{[]string{"--datastore-endpoint-file", url, "--etcd-servers", "http://127.0.0.1:2379"}, "--datastore-endpoint postgres://app:xxxxx@db/crontab and --etcd-servers both given"},
		{[]string{"--datastore-endpoint-file", url, "--embedded-etcd-client-port", "2379"}, "--embedded-etcd-client-port applies to the embedded etcd"},
	} {
		o, fs, delegatedOnly := parse(t, tc.args...)
		err := o.validateFlags(fs, delegatedOnly)
		if err == nil {
			o.Complete()
			err = o.Validate()
		}
		switch {
		case tc.err == "" && err == nil && strings.Contains(tc.args[0], "file") && o.SQL.Endpoint != "postgres://app:hunter2@db/crontab":
			t.Errorf("%v: endpoint %q, want the file's line", tc.args, o.SQL.Endpoint)
		case tc.err == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.err)
		case err != nil && strings.Contains(err.Error(), "hunter2"):
			t.Errorf("%v: the password is in the error: %v", tc.args, err)
		}
	}
}
