package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The scaffold of a pretend earlier apiserver-boot: this one's, with the
// Makefile ending in oldMakefileLine, ValidateUpdate's comment worded
// oldComment, and no .dockerignore.
const (
	oldMakefileLine = "# scaffolded by an earlier apiserver-boot\n"
	oldComment      = "// ValidateUpdate checks updates."
	newComment      = "// ValidateUpdate applies the same rules to updates."
	hooksFile       = "pkg/apis/stable/v1/crontab_hooks.go"
	typesFile       = "pkg/apis/stable/v1/crontab_types.go"
)

// oldCLI writes a script that is that earlier apiserver-boot: this test
// binary as apiserver-boot, its scaffold then changed as above.
func oldCLI(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "apiserver-boot-old")
	body := `#!/bin/sh
APISERVER_BOOT_TEST_MAIN=1 "` + self + `" "$@" || exit $?
case "$*" in *--help*) exit 0 ;; esac
case "$1 $2 $3 $4" in
"init repo "*) printf '` + strings.TrimSuffix(oldMakefileLine, "\n") + `\n' >> Makefile; rm .dockerignore ;;
"create group version resource") sed -i 's#^` + newComment + `$#` + oldComment + `#' ` + hooksFile + ` ;;
esac
`
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return script
}

// oldProject is a project the earlier apiserver-boot made (cli), not yet in git.
func oldProject(t *testing.T, cli string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("loads Go packages")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/crontab\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "repo", "--domain", "example.com"},
		{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab"},
	} {
		cmd := exec.Command(cli, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	if b := readFile(t, dir, hooksFile); !strings.Contains(b, oldComment) {
		t.Fatalf("the old scaffold's hooks lack %q:\n%s", oldComment, b)
	}
	return dir
}

func gitIn(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func readFile(t *testing.T, dir, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func replaceIn(t *testing.T, dir, rel, old, new string) {
	t.Helper()
	b := readFile(t, dir, rel)
	if !strings.Contains(b, old) {
		t.Fatalf("%s lacks %q", rel, old)
	}
	if err := os.WriteFile(filepath.Join(dir, rel), []byte(strings.Replace(b, old, new, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stubGo records the go commands upgrade runs instead of running them.
func stubGo(t *testing.T) *[]string {
	var ran []string
	old := runGo
	runGo = func(dir string, args ...string) (string, error) {
		ran = append(ran, strings.Join(args, " "))
		return "", nil
	}
	t.Cleanup(func() { runGo = old })
	return &ran
}

const (
	userCheck = "if obj.Spec.Replicas < 0 {"
	userEdit  = "if obj.Spec.Replicas < 0 || obj.Spec.Replicas > 10 {"
	userField = "\tReplicas int32 `json:\"replicas,omitempty\"`\n"
)

// TestUpgrade: a project of the earlier apiserver-boot, edited by its user,
// is refused out of git and dirty, planned by --dry-run without a write,
// upgraded (each file updated, merged, added or kept as the plan said),
// and a second run has nothing to do.
func TestUpgrade(t *testing.T) {
	cli := oldCLI(t)
	dir := oldProject(t, cli)
	ran := stubGo(t)

	out, err := run(t, dir, "upgrade", "--from-cli", cli)
	if err == nil || !strings.Contains(err.Error(), "upgrade needs the project in git") {
		t.Fatalf("upgrade out of git: %v\n%s", err, out)
	}

	// The user's edits: a hook, a field, a scaffolded test deleted. PROJECT
	// is in the format of before the markers were the record of names.
	gitIn(t, dir, "init", "-q")
	replaceIn(t, dir, "PROJECT", "  kind: CronTab\n", "  kind: CronTab\n  plural: crontabs\n  scope: Namespaced\n  singular: crontab\n  subresources:\n  - status\n")
	replaceIn(t, dir, hooksFile, userCheck, userEdit)
	replaceIn(t, dir, typesFile, userField, userField+"\tImage string `json:\"image,omitempty\"`\n")
	if err := os.Remove(filepath.Join(dir, "pkg/controller/crontab/controller_test.go")); err != nil {
		t.Fatal(err)
	}
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "made by the earlier apiserver-boot, edited")

	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("wip"), 0o644)
	replaceIn(t, dir, "Makefile", oldMakefileLine, oldMakefileLine+"# mine\n")
	out, err = run(t, dir, "upgrade", "--from-cli", cli)
	if err == nil || !strings.Contains(err.Error(), "uncommitted changes") || !strings.Contains(err.Error(), "?? notes.txt") || !strings.Contains(err.Error(), " M Makefile") {
		t.Fatalf("upgrade on a dirty tree: %v\n%s", err, out)
	}
	if got := gitIn(t, dir, "status", "--porcelain"); got != " M Makefile\n?? notes.txt\n" {
		t.Fatalf("a refused upgrade changed files:\n%s", got)
	}
	gitIn(t, dir, "checkout", "--", "Makefile")
	os.Remove(filepath.Join(dir, "notes.txt"))

	out, err = run(t, dir, "upgrade", "--dry-run", "--from-cli", cli)
	if err != nil {
		t.Fatalf("upgrade --dry-run: %v\n%s", err, out)
	}
	for _, want := range []string{
		"update    Makefile (you never edited it",
		"merge     " + hooksFile,
		"keep      " + typesFile + "\n",
		"add       .dockerignore",
		"keep      pkg/controller/crontab/controller_test.go deleted (you deleted it; it stays deleted)",
		"update    PROJECT",
		"--dry-run: nothing written.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("upgrade --dry-run does not say %q:\n%s", want, out)
		}
	}
	if got := gitIn(t, dir, "status", "--porcelain"); got != "" {
		t.Fatalf("upgrade --dry-run wrote:\n%s", got)
	}

	out, err = run(t, dir, "upgrade", "--from-cli", cli)
	if err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out)
	}
	if strings.Contains(readFile(t, dir, "Makefile"), oldMakefileLine) {
		t.Error("the Makefile the user never edited is not today's")
	}
	hooks := readFile(t, dir, hooksFile)
	if !strings.Contains(hooks, userEdit) || !strings.Contains(hooks, newComment) || strings.Contains(hooks, oldComment) {
		t.Errorf("the hooks are not the user's edit merged with today's scaffold:\n%s", hooks)
	}
	if !strings.Contains(readFile(t, dir, typesFile), "Image string") {
		t.Error("the user's field is gone")
	}
	if _, err := os.Stat(filepath.Join(dir, ".dockerignore")); err != nil {
		t.Error("the file new in today's scaffold was not added")
	}
	if _, err := os.Stat(filepath.Join(dir, "pkg/controller/crontab/controller_test.go")); err == nil {
		t.Error("the scaffolded file the user deleted is back")
	}
	if strings.Contains(readFile(t, dir, "PROJECT"), "plural:") {
		t.Errorf("PROJECT is not in today's format:\n%s", readFile(t, dir, "PROJECT"))
	}
	if strings.Join(*ran, ";") != "build ./..." {
		t.Errorf("upgrade ran go %q, want build ./...", *ran)
	}
	if !strings.Contains(out, "Upgraded to apiserver-boot") {
		t.Errorf("upgrade does not say what it did:\n%s", out)
	}

	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "upgraded")
	*ran = nil
	out, err = run(t, dir, "upgrade", "--from-cli", cli)
	if err != nil || !strings.Contains(out, "Nothing to do") {
		t.Fatalf("a second upgrade: %v\n%s", err, out)
	}
	if got := gitIn(t, dir, "status", "--porcelain"); got != "" || len(*ran) > 0 {
		t.Errorf("a second upgrade changed files or ran go %v:\n%s", *ran, got)
	}
}

// TestUpgradeConflict: the user changed the lines today's scaffold changes;
// the file gets conflict markers and is listed, upgrade fails, and
// everything else (their other edits, the other files' updates) is there.
func TestUpgradeConflict(t *testing.T) {
	cli := oldCLI(t)
	dir := oldProject(t, cli)
	ran := stubGo(t)
	gitIn(t, dir, "init", "-q")
	replaceIn(t, dir, hooksFile, oldComment, "// ValidateUpdate: my words.")
	replaceIn(t, dir, hooksFile, userCheck, userEdit)
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "edited")

	out, err := run(t, dir, "upgrade", "--dry-run", "--from-cli", cli)
	if err != nil || !strings.Contains(out, "conflict  "+hooksFile+" (1 conflicting change(s)") {
		t.Fatalf("upgrade --dry-run should plan a conflict: %v\n%s", err, out)
	}
	out, err = run(t, dir, "upgrade", "--from-cli", cli)
	if err == nil || !strings.Contains(err.Error(), "1 file(s) have conflicts") || !strings.Contains(err.Error(), "\n  "+hooksFile+"\n") {
		t.Fatalf("upgrade should fail listing the conflict: %v\n%s", err, out)
	}
	hooks := readFile(t, dir, hooksFile)
	for _, want := range []string{
		userEdit,
		"<<<<<<< " + hooksFile + " (yours)\n// ValidateUpdate: my words.\n",
		"||||||| " + hooksFile + " (old scaffold)\n" + oldComment + "\n",
		"=======\n" + newComment + "\n>>>>>>> " + hooksFile + " (new scaffold)\n",
	} {
		if !strings.Contains(hooks, want) {
			t.Errorf("the conflicted hooks lack %q:\n%s", want, hooks)
		}
	}
	if strings.Contains(readFile(t, dir, "Makefile"), oldMakefileLine) {
		t.Error("the Makefile was not updated beside the conflict")
	}
	if _, err := os.Stat(filepath.Join(dir, ".dockerignore")); err != nil {
		t.Error(".dockerignore was not added beside the conflict")
	}
	if len(*ran) > 0 {
		t.Errorf("go %v ran on conflicted files", *ran)
	}
}

