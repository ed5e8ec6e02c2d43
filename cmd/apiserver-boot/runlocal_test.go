package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/runlock"
)

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestRunLocalRefusedWhileAnotherRuns: while an instance holds the
// project's lock, run local (with other ports, --watch, --etcd-servers)
// fails at once naming it, and writes nothing: no bin/, the kubeconfig as
// it was.
func TestRunLocalRefusedWhileAnotherRuns(t *testing.T) {
	dir := deployProject(t)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	// The running instance's: one run local would remove and write anew.
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\ncurrent-context: crontab\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lock, err := runlock.Acquire(filepath.Join(dir, private.StateDir), runlock.Record{
		PID: 31337, APIServer: "https://127.0.0.1:9443", ControllerManager: "127.0.0.1:9440", Etcd: "embedded", Kubeconfig: "./kubeconfig", Started: time.Now(),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	before := listFiles(t, dir)
	stat, _ := os.Stat(kubeconfig)
	for _, extra := range [][]string{nil, {"--watch"}, {"--etcd-servers", "http://127.0.0.1:2379", "--controller-manager=false"}} {
		args := append([]string{"run", "local", "--secure-port", fmt.Sprint(freeLoopbackPort(t)),
			"--controller-manager-address", fmt.Sprintf("127.0.0.1:%d", freeLoopbackPort(t))}, extra...)
		start := time.Now()
		out, err := run(t, dir, args...)
		const want = "run local is already running in this project (pid 31337, apiserver https://127.0.0.1:9443, controller-manager 127.0.0.1:9440, kubeconfig ./kubeconfig, since "
		if err == nil || !strings.HasPrefix(err.Error(), want) || !strings.HasSuffix(err.Error(), "stop it first (Ctrl-C in its terminal, or kill 31337)") {
			t.Fatalf("%v: want an error starting with %q, got %v\n%s", extra, want, err, out)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v: refused after %s", extra, d)
		}
		if out != "" {
			t.Errorf("%v: printed %q", extra, out)
		}
	}
	if after := listFiles(t, dir); !slices.Equal(after, before) {
		t.Errorf("files changed:\n%v\nwere\n%v", after, before)
	}
	if st, err := os.Stat(kubeconfig); err != nil || !st.ModTime().Equal(stat.ModTime()) {
		t.Errorf("the kubeconfig was touched: %v", err)
	}
}

// holdEmbeddedEtcd holds the embedded etcd's database of the project in
// dir until the test ends, as etcd's bbolt holds it in a running apiserver.
func holdEmbeddedEtcd(t *testing.T, dir string) {
	db := datastore.EtcdDB(filepath.Join(dir, private.StateDir, "etcd"))
	os.MkdirAll(filepath.Dir(db), 0o700)
	f, err := os.OpenFile(db, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatal(err)
	}
}

// TestRunLocalEmbeddedEtcdInUse: another process holding the embedded
// etcd's database (an apiserver left running) is named at once, before
// anything is built.
func TestRunLocalEmbeddedEtcdInUse(t *testing.T) {
	dir := deployProject(t)
	holdEmbeddedEtcd(t, dir)
	out, err := run(t, dir, "run", "local", "--secure-port", fmt.Sprint(freeLoopbackPort(t)), "--controller-manager=false", "--generate=false")
	want := fmt.Sprintf("the embedded etcd's data .apiserver-boot/etcd is in use by process %d (", os.Getpid())
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "--etcd-servers") {
		t.Fatalf("want an error containing %q, got %v\n%s", want, err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "bin")); err == nil {
		t.Errorf("bin/ was built")
	}
	// The lock of run local is free again.
	l, err := runlock.Acquire(filepath.Join(dir, private.StateDir), runlock.Record{PID: 1})
	if err != nil {
		t.Fatalf("after run local returned: %v", err)
	}
	l.Release()
}

// TestRunLocalPrintsGenerateWarnings: run local prints what generate
// warns about, as apiserver-boot generate does, --quiet included.
func TestRunLocalPrintsGenerateWarnings(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles")
	}
	dir := deployProject(t)
	// The record of an earlier generate that warned: nothing changed since,
	// so generate says it is up to date and repeats the warning.
	const warning = "pkg/apis/stable/v2/crontab_hooks.go:3: CronTabStrategy.Validate is not used: the REST hooks of CronTab run from its storage version v1; move it to pkg/apis/stable/v1"
	inputs, err := generators.InputsHash(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := generators.SaveCache(dir, inputs, nil, []string{filepath.Join(dir, "cmd", "apiserver", "main.go")}, []string{warning}); err != nil {
		t.Fatal(err)
	}
	for _, quiet := range []bool{false, true} {
		args := []string{"run", "local", "--secure-port", fmt.Sprint(freeLoopbackPort(t)), "--controller-manager=false"}
		if quiet {
			args = append(args, "-q")
		}
		// The tiny main of deployProject exits at once: run local fails
		// after generate and build, naming what it printed last.
		out, err := run(t, dir, args...)
		if err == nil || !strings.Contains(err.Error(), "apiserver exited before it was ready (exit status 0); its last words: apiserver linux/amd64 [--secure-port") {
			t.Fatalf("run local of a project whose apiserver exits: %v\n%s", err, out)
		}
		if !strings.Contains(out, "warning: "+warning+"\n") {
			t.Errorf("quiet=%v: run local did not print generate's warning:\n%s", quiet, out)
		}
		if up := "generate: up to date"; strings.Contains(out, up) == quiet {
			t.Errorf("quiet=%v: %q printed: %v\n%s", quiet, up, !quiet, out)
		}
	}
}

// TestQuietHoldsNoProgress: a build shows its progress (here on plain
// output, every interval), --quiet (-q) none of it, nor the step messages,
// but still the result.
func TestQuietHoldsNoProgress(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles")
	}
	defer func(i time.Duration) { progress.Interval = i }(progress.Interval)
	progress.Interval = 5 * time.Millisecond
	dir := deployProject(t)
	const step = "Compiling bin/linux_amd64/apiserver and bin/linux_amd64/controller-manager (linux/amd64, static)"
	const result = "Wrote bin/image.tar, tagged registry.example.com/crontab:v0.1.0."
	out, err := run(t, dir, "build", "container", "--image", "registry.example.com/crontab:v0.1.0", "--generate=false")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, step+": ") || !strings.Contains(out, " packages compiled, ") || !strings.Contains(out, "Compiled in ") || !strings.Contains(out, result) {
		t.Errorf("build container shows no progress lines (%q) or no result:\n%s", step+": ", out)
	}
	for _, args := range [][]string{
		{"build", "container", "-q", "--image", "registry.example.com/crontab:v0.1.0", "--generate=false"},
		{"--quiet", "build", "container", "--image", "registry.example.com/crontab:v0.1.0", "--generate=false"},
	} {
		out, err := run(t, dir, args...)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if strings.Contains(out, "Compiling") || strings.Contains(out, "compiled") || strings.Contains(out, "Compiled") || strings.Contains(out, "Built ") {
			t.Errorf("%v: progress or step messages in quiet output:\n%s", args, out)
		}
		if strings.TrimSpace(out) != result+" Load it with: docker load -i bin/image.tar" {
			t.Errorf("%v: quiet output %q, want the result only", args, out)
		}
	}
}

