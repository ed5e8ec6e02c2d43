package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// run executes the CLI in dir, as a user would, with stdin closed.
func run(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	cmd := newRootCommand()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

func listFiles(t *testing.T, dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	return out
}

func TestInitBadInputWritesNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		gomod bool
		want  string
	}{
		{"no domain", []string{"init", "repo"}, true, "--domain is required"},
		{"bad domain", []string{"init", "repo", "--domain", "Bad_Domain"}, true, "--domain"},
		{"no go.mod", []string{"init", "repo", "--domain", "example.com"}, false, "go mod init"},
		{"bad module", []string{"init", "repo", "--domain", "example.com", "--module", "not a module"}, false, "--module"},
		{"module mismatch", []string{"init", "repo", "--domain", "example.com", "--module", "example.com/other"}, true, "--module"},
		{"bad license", []string{"init", "repo", "--domain", "example.com", "--license", "gpl9"}, true, "--license"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if tc.gomod {
				os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/crontab\n\ngo 1.26\n"), 0o644)
			}
			before := listFiles(t, dir)
			_, err := run(t, dir, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("want an error containing %q, got %v", tc.want, err)
			}
			if after := listFiles(t, dir); len(after) != len(before) {
				t.Errorf("files written on error: %v", after)
			}
		})
	}
}