// TestUpgradeNeedsTheOldCLI: without --from-cli, PROJECT's cliVersion says
// which apiserver-boot made the project; none, or one that is no release,
// is an error naming --from-cli, and nothing is written.
func TestUpgradeNeedsTheOldCLI(t *testing.T) {
	dir := newProject(t)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-A")
	gitIn(t, dir, "commit", "-q", "-m", "made")
	out, err := run(t, dir, "upgrade")
	if err == nil || !strings.Contains(err.Error(), "PROJECT records no cliVersion") || !strings.Contains(err.Error(), "--from-cli PATH") {
		t.Errorf("upgrade without cliVersion or --from-cli: %v\n%s", err, out)
	}
	replaceIn(t, dir, "PROJECT", "domain: example.com\n", "cliVersion: devel-build\ndomain: example.com\n")
	gitIn(t, dir, "commit", "-q", "-am", "a cliVersion that is no release")
	out, err = run(t, dir, "upgrade")
	if err == nil || !strings.Contains(err.Error(), `cliVersion "devel-build" is not a release`) || !strings.Contains(err.Error(), "--from-cli PATH") {
		t.Errorf("upgrade with cliVersion devel-build: %v\n%s", err, out)
	}
	out, err = run(t, dir, "upgrade", "--from-cli", filepath.Join(dir, "no-such-binary"))
	if err == nil || !strings.Contains(err.Error(), "--from-cli "+filepath.Join(dir, "no-such-binary")+": not an apiserver-boot binary") {
		t.Errorf("upgrade --from-cli of a missing file: %v\n%s", err, out)
	}
	if got := gitIn(t, dir, "status", "--porcelain"); got != "" {
		t.Errorf("a refused upgrade wrote:\n%s", got)
	}
}
