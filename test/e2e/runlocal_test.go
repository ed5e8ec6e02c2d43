//go:build e2e

package e2e

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

const cronTab = `apiVersion: stable.example.com/v1
kind: CronTab
metadata:
  name: %s
  labels: {team: %s}
spec:
  replicas: %d
status:
  replicas: 99
`

func TestRunLocalWithKubectl(t *testing.T) {
	cronTabWalk(t)
}

// cronTabWalk drives a run local on the given store flags (none: the
// embedded etcd) with kubectl: discovery, create, validation, list with
// label and field selectors, update, status, edit, server-side apply,
// finalizers, delete, watch, anonymous access, and a restart that keeps
// the objects. The store must hold no CronTab or Calendar yet.
func cronTabWalk(t *testing.T, store ...string) {
	// Without the controller-manager, so nothing but these requests writes status.
	rl, port := runLocal(t, append([]string{"--controller-manager=false"}, store...)...)

	// Discovery, OpenAPI (explain) and /version work for kubectl.
	res := mustKubectl(t, "api-resources", "--api-group", "stable.example.com")
	for _, want := range []string{"crontabs", "calendars"} {
		if !strings.Contains(res, want) {
			t.Errorf("api-resources lacks %s:\n%s", want, res)
		}
	}
	if out := mustKubectl(t, "explain", "crontab.spec.replicas"); !strings.Contains(out, "desired number of instances") {
		t.Errorf("explain does not show the field's Go doc:\n%s", out)
	}
	if out := mustKubectl(t, "version", "-o", "json"); !strings.Contains(out, `"gitVersion": "v1.`) {
		t.Errorf("server version is not Kubernetes-shaped:\n%s", out)
	}

	// A watch started before the writes sees them, in order.
	watch := harness.Start(t, proj, "kubectl", "--cache-dir", t.TempDir(), "--kubeconfig", filepath.Join(proj, "kubeconfig"), "get", "crontabs", "--watch",
		"--output-watch-events", "-o", `jsonpath={.type} {.object.metadata.name}{"\n"}`)
	time.Sleep(time.Second)

	// Create: status from the client is dropped, generation starts at 1, defaults apply.
	for _, m := range []string{fmt.Sprintf(cronTab, "alpha", "a", 3), fmt.Sprintf(cronTab, "beta", "b", 0)} {
		if r := kubectlApplyStdin(t, "create", m); r.err != nil {
			t.Fatalf("create: %v %s", r.err, r.stderr)
		}
	}
	if got := mustKubectl(t, "get", "crontab", "alpha", "-o", "jsonpath={.metadata.generation} {.spec.replicas} [{.status.replicas}]"); got != "1 3 []" {
		t.Errorf("after create: generation, replicas, status = %q, want %q", got, "1 3 []")
	}
	if got := mustKubectl(t, "get", "crontab", "beta", "-o", "jsonpath={.spec.replicas}"); got != "1" {
		t.Errorf("DefaultingFunction not applied: replicas = %q, want 1", got)
	}

	// Validation errors reach kubectl with their field path, as 422.
	r := kubectlApplyStdin(t, "create", fmt.Sprintf(cronTab, "gamma", "a", 7))
	if r.err == nil || !strings.Contains(r.stderr, "spec.replicas: Invalid value: 7: must not be 7") {
		t.Errorf("want the Validate hook's error for spec.replicas, got err=%v stderr=%s", r.err, r.stderr)
	}
	if code := rawPost(t, "/apis/stable.example.com/v1/namespaces/default/crontabs",
		`{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"gamma"},"spec":{"replicas":7}}`); code != http.StatusUnprocessableEntity {
		t.Errorf("invalid create: HTTP %d, want 422", code)
	}

	// List and label selectors.
	if got := mustKubectl(t, "get", "crontabs", "-o", "name"); got != "crontab.stable.example.com/alpha\ncrontab.stable.example.com/beta\n" {
		t.Errorf("list: %q", got)
	}
	if got := mustKubectl(t, "get", "crontabs", "-l", "team=b", "-o", "name"); got != "crontab.stable.example.com/beta\n" {
		t.Errorf("label selector: %q", got)
	}
	if got := mustKubectl(t, "get", "crontabs", "--field-selector", "metadata.name=alpha", "-o", "name"); got != "crontab.stable.example.com/alpha\n" {
		t.Errorf("field selector: %q", got)
	}

	// Update: spec changes bump generation; status through the main resource is ignored,
	// through /status it is written without touching spec or generation.
	mustKubectl(t, "patch", "crontab", "alpha", "--type", "merge", "-p", `{"spec":{"replicas":5},"status":{"replicas":7}}`)
	if got := mustKubectl(t, "get", "crontab", "alpha", "-o", "jsonpath={.metadata.generation} {.spec.replicas} [{.status.replicas}]"); got != "2 5 []" {
		t.Errorf("after spec patch: %q, want %q", got, "2 5 []")
	}
	mustKubectl(t, "patch", "crontab", "alpha", "--subresource", "status", "--type", "merge", "-p", `{"spec":{"replicas":9},"status":{"replicas":7}}`)
	if got := mustKubectl(t, "get", "crontab", "alpha", "-o", "jsonpath={.metadata.generation} {.spec.replicas} [{.status.replicas}]"); got != "2 5 [7]" {
		t.Errorf("after status patch: %q, want %q", got, "2 5 [7]")
	}
	// kubectl edit, with a non-interactive editor.
	edit := exec.Command("kubectl", "--cache-dir", t.TempDir(), "--kubeconfig", filepath.Join(proj, "kubeconfig"), "edit", "crontab", "alpha")
	edit.Env = append(os.Environ(), "KUBE_EDITOR=sed -i 's/replicas: 5$/replicas: 6/'") // run through sh by kubectl
	if out, err := edit.CombinedOutput(); err != nil {
		t.Fatalf("kubectl edit: %v\n%s", err, out)
	}
	if got := mustKubectl(t, "get", "crontab", "alpha", "-o", "jsonpath={.metadata.generation} {.spec.replicas}"); got != "3 6" {
		t.Errorf("after edit: %q, want %q", got, "3 6")
	}
	if r := kubectl("patch", "crontab", "alpha", "--type", "merge", "-p", `{"spec":{"replicas":7}}`); r.err == nil || !strings.Contains(r.stderr, "must not be 7") {
		t.Errorf("ValidateUpdate hook not applied: %v %s", r.err, r.stderr)
	}

	// Cluster-scoped kinds are served without a namespace.
	if r := kubectlApplyStdin(t, "create", "apiVersion: stable.example.com/v1\nkind: Calendar\nmetadata:\n  name: holidays\n"); r.err != nil {
		t.Fatalf("create calendar: %v %s", r.err, r.stderr)
	}
	if got := mustKubectl(t, "get", "calendars", "-o", "jsonpath={.items[0].metadata.name}/{.items[0].metadata.namespace}"); got != "holidays/" {
		t.Errorf("cluster-scoped list: %q", got)
	}

	// Server-side apply: created, then changed by the same manager; a field
	// another manager owns is a conflict.
	ssa := func(replicas int, manager string) result {
		return kubectlApplyStdinArgs(t, fmt.Sprintf(cronTab, "delta", "d", replicas), "apply", "--server-side", "--field-manager", manager)
	}
	for _, n := range []int{2, 4} {
		if r := ssa(n, "walk"); r.err != nil {
			t.Fatalf("server-side apply: %v %s", r.err, r.stderr)
		}
	}
	if got := mustKubectl(t, "get", "crontab", "delta", "-o", `jsonpath={.spec.replicas} {.metadata.managedFields[?(@.manager=="walk")].operation}`); got != "4 Apply" {
		t.Errorf("after server-side apply: %q, want %q", got, "4 Apply")
	}
	if r := ssa(3, "other"); r.err == nil || !strings.Contains(r.stderr, "conflict") {
		t.Errorf("a second manager's apply of an owned field: %v %s, want a conflict", r.err, r.stderr)
	}
	// Finalizers: a delete marks the object; removing the finalizer ends it.
	mustKubectl(t, "patch", "crontab", "delta", "--type", "merge", "-p", `{"metadata":{"finalizers":["example.com/hold"]}}`)
	mustKubectl(t, "delete", "crontab", "delta", "--wait=false")
	if got := mustKubectl(t, "get", "crontab", "delta", "-o", "jsonpath={.metadata.finalizers[0]} {.metadata.deletionTimestamp}"); !strings.HasPrefix(got, "example.com/hold 20") {
		t.Errorf("deleted with a finalizer: %q, want the finalizer and a deletionTimestamp", got)
	}
	mustKubectl(t, "patch", "crontab", "delta", "--type", "json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
	if r := kubectl("get", "crontab", "delta"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("finalizer removed, object still there: %v %s", r.err, r.stderr)
	}

	// Delete.
	mustKubectl(t, "delete", "crontab", "beta")
	if r := kubectl("get", "crontab", "beta"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
		t.Errorf("deleted object still readable: %v %s", r.err, r.stderr)
	}
	time.Sleep(time.Second)
	for _, want := range []string{"ADDED alpha", "ADDED beta", "MODIFIED alpha", "ADDED delta", "DELETED delta", "DELETED beta"} {
		if !strings.Contains(watch.Out.String(), want) {
			t.Errorf("watch did not show %q:\n%s", want, watch.Out.String())
		}
	}

	// Anonymous callers get 401, except on health endpoints.
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for path, want := range map[string]int{"/apis/stable.example.com/v1/crontabs": 401, "/healthz": 200, "/readyz": 200} {
		resp, err := insecure.Get(fmt.Sprintf("https://127.0.0.1:%d%s", port, path))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("anonymous GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}

	// Ctrl-C stops everything; nothing is left running.
	rl.Stop(t)
	if left := projectProcesses(); len(left) > 0 {
		t.Fatalf("processes left after stop: %v", left)
	}

	// Objects survive a restart of the store.
	rl, _ = runLocal(t, append([]string{"--generate=false", "--controller-manager=false"}, store...)...)
	if got := mustKubectl(t, "get", "crontab", "alpha", "-o", "jsonpath={.spec.replicas}"); got != "6" {
		t.Errorf("after restart: replicas = %q, want 6", got)
	}
	rl.Stop(t)
	if left := projectProcesses(); len(left) > 0 {
		t.Fatalf("processes left after stop: %v", left)
	}
}

// rawPost posts JSON with the kubeconfig's credentials and returns the HTTP status.
func rawPost(t *testing.T, path, body string) int {
	t.Helper()
	cfg, client := restConfig(t)
	resp, err := client.Post(cfg.Host+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), "spec.replicas") {
		t.Errorf("response does not name the field: %s", b)
	}
	return resp.StatusCode
}

// TestExternalEtcd runs the apiserver on a separate etcd process and checks
// where objects are stored: <prefix>/<group>/<plural>/<namespace>/<name>.
func TestExternalEtcd(t *testing.T) {
	etcd := startEtcd(t)
	rl, _ := runLocal(t, "--etcd-servers", etcd.url, "--controller-manager=false", "--generate=false")
	if r := kubectlApplyStdin(t, "create", fmt.Sprintf(cronTab, "external", "x", 2)); r.err != nil {
		t.Fatalf("create: %v %s", r.err, r.stderr)
	}
	// Stored as protobuf, as kube-apiserver stores its own types.
	if enc, v := etcd.stored(t, "/registry/stable.example.com/crontabs/default/external"); enc != "protobuf" || v != "stable.example.com/v1" {
		t.Errorf("etcd key of crontab external: %s in %s, want protobuf in stable.example.com/v1", enc, v)
	}
	// The namespaces the standalone apiserver serves are stored as
	// kube-apiserver stores them: protobuf in v1 under <prefix>/namespaces/.
	if enc, v := etcd.stored(t, "/registry/namespaces/default"); enc != "protobuf" || v != "v1" {
		t.Errorf("etcd key of namespace default: %s in %s, want protobuf in v1", enc, v)
	}
	rl.Stop(t)
	etcd.stop(t)
	if left := projectProcesses(); len(left) > 0 {
		t.Fatalf("processes left after stop: %v", left)
	}
}

// TestStorageVersionChange: a kind's storage version moves from v1 to v2;
// objects etcd holds in v1 are still served, new writes are stored in v2, and
// migrate storage re-encodes the old ones.
func TestStorageVersionChange(t *testing.T) {
	etcd := startEtcd(t)
	defer etcd.stop(t)
	const key = "/registry/ops.example.com/backups/default/old"
	rl, _ := runLocal(t, "--etcd-servers", etcd.url, "--controller-manager=false", "--generate=false")
	// The note is longer than v2 will allow (+k8s:maxLength=20, below).
	const long, longer = "this note is too long", "this note is far too long"
	if r := kubectlApplyStdin(t, "create", "apiVersion: ops.example.com/v1\nkind: Backup\nmetadata:\n  name: old\nspec:\n  replicas: 3\n  note: "+long+"\n"); r.err != nil {
		t.Fatalf("create: %v %s", r.err, r.stderr)
	}
	if _, v := etcd.stored(t, key); v != "ops.example.com/v1" {
		t.Fatalf("stored before the change: stored in %s, want ops.example.com/v1", v)
	}
	rl.Stop(t)

	if _, err := harness.Sh(proj, cli, "create", "version", "--group", "ops", "--version", "v2", "--kind", "Backup", "--from", "v1"); err != nil {
		t.Fatal(err)
	}
	// Move +storageversion from v1 to v2, as a user would.
	edit := func(version string, f func(string) string) {
		path := filepath.Join(proj, "pkg", "apis", "ops", version, "backup_types.go")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(f(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("v1", func(s string) string { return strings.Replace(s, "// +storageversion\n", "", 1) })
	edit("v2", func(s string) string {
		s = strings.Replace(s, "// +resource:path=backups", "// +storageversion\n// +resource:path=backups", 1)
		// Kubernetes' declarative validation, in v2 only.
		return strings.Replace(s, "\t// +optional\n\tNote string", "\t// +k8s:optional\n\t// +k8s:maxLength=20\n\tNote string", 1)
	})

	// A second kind of the group stays in v1 only: the group now stores
	// Backup in v2 and Restore in v1 (as wardle stores Flunder and Fischer).
	if out, err := harness.Sh(proj, cli, "create", "group", "version", "resource", "--group", "ops", "--version", "v1", "--kind", "Restore", "--controller=false"); err != nil {
		t.Fatalf("create Restore: %v\n%s", err, out)
	}

	// The REST hooks run from the storage version: generate says the ones
	// left in v1 no longer run; moved to v2, they do.
	out, err := harness.Sh(proj, cli, "generate")
	if want := "pkg/apis/ops/v1/backup_hooks.go:"; err != nil || !strings.Contains(out, want) || !strings.Contains(out, "BackupStrategy.Validate is not used: the REST hooks of Backup run from its storage version v2") {
		t.Fatalf("generate should warn about the hooks left in v1: %v\n%s", err, out)
	}
	hooks, err := os.ReadFile(filepath.Join(proj, "pkg", "apis", "ops", "v1", "backup_hooks.go"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(proj, "pkg", "apis", "ops", "v1", "backup_hooks.go"))
	os.WriteFile(filepath.Join(proj, "pkg", "apis", "ops", "v2", "backup_hooks.go"), []byte(strings.Replace(string(hooks), "package v1\n", "package v2\n", 1)), 0o644)
	if out, err := harness.Sh(proj, cli, "generate"); err != nil || unexpectedWarnings(out) != "" {
		t.Fatalf("generate after moving the hooks: %v\n%s", err, out)
	}

	rl, _ = runLocal(t, "--etcd-servers", etcd.url, "--controller-manager=false", "--generate=false")
	defer rl.Stop(t)
	for _, v := range []string{"v1", "v2"} {
		if got := mustKubectl(t, "get", "backups."+v+".ops.example.com", "old", "-o", "jsonpath={.apiVersion} {.spec.replicas}"); got != "ops.example.com/"+v+" 3" {
			t.Errorf("object stored in v1, read through %s: %q", v, got)
		}
	}
	if r := kubectlApplyStdin(t, "create", "apiVersion: ops.example.com/v1\nkind: Backup\nmetadata:\n  name: new\n"); r.err != nil {
		t.Fatalf("create: %v %s", r.err, r.stderr)
	}

	if _, v := etcd.stored(t, "/registry/ops.example.com/backups/default/new"); v != "ops.example.com/v2" {
		t.Errorf("written after the change: stored in %s, want ops.example.com/v2", v)
	}
	if _, v := etcd.stored(t, key); v != "ops.example.com/v1" {
		t.Errorf("untouched old object: stored in %s, want ops.example.com/v1", v)
	}
	if r := kubectlApplyStdin(t, "create", "apiVersion: ops.example.com/v1\nkind: Restore\nmetadata:\n  name: r\n"); r.err != nil {
		t.Fatalf("create restore: %v %s", r.err, r.stderr)
	}
	if enc, v := etcd.stored(t, "/registry/ops.example.com/restores/default/r"); enc != "protobuf" || v != "ops.example.com/v1" {
		t.Errorf("restore, whose storage version is v1 in a group that stores Backup in v2: %s in %s", enc, v)
	}

	out, err = harness.Sh(proj, cli, "migrate", "storage", "--group", "ops")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("migrate storage:\n%s", out)
	if want := "backups.ops.example.com: 2 objects, 1 re-encoded in v2 (Backup's storage version), 1 already were"; !strings.Contains(out, want) {
		t.Errorf("migrate storage printed %q, want %q", out, want)
	}
	if _, v := etcd.stored(t, key); v != "ops.example.com/v2" {
		t.Errorf("after migrate storage: stored in %s, want ops.example.com/v2", v)
	}
	if got := mustKubectl(t, "get", "backups.v1.ops.example.com", "old", "-o", "jsonpath={.spec.replicas}"); got != "3" {
		t.Errorf("after migrate storage, through v1: %q", got)
	}

	t.Run("declarative validation (+k8s: tags) in the request's version, ratcheted on update", func(t *testing.T) {
		if _, err := os.Stat(filepath.Join(proj, "pkg", "apis", "ops", "v2", "zz_generated.validations.go")); err != nil {
			t.Fatalf("v2 has +k8s: tags, yet: %v", err)
		}
		if _, err := os.Stat(filepath.Join(proj, "pkg", "apis", "ops", "v1", "zz_generated.validations.go")); err == nil {
			t.Errorf("v1 has no +k8s: validation tags, yet validation-gen wrote a file there")
		}
		const tooLong = "spec.note: Too long: may not be more than 20 characters"
		// Stored before the tag, over-long: an update through v2 that leaves
		// the note as it is passes (ratcheting)...
		if r := kubectl("patch", "backups.v2.ops.example.com", "old", "--type", "merge", "-p", `{"spec":{"replicas":4}}`); r.err != nil {
			t.Errorf("an update leaving the stored over-long note unchanged was refused: %v\n%s", r.err, r.stderr)
		}
		// ...changing it to another over-long value does not.
		if r := kubectl("patch", "backups.v2.ops.example.com", "old", "--type", "merge", "-p", `{"spec":{"note":"`+longer+`"}}`); r.err == nil || !strings.Contains(r.stderr, tooLong) {
			t.Errorf("changing the note to another over-long value: want %q, got err=%v %s", tooLong, r.err, r.stderr)
		}
		if r := kubectlApplyStdin(t, "create", "apiVersion: ops.example.com/v2\nkind: Backup\nmetadata:\n  name: long\nspec:\n  note: "+long+"\n"); r.err == nil || !strings.Contains(r.stderr, tooLong) {
			t.Errorf("create through v2: want %q, got err=%v %s", tooLong, r.err, r.stderr)
		}
		// v1 has no such tag: the same note is taken there.
		if r := kubectlApplyStdin(t, "create", "apiVersion: ops.example.com/v1\nkind: Backup\nmetadata:\n  name: long\nspec:\n  note: "+long+"\n"); r.err != nil {
			t.Errorf("create through v1: %v %s", r.err, r.stderr)
		}
		if got := mustKubectl(t, "get", "backups.v1.ops.example.com", "old", "-o", "jsonpath={.spec.replicas} {.spec.note}"); got != "4 "+long {
			t.Errorf("after the updates: %q", got)
		}
	})
}

// etcdProcess is an etcd built from go.etcd.io/etcd/server/v3, on free loopback ports.
type etcdProcess struct {
	*harness.Process
	url string
}

func startEtcd(t *testing.T) *etcdProcess {
	t.Helper()
	clientPort, peerPort := harness.FreePort(t), harness.FreePort(t)
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	p := harness.Start(t, t.TempDir(), etcdBin, "--name", "e2e", "--data-dir", t.TempDir(),
		"--listen-client-urls", clientURL, "--advertise-client-urls", clientURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL)
	p.WaitFor(t, "ready to serve client requests", time.Minute)
	return &etcdProcess{Process: p, url: clientURL}
}

// stored reads how the apiserver stored a key: "protobuf" or "json", and
// the apiVersion it is stored in.
func (e *etcdProcess) stored(t *testing.T, key string) (encoding, apiVersion string) {
	t.Helper()
	value := e.get(t, key)
	if raw, ok := strings.CutPrefix(value, "k8s\x00"); ok {
		var u runtime.Unknown
		if err := u.Unmarshal([]byte(raw)); err != nil {
			t.Fatalf("etcd key %s: %v", key, err)
		}
		return "protobuf", u.APIVersion
	}
	var tm metav1.TypeMeta
	if err := json.Unmarshal([]byte(value), &tm); err != nil {
		t.Fatalf("etcd key %s holds neither protobuf nor JSON: %q", key, value)
	}
	return "json", tm.APIVersion
}

// etcdClient is a client of the etcd at url, closed when the test ends.
func etcdClient(t *testing.T, url string) *clientv3.Client {
	t.Helper()
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{url}, DialTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// get reads a key as the apiserver stored it.
func (e *etcdProcess) get(t *testing.T, key string) string {
	t.Helper()
	cli := etcdClient(t, e.url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got, err := cli.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 1 {
		t.Fatalf("etcd key %s: %d values", key, len(got.Kvs))
	}
	return string(got.Kvs[0].Value)
}

// stop ends etcd; it exits by re-raising the signal, so its exit status is not ours to check.
func (e *etcdProcess) stop(t *testing.T) {
	select {
	case <-e.Done():
		return
	default:
	}
	e.Signal(syscall.SIGTERM)
	<-e.Done()
}

// TestSecondRunLocalRefused: while run local runs, a second one in the
// same project, on other ports, is refused within seconds naming the first
// (its pid and port); the first's kubeconfig and binaries are untouched and
// it still serves. The first runs with --quiet: its output holds the Ready
// line and the servers' logs, none of the build's messages or progress.
func TestSecondRunLocalRefused(t *testing.T) {
	rl, port := runLocal(t, "--generate=false", "--controller-manager=false", "-q")
	for _, chatter := range []string{"Building", "Built in", "packages compiled", "apiserver ready in", "Ctrl-C stops"} {
		if strings.Contains(rl.Out.String(), chatter) {
			t.Errorf("run local -q printed %q:\n%s", chatter, rl.Out.String())
		}
	}
	kubeconfig := filepath.Join(proj, "kubeconfig")
	files := []string{kubeconfig, filepath.Join(proj, "bin", "apiserver"), filepath.Join(proj, "bin", "controller-manager")}
	type state struct {
		sum   [32]byte
		mtime time.Time
	}
	snapshot := func() map[string]state {
		m := map[string]state{}
		for _, f := range files {
			b, err := os.ReadFile(f)
			st, serr := os.Stat(f)
			if err != nil || serr != nil {
				continue
			}
			m[f] = state{sha256.Sum256(b), st.ModTime()}
		}
		return m
	}
	before := snapshot()
	if len(before) < 2 {
		t.Fatalf("the first run local's kubeconfig or bin/apiserver is missing: %v", before)
	}

	// With generate and the controller-manager on: all a second instance
	// used to regenerate, rebuild and remove under the first.
	start := time.Now()
	out, err := harness.Sh(proj, cli, "run", "local", "--secure-port", fmt.Sprint(harness.FreePort(t)), "--controller-manager-address", fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t)))
	took := time.Since(start)
	want := fmt.Sprintf("run local is already running in this project (pid %d, apiserver https://127.0.0.1:%d, ", rl.Pid(), port)
	if err == nil || !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf("kill %d)", rl.Pid())) {
		t.Fatalf("second run local: want an error containing %q, got %v:\n%s", want, err, out)
	}
	if took > 10*time.Second {
		t.Errorf("second run local refused after %s", took)
	}
	t.Logf("refused in %s: %s", took.Round(time.Millisecond), strings.TrimSpace(out))
	if after := snapshot(); !reflect.DeepEqual(after, before) {
		t.Errorf("the second run local changed the first's files:\n%v\nwere\n%v", after, before)
	}
	select {
	case <-rl.Done():
		t.Fatalf("the first run local exited: %v\n%s", rl.Err(), rl.Out.String())
	default:
	}
	mustKubectl(t, "get", "crontabs")
	rl.Stop(t)
}

// TestPortTaken: a taken port is an error naming the flag to change it.
func TestPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	out, err := harness.Sh(proj, cli, "run", "local", "--secure-port", fmt.Sprint(port), "--generate=false")
	if err == nil || !strings.Contains(out, "--secure-port") {
		t.Fatalf("want an error naming --secure-port, got %v:\n%s", err, out)
	}
}

// TestControllerManager: a Reconcile that writes status through the
// generated clientset, seen with kubectl; after the controller-manager is
// stopped and started again, the object is reconciled again but not written.
func TestControllerManager(t *testing.T) {
	cmAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	rl, _ := runLocal(t, "--generate=false", "--controller-manager-address", cmAddr)
	// /readyz waits for every informer of the controllers it runs: the
	// project's controller of apps/v1 Deployments, which a standalone
	// apiserver does not serve, is not run here (TestRunLocalAsACluster).
	for path, want := range map[string]struct {
		code int
		body string
	}{"/healthz": {200, "ok"}, "/metrics": {200, "workqueue_adds_total"}, "/readyz": {200, "ok"}} {
		var body string
		var code int
		harness.WaitUntil(20*time.Second, func() bool {
			resp, err := http.Get("http://" + cmAddr + path)
			if err != nil {
				return false
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			body, code = string(b), resp.StatusCode
			return code == want.code && strings.Contains(body, want.body)
		})
		if code != want.code || !strings.Contains(body, want.body) {
			t.Errorf("controller-manager %s: HTTP %d %q, want %d with %q", path, code, body[:min(200, len(body))], want.code, want.body)
		}
	}
	if r := kubectlApplyStdin(t, "create", "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: reconciled\nspec:\n  replicas: 4\n"); r.err != nil {
		t.Fatalf("create: %v %s", r.err, r.stderr)
	}
	status := func() string {
		return kubectl("get", "ct", "reconciled", "-o", "jsonpath={.status.replicas} {.status.observedGeneration}").stdout
	}
	if !harness.WaitUntil(30*time.Second, func() bool { return status() == "4 1" }) {
		t.Fatalf("status not written by Reconcile: %q\n%s", status(), rl.Out.String())
	}
	mustKubectl(t, "patch", "ct", "reconciled", "--type", "merge", "-p", `{"spec":{"replicas":6}}`)
	if !harness.WaitUntil(30*time.Second, func() bool { return status() == "6 2" }) {
		t.Fatalf("status does not follow the spec: %q", status())
	}
	before := mustKubectl(t, "get", "ct", "reconciled", "-o", "jsonpath={.metadata.resourceVersion}")
	rl.Stop(t)

	rl, _ = runLocal(t, "--generate=false", "--controller-manager-address", cmAddr)
	if !harness.WaitUntil(30*time.Second, func() bool {
		return strings.Count(rl.Out.String(), `"Reconciling CronTab" namespace="default" name="reconciled"`) >= 1
	}) {
		t.Fatalf("not reconciled after the restart:\n%s", rl.Out.String())
	}
	time.Sleep(2 * time.Second)
	if after := mustKubectl(t, "get", "ct", "reconciled", "-o", "jsonpath={.metadata.resourceVersion}"); after != before {
		t.Errorf("the restart wrote the object again: resourceVersion %s -> %s\n%s", before, after, rl.Out.String())
	}
	if strings.Contains(rl.Out.String(), "Wrote CronTab status") {
		t.Errorf("the restarted controller repeated a status write:\n%s", rl.Out.String())
	}
	rl.Stop(t)
}

// TestExampleBuilds: the committed example project compiles, vets and
// passes its generated tests (REST conformance for a namespaced and a
// cluster-scoped kind).
func TestExampleBuilds(t *testing.T) {
	dir := filepath.Join(repoRoot, "example")
	for _, args := range [][]string{{"build", "./..."}, {"vet", "./..."}, {"test", "-count=1", "./..."}} {
		if out, err := harness.Sh(dir, "go", args...); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
}

// TestProjectTests: the generated tests of the e2e project (with markers,
// hooks, scale and a custom subresource) pass.
func TestProjectTests(t *testing.T) {
	out, err := harness.Sh(proj, "go", "test", "-count=1", "./...")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "ok  \texample.com/crontab/pkg/apis") {
		t.Errorf("the conformance tests did not run:\n%s", out)
	}
}

// TestRoundTripNamesUnconvertedFields: with the conversion stubs generate
// wrote for the renamed field still unfilled, the project's round-trip test
// fails and names the field (filled in, TestProjectTests passes).
func TestRoundTripNamesUnconvertedFields(t *testing.T) {
	conv := filepath.Join(proj, "pkg", "apis", "stable", "v2", "crontab_conversion.go")
	filled, err := os.ReadFile(conv)
	if err != nil {
		t.Fatal(err)
	}
	defer os.WriteFile(conv, filled, 0o644)
	if err := os.WriteFile(conv, []byte(v2Conversion), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := harness.Sh(proj, "go", "test", "-count=1", "-run", "TestRoundTrip_stable", "./pkg/apis/")
	if err == nil {
		t.Fatalf("the round-trip test passed with unfilled conversion stubs:\n%s", out)
	}
	if want := "Convert_stable_CronTabSpec_To_v2_CronTabSpec does not convert field(s) CronSpec"; !strings.Contains(out, want) {
		t.Errorf("the round-trip failure should name the field (%q):\n%s", want, out[:min(len(out), 3000)])
	}
}

// TestRunLocalAsACluster: run local's standalone apiserver behaves as a
// cluster where it can and says where it cannot. (a) An object in a
// namespace that does not exist is refused with NotFound naming it; (b)
// after `kubectl create namespace` it is created, and deleting the
// namespace deletes it; (c) the controller-manager says the Deployment
// controller cannot run standalone and does not start it (no endless
// "could not find the requested resource"); (d) the ready banner suggests
// a kind the apiserver serves.
func TestRunLocalAsACluster(t *testing.T) {
	cmAddr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
	rl, _ := runLocal(t, "--generate=false", "--controller-manager-address", cmAddr)
	defer rl.Stop(t)

	// (d) The banner's command works: it gets one of the project's kinds.
	var suggested string
	for _, line := range strings.Split(rl.Out.String(), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "kubectl --kubeconfig kubeconfig "); ok {
			suggested = rest
		}
	}
	if !strings.HasPrefix(suggested, "get ") || suggested == "get deployments" {
		t.Errorf("the ready banner suggests kubectl %q, want a get of one of the project's kinds:\n%s", suggested, rl.Out.String())
	}
	if r := kubectl(strings.Fields(suggested)...); r.err != nil {
		t.Errorf("the banner's kubectl %s fails: %v\n%s", suggested, r.err, r.stderr)
	}
	const notStandalone = "controller deployment for apps/v1 Deployment cannot run against the standalone apiserver of run local: it serves only the project's kinds (and namespaces); it runs when aggregated in a cluster"
	if !strings.Contains(rl.Out.String(), "\n"+notStandalone+"\n") {
		t.Errorf("the banner does not say the Deployment controller does not run here:\n%s", rl.Out.String())
	}

	// (a) A namespace that does not exist.
	const inNope = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: lost\n  namespace: nope\nspec:\n  replicas: 2\n"
	r := kubectlApplyStdin(t, "create", inNope)
	if r.err == nil || !strings.Contains(r.stderr, "(NotFound)") || !strings.Contains(r.stderr, `namespaces "nope" not found`) {
		t.Errorf("create in a namespace that does not exist: err=%v\n%s\nwant NotFound: namespaces \"nope\" not found", r.err, r.stderr)
	}
	// (b) Once created, as in a cluster.
	mustKubectl(t, "create", "namespace", "nope")
	if got := mustKubectl(t, "get", "namespace", "nope", "-o", "jsonpath={.status.phase}"); got != "Active" {
		t.Errorf("namespace nope: phase %q, want Active", got)
	}
	if r := kubectlApplyStdin(t, "create", inNope); r.err != nil {
		t.Fatalf("create after kubectl create namespace: %v\n%s", r.err, r.stderr)
	}
	if got := mustKubectl(t, "get", "namespaces", "-o", "name"); !strings.Contains(got, "namespace/default\n") || !strings.Contains(got, "namespace/nope\n") {
		t.Errorf("kubectl get namespaces:\n%s", got)
	}
	// kubectl waits until the namespace is gone: its content goes first.
	mustKubectl(t, "delete", "namespace", "nope", "--timeout=60s")
	if r := kubectl("get", "crontabs", "--all-namespaces", "-o", "name"); r.err != nil || strings.Contains(r.stdout, "lost") {
		t.Errorf("after the namespace was deleted: %v %q", r.err, r.stdout)
	}
	if r := kubectl("delete", "namespace", "default"); r.err == nil || !strings.Contains(r.stderr, "this namespace may not be deleted") {
		t.Errorf("delete namespace default: %v\n%s", r.err, r.stderr)
	}

	// (c) Said once by the controller-manager, which does not start the
	// controller: no informer error loop, and /readyz is ok.
	if !harness.WaitUntil(30*time.Second, func() bool { return strings.Count(rl.Out.String(), notStandalone) >= 2 }) {
		t.Fatalf("the controller-manager did not say the Deployment controller cannot run:\n%s", rl.Out.String())
	}
	var cmLine string
	for _, line := range strings.Split(rl.Out.String(), "\n") {
		if strings.HasPrefix(line, "[controller-manager]") && strings.Contains(line, notStandalone) {
			cmLine = line
		}
	}
	if cmLine == "" || strings.Count(rl.Out.String(), notStandalone) != 2 {
		t.Errorf("want the message once in the banner and once from the controller-manager:\n%s", rl.Out.String())
	}
	time.Sleep(5 * time.Second)
	if strings.Contains(rl.Out.String(), "could not find the requested resource") {
		t.Errorf("the controller-manager loops on a resource the apiserver does not serve:\n%s", rl.Out.String())
	}
	resp, err := http.Get("http://" + cmAddr + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("controller-manager /readyz: %d, want 200 (every controller it runs has synced)", resp.StatusCode)
	}
}
