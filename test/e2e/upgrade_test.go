//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// listTagsCommit is the last apiserver-boot whose scaffolded types had no
// protobuf tags on the kind's List (3de1292 added them): upgrading its
// projects merges the user's types with that change.
const listTagsCommit = "785a9be18a7c3b1be4180adc6778c721711e55cd"

// The hand edits of an upgraded project: a hook rule and a field.
const (
	scaffoldedRule = "if obj.Spec.Replicas < 0 {"
	editedRule     = "if obj.Spec.Replicas < 0 || obj.Spec.Replicas > 50 {"
	scaffoldedSpec = "\tReplicas int32 `json:\"replicas,omitempty\"`\n"
	editedSpec     = scaffoldedSpec + "\t// Image is mine.\n\tImage string `json:\"image,omitempty\"`\n"
	hooksPath      = "pkg/apis/stable/v1/crontab_hooks.go"
	typesPath      = "pkg/apis/stable/v1/crontab_types.go"
)

// oldAPIServerBoot builds apiserver-boot at commit of this repository's
// history (git archive, as TestAPIEvolution) and returns the binary.
func oldAPIServerBoot(t *testing.T, commit string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "apiserver-boot-"+commit[:7])
	os.MkdirAll(src, 0o755)
	if out, err := harness.Sh(repoRoot, "sh", "-c", fmt.Sprintf("git archive --format=tar %s | tar -x -C %s", commit, src)); err != nil {
		t.Fatalf("extracting apiserver-boot %s from the repository's history (a full clone is needed): %v\n%s", commit, err, out)
	}
	bin := filepath.Join(src, "apiserver-boot")
	if out, err := harness.Sh(src, "go", "build", "-o", bin, "./cmd/apiserver-boot"); err != nil {
		t.Fatalf("building apiserver-boot %s: %v\n%s", commit, err, out)
	}
	return bin
}

// sh runs a command in dir and fails the test on error.
func sh(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	out, err := harness.Sh(dir, name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
	}
	return out
}

func gitCommitAll(t *testing.T, dir, msg string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		sh(t, dir, "git", "init", "-q")
	}
	sh(t, dir, "git", "add", "-A")
	sh(t, dir, "git", "-c", "user.name=e2e", "-c", "user.email=e2e@example.com", "-c", "commit.gpgsign=false", "commit", "-q", "-m", msg)
}

