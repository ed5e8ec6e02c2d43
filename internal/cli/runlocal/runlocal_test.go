package runlocal

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
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

// TestDatastoreEndpoint: run local passes --datastore-endpoint to the
// apiserver and then neither needs nor checks the embedded etcd (held here
// by another process): the URL given on the command line in a private file,
// one given in a file as that file; the record redacts the password.
func TestDatastoreEndpoint(t *testing.T) {
	dir := t.TempDir()
	holdEmbeddedEtcd(t, dir)
	p := &project.Project{Module: "example.com/crontab"}
	// The URL given on the command line is handed to the apiserver in a
	// private file; one given in a file is passed as that file: the
	// password is in no command line of the apiserver.
	const url = "postgres://app:hunter2@127.0.0.1:5432/crontab"
	given := filepath.Join(t.TempDir(), "endpoint")
	if err := os.WriteFile(given, []byte(url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, o := range []*Options{{DatastoreEndpoint: url}, {DatastoreEndpointFile: given}} {
		o.SecurePort, o.Kubeconfig = freeLoopbackPort(t), "kubeconfig"
		if err := o.readDatastoreFile(); err != nil {
			t.Fatal(err)
		}
		kubeconfig, err := o.preflight(dir, p)
		if err != nil {
			t.Fatalf("with --datastore-endpoint, the embedded etcd held elsewhere: %v", err)
		}
		if err := o.writeDatastoreFile(dir); err != nil {
			t.Fatal(err)
		}
		args := o.apiserverArgs(kubeconfig)
		i := slices.Index(args, "--datastore-endpoint-file")
		if i < 0 || strings.Contains(strings.Join(args, " "), "hunter2") || slices.Contains(args, "--etcd-servers") {
			t.Fatalf("apiserver arguments: %s", args)
		}
		b, err := os.ReadFile(args[i+1])
		if st, serr := os.Stat(args[i+1]); err != nil || serr != nil || strings.TrimSpace(string(b)) != url || st.Mode().Perm() != 0o600 {
			t.Errorf("the endpoint file %s: %q %v %v", args[i+1], b, err, serr)
		}
		if r := o.record(); r.Etcd != "postgres://app:xxxxx@127.0.0.1:5432/crontab" {
			t.Errorf("the record's store is %q", r.Etcd)
		}
	}
	both := &Options{DatastoreEndpoint: url, DatastoreEndpointFile: given}
	if err := both.readDatastoreFile(); err == nil || !strings.Contains(err.Error(), "--datastore-endpoint and --datastore-endpoint-file both given") {
		t.Errorf("both given: %v", err)
	}
}

// TestDevBuildArgs: run local's builds link without DWARF unless GOFLAGS
// gives its own -ldflags (an argument would replace it), and add their
// tags to GOFLAGS' own.
func TestDevBuildArgs(t *testing.T) {
	pkgs := []string{"./cmd/apiserver"}
	if got, want := devBuildArgs("", "bin", nil, pkgs), []string{"-o", "bin/", "-ldflags=-w", "./cmd/apiserver"}; !slices.Equal(got, want) {
		t.Errorf("devBuildArgs = %q, want %q", got, want)
	}
	if got, want := devBuildArgs("-mod=mod -ldflags=-X=main.v=1", "bin/.next", nil, pkgs), []string{"-o", "bin/.next/", "./cmd/apiserver"}; !slices.Equal(got, want) {
		t.Errorf("with GOFLAGS' -ldflags: devBuildArgs = %q, want %q", got, want)
	}
	tags := []string{datastore.NoKineTag}
	for goflags, want := range map[string]string{
		"":                               "-tags=" + datastore.NoKineTag,
		"-mod=mod":                       "-tags=" + datastore.NoKineTag,
		"-tags=netgo,osusergo -mod=mod":  "-tags=netgo,osusergo," + datastore.NoKineTag,
		"--tags=a -tags=b":               "-tags=b," + datastore.NoKineTag,
		`"-tags=a" '-mod=mod'`:           "-tags=a," + datastore.NoKineTag,
		"-mod=mod -tags= -trimpath=true": "-tags=" + datastore.NoKineTag,
	} {
		got := devBuildArgs(goflags, "bin", tags, pkgs)
		if !slices.Contains(got, want) {
			t.Errorf("GOFLAGS=%q: devBuildArgs = %q, want %s among them", goflags, got, want)
		}
	}
}

// TestBuildTags: run local leaves kine out unless it stores in SQL.
func TestBuildTags(t *testing.T) {
	if got := (&Options{}).buildTags(); !slices.Equal(got, []string{datastore.NoKineTag}) {
		t.Errorf("on etcd: build tags %q, want %s", got, datastore.NoKineTag)
	}
	if got := (&Options{EtcdServers: "https://127.0.0.1:2379"}).buildTags(); !slices.Equal(got, []string{datastore.NoKineTag}) {
		t.Errorf("on --etcd-servers: build tags %q, want %s", got, datastore.NoKineTag)
	}
	if got := (&Options{DatastoreEndpoint: "sqlite://x.db"}).buildTags(); got != nil {
		t.Errorf("on SQL: build tags %q, want none", got)
	}
}

// TestNoKineTag: the generated apiserver's framework package built with
// datastore.NoKineTag, as run local builds it, compiles and depends on no package of
// kine or its SQL drivers; without the tag it does (the tag is the one
// pkg/internal/storage's files name).
func TestNoKineTag(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles pkg/apiserver")
	}
	pkg := filepath.Join("..", "..", "..", "pkg", "apiserver")
	sql := []string{"github.com/k3s-io/kine", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/go-sql-driver/mysql"}
	for _, tags := range []string{"-tags=" + datastore.NoKineTag, "-tags="} {
		deps, err := exec.Command("go", "list", tags, "-deps", pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", tags, err, deps)
		}
		for _, dep := range sql {
			if has := strings.Contains(string(deps), dep+"/") || strings.Contains(string(deps), dep+"\n"); has != (tags == "-tags=") {
				t.Errorf("go list %s -deps pkg/apiserver: depends on %s: %v", tags, dep, has)
			}
		}
	}
	if out, err := exec.Command("go", "vet", "-tags="+datastore.NoKineTag, pkg).CombinedOutput(); err != nil {
		t.Fatalf("with %s, pkg/apiserver does not build: %v\n%s", datastore.NoKineTag, err, out)
	}
	storage := filepath.Join("..", "..", "..", "pkg", "internal", "storage")
	out, err := exec.Command("go", "test", "-count=1", "-tags="+datastore.NoKineTag, "-run", "^TestStartKineWithoutKine$", "-v", storage).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestStartKineWithoutKine") {
		t.Fatalf("with %s, pkg/internal/storage's TestStartKineWithoutKine: %v\n%s", datastore.NoKineTag, err, out)
	}
}

// TestGoflagsStoredByGoEnv: GOFLAGS stored with `go env -w` (not in the
// environment) counts, so that its -ldflags is not replaced.
func TestGoflagsStoredByGoEnv(t *testing.T) {
	t.Setenv("GOENV", filepath.Join(t.TempDir(), "env"))
	t.Setenv("GOFLAGS", "")
	if out, err := exec.Command("go", "env", "-w", "GOFLAGS=-ldflags=-X=main.v=1").CombinedOutput(); err != nil {
		t.Fatalf("go env -w: %v\n%s", err, out)
	}
	got := goflags(t.Context(), t.TempDir())
	if got != "-ldflags=-X=main.v=1" {
		t.Fatalf("goflags = %q, want the stored -ldflags", got)
	}
	if args := devBuildArgs(got, "bin", nil, []string{"./cmd/apiserver"}); slices.Contains(args, "-ldflags=-w") {
		t.Errorf("devBuildArgs replaces the stored -ldflags: %q", args)
	}
}