func TestCreateBadInputWritesNothing(t *testing.T) {
	dir := t.TempDir()
	// A minimal initialised project: PROJECT and the license header are all create reads.
	os.WriteFile(filepath.Join(dir, "PROJECT"), []byte("version: \"1\"\ndomain: example.com\nmodule: example.com/crontab\nresources:\n- group: stable\n  version: v1\n  kind: CronTab\n  plural: crontabs\n  singular: crontab\n  scope: Namespaced\n  controller: true\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "hack"), 0o755)
	os.WriteFile(filepath.Join(dir, "hack", "boilerplate.go.txt"), []byte("// header\n"), 0o644)
	before := listFiles(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--version", "v1", "--kind", "CronTab"}, "--group is required"},
		{[]string{"--group", "Stable", "--version", "v1", "--kind", "CronTab"}, "--group"},
		{[]string{"--group", "stable", "--version", "1", "--kind", "CronTab"}, "--version"},
		{[]string{"--group", "stable", "--version", "v1beta", "--kind", "CronTab"}, "--version"},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "cronTab"}, "--kind"},
		{[]string{"--group", "stable", "--version", "v1"}, "--kind is required"},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "Crontabs"}, "clashes"},
		{[]string{"--group", "func", "--version", "v1", "--kind", "CronTab"}, `--group "func" is not valid: it is a Go keyword`},
		{[]string{"--group", "any", "--version", "v1", "--kind", "CronTab"}, `--group "any" is not valid: it is a predeclared Go identifier`},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "Error"}, `--kind "Error" is not valid`},
		{[]string{"--group", "stable.example.com", "--version", "v1", "--kind", "CronTab"}, "--group stable.example.com: give the group without the project's domain: --group stable"},
		{[]string{"--group", "Stable", "--version", "v1", "--kind", "CronTab"}, "did you mean --group stable?"},
		{[]string{"--group", "stable", "--version", "v1beta", "--kind", "CronTab"}, "did you mean --version v1beta1?"},
		{[]string{"--group", "stable", "--version", "V1", "--kind", "CronTab"}, "did you mean --version v1?"},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "crontab"}, "did you mean --kind Crontab?"},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "cron-tab"}, "did you mean --kind CronTab?"},
		{[]string{"--group", "stable", "--version", "v1", "--kind", "CronTab", "--resource", "CronTabs"}, "did you mean --resource crontabs?"},
	} {
		_, err := run(t, dir, append([]string{"create", "group", "version", "resource"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	for _, args := range [][]string{
		{"create", "controller", "--group", "apps", "--version", "v1", "--kind", "Deploymentx"},
		{"create", "controller", "--group", "stable", "--version", "v1"},
		{"create", "subresource", "--subresource", "scale", "--group", "stable", "--version", "v1", "--kind", "Missing"},
	} {
		if _, err := run(t, dir, args...); err == nil {
			t.Errorf("%v: want an error", args)
		}
	}
	// A kind of the project named in another case, or a version it is not
	// served in, gets the flags naming it.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "subresource", "--subresource", "scale", "--group", "stable", "--version", "v1", "--kind", "crontab"}, "did you mean --group stable --version v1 --kind CronTab?"},
		{[]string{"create", "subresource", "--subresource", "scale", "--group", "stable", "--version", "v2", "--kind", "CronTab"}, "did you mean --group stable --version v1 --kind CronTab?"},
		{[]string{"create", "controller", "--group", "stable", "--version", "v1", "--kind", "crontab"}, "did you mean --group stable --version v1 --kind CronTab?"},
		{[]string{"create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v9"}, "CronTab is served in v1: give one of them with --from"},
		{[]string{"create", "version", "--group", "stable", "--version", "v2", "--kind", "crontab", "--from", "v1"}, "did you mean --group stable --kind CronTab?"},
		{[]string{"migrate", "storage", "--kind", "crontab"}, "did you mean --group stable --kind CronTab?"},
	} {
		if _, err := run(t, dir, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	// Every command naming a kind of the project by --group refuses the domain in it.
	for _, args := range [][]string{
		{"create", "version", "--group", "stable.example.com", "--version", "v2", "--kind", "CronTab", "--from", "v1"},
		{"create", "subresource", "--subresource", "scale", "--group", "stable.example.com", "--version", "v1", "--kind", "CronTab"},
		{"create", "controller", "--group", "stable.example.com", "--version", "v1", "--kind", "CronTab"},
		{"migrate", "storage", "--group", "stable.example.com"},
	} {
		want := "--group stable.example.com: give the group without the project's domain: --group stable"
		if _, err := run(t, dir, args...); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%v: want an error containing %q, got %v", args, want, err)
		}
	}
	if after := listFiles(t, dir); len(after) != len(before) {
		t.Errorf("files written on error: %v", after)
	}
}

func TestCreateOutsideProject(t *testing.T) {
	_, err := run(t, t.TempDir(), "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab")
	if err == nil || !strings.Contains(err.Error(), "init repo") {
		t.Fatalf("want a hint to run init repo, got %v", err)
	}
}

// TestEveryCommandHasAnExample walks the whole command tree, group commands
// (create, create group, build, run...) and cobra's help and completion
// included: each has an Example in --help, and each refuses a positional
// argument it does not take with an error saying what to type instead,
// before doing anything.
func TestEveryCommandHasAnExample(t *testing.T) {
	// The commands that take positional arguments, and how many.
	takes := map[string]int{"apiserver-boot api snapshot": 1}
	dir := t.TempDir()
	var check func(c *cobra.Command)
	check = func(c *cobra.Command) {
		path := c.CommandPath()
		if c.Hidden {
			return
		}
		if c.Example == "" {
			t.Errorf("%s has no example in --help", path)
		}
		for _, sub := range c.Commands() {
			check(sub)
		}
		if c.Name() == "help" {
			return
		}
		args := strings.Fields(strings.TrimPrefix(path, "apiserver-boot"))
		for range takes[path] {
			args = append(args, "v0.1.0")
		}
		args = append(args, "Bogus")
		out, err := run(t, dir, args...)
		if err == nil || !(strings.Contains(err.Error(), `unexpected argument "Bogus"`) || strings.Contains(err.Error(), `unknown command "Bogus"`)) {
			t.Errorf("%v: want an error refusing the argument Bogus, got %v\n%s", args, err, out)
		}
	}
	check(newRootCommand())
	if files := listFiles(t, dir); len(files) > 0 {
		t.Errorf("positional arguments wrote files: %v", files)
	}
}

// TestPositionalArguments: values given where flags are expected are refused
// with the flags to give them with.
func TestPositionalArguments(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "group", "version", "resource", "CronTab"}, `unexpected argument "CronTab": give the kind with --kind CronTab`},
		{[]string{"create", "group", "version", "resource", "stable", "v1", "CronTab"}, `unexpected arguments "stable v1 CronTab": give them as flags: --group stable --version v1 --kind CronTab`},
		{[]string{"create", "group", "stable"}, `unexpected argument "stable": give the group with --group stable`},
		{[]string{"create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab", "--controller", "false"}, `unexpected argument "false": a boolean flag takes its value after =, as in --controller=false`},
		{[]string{"build", "container", "registry.example.com/crontab:v1"}, "give the image with --image registry.example.com/crontab:v1"},
		{[]string{"run", "local", "now"}, `unexpected argument "now": apiserver-boot run local takes flags only`},
		{[]string{"api", "snapshot"}, "api snapshot needs the release to record, e.g. apiserver-boot api snapshot v0.2.0"},
	} {
		_, err := run(t, dir, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}

// TestUnknownSubcommands: a group command given something that is none of
// its subcommands fails (exit 1), listing them with cobra's suggestions,
// instead of printing its help and succeeding; alone, it prints its help.
func TestUnknownSubcommands(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"build", "manual"}, `unknown command "manual" for "apiserver-boot build": its commands are config, container, docs`},
		{[]string{"create", "gvr"}, `unknown command "gvr" for "apiserver-boot create": its commands are controller, group, subresource, version`},
		{[]string{"create", "group", "verison"}, `unknown command "verison" for "apiserver-boot create group": its commands are version; did you mean version?`},
		{[]string{"run", "lcoal"}, `unknown command "lcoal" for "apiserver-boot run": its commands are in-cluster, local; did you mean local?`},
		{[]string{"api", "snapshots"}, `unknown command "snapshots" for "apiserver-boot api": its commands are snapshot; did you mean snapshot?`},
		{[]string{"migrate", "data"}, `unknown command "data" for "apiserver-boot migrate": its commands are storage`},
		{[]string{"init", "project"}, `unknown command "project" for "apiserver-boot init": its commands are repo`},
		{[]string{"creat"}, `did you mean create?`},
		{[]string{"help", "biuld"}, `unknown command "biuld" for "apiserver-boot"`},
		{[]string{"help", "build", "manual"}, `unknown command "manual" for "apiserver-boot build"`},
	} {
		_, err := run(t, dir, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	out, err := run(t, dir, "build")
	if err != nil || !strings.Contains(out, "Available Commands:") || strings.Contains(out, "build [flags]") {
		t.Errorf("build alone should print its help, without a usage line of its own: %v\n%s", err, out)
	}
	if out, _ := run(t, dir, "build", "config", "--help"); !strings.Contains(out, "apiserver-boot build config [flags]") {
		t.Errorf("build config --help lost its usage line:\n%s", out)
	}
}

// TestUnknownFlags: a mistyped flag gets did-you-mean, a flag of another
// command says which, and malformed values say what is valid.
func TestUnknownFlags(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "group", "version", "resource", "--kinds", "CronTab"}, `unknown flag --kinds for "apiserver-boot create group version resource"; did you mean --kind?`},
		{[]string{"create", "group", "version", "resource", "--knd", "CronTab"}, `did you mean --kind?`},
		{[]string{"create", "group", "version", "resource", "--with-status"}, `did you mean --with-status-subresource?`},
		{[]string{"create", "group", "version", "resource", "-kind", "CronTab"}, `unknown flag -kind: flags take two dashes, --kind`},
		{[]string{"create", "group", "--kind", "CronTab"}, `unknown flag --kind for "apiserver-boot create group"; --kind is a flag of create controller, create group version resource, create subresource, create version, migrate storage`},
		{[]string{"run", "local", "--port", "9443"}, `unknown flag --port for "apiserver-boot run local" (see apiserver-boot run local --help for its flags)`},
		{[]string{"run", "local", "--secure-port", "x"}, `--secure-port "x" is not valid: want a whole number, such as 9443`},
		{[]string{"run", "local", "--watch=yes"}, `--watch "yes" is not valid: want true or false`},
		{[]string{"run", "local", "--timeout", "5"}, `--timeout "5" is not valid: want a duration such as 30s, 5m or 1h`},
		{[]string{"create", "group", "version", "resource", "--group"}, `--group needs a value: API group, without the domain, e.g. stable`},
	} {
		_, err := run(t, dir, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}

// TestPortFlagsAreRangeChecked: a port outside 1-65535 is an error naming the
// flag and the range, not "is taken".
func TestPortFlagsAreRangeChecked(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--secure-port", "70000"}, "--secure-port 70000 is not valid: want a port from 1 to 65535"},
		{[]string{"--secure-port", "0"}, "--secure-port 0 is not valid: want a port from 1 to 65535"},
		{[]string{"--secure-port=-1"}, "--secure-port -1 is not valid: want a port from 1 to 65535"},
		{[]string{"--controller-manager-address", "127.0.0.1:70000"}, "--controller-manager-address 127.0.0.1:70000: port 70000 is not valid: want a port from 1 to 65535"},
		{[]string{"--controller-manager-address", "9440"}, `--controller-manager-address "9440" is not valid: want host:port, such as 127.0.0.1:9440`},
		{[]string{"--controller-manager-address", "127.0.0.1:http"}, `the port "http" is not a number`},
	} {
		_, err := run(t, dir, append([]string{"run", "local"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
}

// TestCLIDoesNotLinkTheServer: the CLI starts in milliseconds (a no-op
// generate is a cache check); the apiserver library, whose packages register
// schemes and flags at start-up, belongs to generated projects, not the CLI.
func TestCLIDoesNotLinkTheServer(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		// CEL (with the feature gates and the authorizer interface its
		// libraries declare) checks rules at generate, and structural
		// defaulting (whose package reads the apiserver's feature gates)
		// gives the zero values those rules are evaluated on; nothing that
		// serves.
		cel := strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/cel") || strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/apis/cel") ||
			strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/util/") || strings.HasPrefix(pkg, "k8s.io/apiserver/pkg/authentication/") ||
			pkg == "k8s.io/apiserver/pkg/authorization/authorizer" || pkg == "k8s.io/apiserver/pkg/warning" || pkg == "k8s.io/apiserver/pkg/features"
		if (strings.HasPrefix(pkg, "k8s.io/apiserver/") && !cel) || pkg == "github.com/apiserver-boot/apiserver-boot/pkg/conformance" ||
			strings.HasPrefix(pkg, "k8s.io/apiextensions-apiserver/pkg/registry") {
			t.Errorf("the CLI links %s", pkg)
		}
	}
}

// TestRunLocalKeepsFilesItDidNotWrite: a --kubeconfig path holding anything
// but this project's kubeconfig is refused before anything is built, and
// left as it is.
func TestRunLocalKeepsFilesItDidNotWrite(t *testing.T) {
	dir := newProject(t)
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	_, err := run(t, dir, "run", "local", "--kubeconfig", "go.mod", "--generate=false", "--controller-manager=false", "--secure-port", strconv.Itoa(freeLoopbackPort(t)))
	if err == nil || !strings.Contains(err.Error(), "--kubeconfig "+filepath.Join(dir, "go.mod")+" exists and is not a kubeconfig") {
		t.Errorf("want an error naming the file, got %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "go.mod")); string(after) != string(gomod) {
		t.Errorf("go.mod changed")
	}
}