// TestRunLocalDatastoreEndpoint: a malformed --datastore-endpoint or one
// with --etcd-servers is refused before anything is built, the password
// redacted (runlocal's TestDatastoreEndpoint: passed to the apiserver in a
// file, the embedded etcd then neither needed nor checked).
func TestRunLocalDatastoreEndpoint(t *testing.T) {
	dir := deployProject(t)
	holdEmbeddedEtcd(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--datastore-endpoint", "redis://app:hunter2@cache:6379"}, `--datastore-endpoint redis://app:xxxxx@cache:6379: unknown scheme "redis": use postgres://`},
		{[]string{"--datastore-endpoint", "postgres://app:hunter2@db/crontab", "--etcd-servers", "http://127.0.0.1:2379"}, "--datastore-endpoint postgres://app:xxxxx@db/crontab and --etcd-servers both given"},
	} {
		args := append([]string{"run", "local", "--secure-port", fmt.Sprint(freeLoopbackPort(t)), "--controller-manager=false", "--generate=false"}, tc.args...)
		out, err := run(t, dir, args...)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error()+out, "hunter2") {
			t.Errorf("%v: want an error starting with %q (no password), got %v\n%s", tc.args, tc.want, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bin")); err == nil {
		t.Errorf("bin/ was built")
	}
}