// oldProject scaffolds a project with the apiserver-boot old, one kind
// (stable/v1 CronTab with its controller), and edits a hook and the type.
func oldProject(t *testing.T, old, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	sh(t, dir, "go", "mod", "init", "example.com/"+name)
	sh(t, dir, old, "init", "repo", "--domain", "example.com")
	sh(t, dir, old, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab")
	edit(t, dir, hooksPath, scaffoldedRule, editedRule)
	edit(t, dir, typesPath, scaffoldedSpec, editedSpec)
	sh(t, dir, old, "generate")
	return dir
}

func edit(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s lacks %q (%v):\n%s", rel, old, err, b)
	}
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(strings.Replace(string(b), old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// hasEdits fails unless the project still holds the hand edits.
func hasEdits(t *testing.T, dir string) {
	t.Helper()
	for rel, want := range map[string]string{hooksPath: editedRule, typesPath: editedSpec} {
		b, _ := os.ReadFile(filepath.Join(dir, rel))
		if !strings.Contains(string(b), want) {
			t.Errorf("after the upgrade, %s lacks the user's edit %q:\n%s", rel, want, b)
		}
	}
}

// serveWith starts cliBin's run local (build, embedded etcd) in dir.
func serveWith(t *testing.T, dir, cliBin string) *harness.Process {
	t.Helper()
	p := harness.Start(t, dir, cliBin, "run", "local", "--secure-port", fmt.Sprint(harness.FreePort(t)), "--controller-manager=false")
	p.WaitFor(t, "Ready.", 10*time.Minute)
	return p
}

// storedCronTabs reads every CronTab's spec and status through the server.
func storedCronTabs(t *testing.T, dir string) map[string]any {
	t.Helper()
	r := kubectlWith(filepath.Join(dir, "kubeconfig"), "", "get", "crontabs", "-A", "-o", "json")
	if r.err != nil {
		t.Fatalf("kubectl get crontabs: %v %s", r.err, r.stderr)
	}
	var list struct {
		Items []struct {
			Metadata struct{ Namespace, Name, UID string }
			Spec     map[string]any
			Status   map[string]any
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &list); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, i := range list.Items {
		out[i.Metadata.Namespace+"/"+i.Metadata.Name] = map[string]any{"uid": i.Metadata.UID, "spec": i.Spec, "status": i.Status}
	}
	return out
}

// refusesTooMany checks the edited hook is served: 60 replicas are refused.
func refusesTooMany(t *testing.T, dir, build string) {
	t.Helper()
	r := kubectlWith(filepath.Join(dir, "kubeconfig"), `{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "too-many", "namespace": "default"}, "spec": {"replicas": 60}}`, "create", "-f", "-")
	if r.err == nil || !strings.Contains(r.stderr, "spec.replicas") {
		t.Errorf("%s: a CronTab with 60 replicas should be refused by the edited hook: %v %s%s", build, r.err, r.stdout, r.stderr)
	}
}

// upgradeInFull scaffolds and edits a project with the apiserver-boot old
// (built at commit), stores CronTabs with its run local (embedded etcd),
// commits, and upgrades with today's apiserver-boot; upgrade must print
// want. Then the project's own tests pass, the edits are there, a second
// upgrade does nothing, and today's run local serves every stored object
// unchanged (uid, spec, status) and the edited hook. It returns the project.
func upgradeInFull(t *testing.T, old, commit, name string, want ...string) string {
	t.Helper()
	dir := oldProject(t, old, name)
	server := serveWith(t, dir, old)
	kc := filepath.Join(dir, "kubeconfig")
	for _, name := range []string{"a", "b"} {
		obj := fmt.Sprintf(`{"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": %q, "namespace": "default", "labels": {"app": %q}}, "spec": {"replicas": 3, "image": "busybox:%s"}}`, name, name, name)
		if r := kubectlWith(kc, obj, "create", "-f", "-"); r.err != nil {
			t.Fatalf("create %s with the old build: %v %s", name, r.err, r.stderr)
		}
		if r := kubectlWith(kc, "", "patch", "crontabs", name, "--subresource=status", "--type=merge", "-p", `{"status": {"replicas": 2}}`); r.err != nil {
			t.Fatalf("status of %s: %v %s", name, r.err, r.stderr)
		}
	}
	refusesTooMany(t, dir, "the old build")
	stored := storedCronTabs(t, dir)
	if len(stored) != 2 {
		t.Fatalf("the old build stored %v", stored)
	}
	server.Stop(t)
	gitCommitAll(t, dir, "made by apiserver-boot "+commit[:7])

	out := sh(t, dir, cli, "upgrade", "--from-cli", old)
	t.Logf("upgrade:\n%s", out)
	for _, w := range append(want, "go build ./...: ok", "Upgraded to apiserver-boot") {
		if !strings.Contains(out, w) {
			t.Errorf("upgrade does not say %q", w)
		}
	}
	hasEdits(t, dir)
	if out, err := harness.Sh(dir, "go", "test", "./..."); err != nil {
		t.Fatalf("the upgraded project's own tests: %v\n%s", err, out)
	}
	gitCommitAll(t, dir, "upgraded")
	if out := sh(t, dir, cli, "upgrade", "--from-cli", old); !strings.Contains(out, "Nothing to do") {
		t.Errorf("a second upgrade:\n%s", out)
	}

	server = serveWith(t, dir, cli)
	defer server.Stop(t)
	if got := storedCronTabs(t, dir); !reflect.DeepEqual(got, stored) {
		t.Errorf("today's server reads:\n%v\nwant what the old build stored:\n%v", got, stored)
	}
	refusesTooMany(t, dir, "the upgraded build")
	return dir
}

// TestUpgradeAcrossHistory: projects made by apiserver-boot at two earlier
// commits (preRecordCommit, before field numbers were recorded, whose
// scaffold differs from today's in the Makefile; listTagsCommit, whose
// types also differ), edited by hand and holding objects, upgraded in full
// (upgradeInFull); and a project whose edit overlaps a scaffold change: the
// conflict is marked and listed, and nothing else is lost.
func TestUpgradeAcrossHistory(t *testing.T) {
	oldA := oldAPIServerBoot(t, preRecordCommit)
	t.Run("preRecordCommit", func(t *testing.T) {
		upgradeInFull(t, oldA, preRecordCommit, "upgraded", "update    Makefile", "keep      "+hooksPath, "keep      "+typesPath)
	})

	t.Run("listTagsCommit", func(t *testing.T) {
		old := oldAPIServerBoot(t, listTagsCommit)
		dir := upgradeInFull(t, old, listTagsCommit, "listtags", "update    Makefile", "merge     "+typesPath)
		if b, _ := os.ReadFile(filepath.Join(dir, typesPath)); !strings.Contains(string(b), "Items []CronTab `json:\"items\" protobuf:\"bytes,2,rep,name=items\"`") {
			t.Errorf("the merged types lack today's scaffold's List tags:\n%s", b)
		}
	})

	t.Run("conflict", func(t *testing.T) {
		old := oldA
		dir := oldProject(t, old, "conflicted")
		// Today's Makefile rewrote its first lines.
		edit(t, dir, "Makefile", "# Makefile of conflicted, scaffolded by apiserver-boot.\n", "# Makefile of conflicted: our own build.\n")
		gitCommitAll(t, dir, "made by apiserver-boot "+preRecordCommit[:7])
		out, err := harness.Sh(dir, cli, "upgrade", "--from-cli", old)
		if err == nil || !strings.Contains(out, "1 file(s) have conflicts") || !strings.Contains(out, "\n  Makefile\n") {
			t.Fatalf("upgrade should fail listing the Makefile's conflict: %v\n%s", err, out)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "Makefile"))
		for _, want := range []string{"<<<<<<< Makefile (yours)\n# Makefile of conflicted: our own build.\n", "||||||| Makefile (old scaffold)\n", ">>>>>>> Makefile (new scaffold)\n"} {
			if !strings.Contains(string(b), want) {
				t.Errorf("the Makefile lacks %q:\n%s", want, b)
			}
		}
		hasEdits(t, dir)
		if _, err := harness.Sh(dir, "git", "diff", "--quiet", "go.mod"); err == nil {
			t.Error("go.mod was not upgraded beside the conflict")
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "PROJECT")); strings.Contains(string(b), "plural:") {
			t.Errorf("PROJECT was not rewritten beside the conflict:\n%s", b)
		}
	})
}
