package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/version"
)

// makeIn runs make in dir with the environment of a user who set none of
// the Makefile's variables.
func makeIn(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"--no-print-directory"}, args...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains([]string{"IMG", "APISERVER_BOOT", "PLATFORMS", "KUBECTL", "MAKEFLAGS", "MFLAGS", "MAKELEVEL"}, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestScaffoldedMakefile: the Makefile of a new project has the targets a
// kubebuilder user types, each running apiserver-boot commands that exist
// with flags they have, and make (make help) lists them by section.
func TestScaffoldedMakefile(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make on PATH")
	}
	dir := newProject(t)
	boot := "go run " + version.Module + "/cmd/apiserver-boot"
	targets := []struct {
		target string
		want   []string // the command lines of make -n
	}{
		{"generate", []string{boot + " generate"}},
		{"manifests", []string{boot + " build config --image crontab:dev"}},
		{"fmt", []string{"go fmt ./..."}},
		{"vet", []string{"go vet ./..."}},
		{"test", []string{boot + " generate", "go fmt ./...", "go vet ./...", "go test ./..."}},
		{"build", []string{boot + " generate", "go build -o bin/ ./cmd/apiserver ./cmd/controller-manager"}},
		{"run", []string{boot + " run local"}},
		{"docker-build", []string{boot + " build container --image crontab:dev --output bin/image.tar"}},
		{"docker-push", []string{boot + " build container --image crontab:dev --push"}},
		{"docker-buildx", []string{boot + " build container --image crontab:dev --platform linux/amd64,linux/arm64 --push"}},
		{"deploy", []string{boot + " run in-cluster --image crontab:dev --build=false --kubectl kubectl"}},
		{"undeploy", []string{"kubectl delete --ignore-not-found -k config"}},
		{"install", nil},
		{"uninstall", nil},
	}
	for _, tc := range targets {
		out, err := makeIn(t, dir, "-n", tc.target)
		if err != nil {
			t.Errorf("make -n %s: %v\n%s", tc.target, err, out)
			continue
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
			if !strings.HasPrefix(line, "echo ") {
				got = append(got, line)
			}
		}
		if tc.want != nil && !slices.Equal(got, tc.want) {
			t.Errorf("make -n %s runs\n  %s\nwant\n  %s", tc.target, strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
		}
		// Each apiserver-boot command line names a command and flags the CLI has.
		for _, line := range got {
			args, ok := strings.CutPrefix(line, boot+" ")
			if !ok {
				continue
			}
			root := newRootCommand()
			cmd, rest, err := root.Find(strings.Fields(args))
			if err == nil {
				err = cmd.ParseFlags(rest)
			}
			if err == nil {
				err = cmd.ValidateArgs(cmd.Flags().Args())
			}
			if err != nil || !cmd.Runnable() {
				t.Errorf("make %s runs %q, which apiserver-boot refuses: %v", tc.target, line, err)
			}
		}
	}

	// Variables are the user's to set.
	out, err := makeIn(t, dir, "-n", "manifests", "IMG=registry.example.com/crontab:v0.1.0", "APISERVER_BOOT=apiserver-boot")
	if err != nil || strings.TrimSpace(out) != "apiserver-boot build config --image registry.example.com/crontab:v0.1.0" {
		t.Errorf("make -n manifests IMG=... APISERVER_BOOT=...: %v\n%s", err, out)
	}

	// install and uninstall have nothing to do (no CRDs) and say what to run instead.
	for target, want := range map[string]string{"install": "make deploy", "uninstall": "make undeploy"} {
		out, err := makeIn(t, dir, target)
		if err != nil || !strings.Contains(out, "no CRDs") || !strings.Contains(out, want) {
			t.Errorf("make %s should say there are no CRDs and point to %s: %v\n%s", target, want, err, out)
		}
	}

	// make alone is make help: every target, under its section.
	out, err = makeIn(t, dir)
	if err != nil {
		t.Fatalf("make: %v\n%s", err, out)
	}
	plain := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(out, "")
	sections := map[string][]string{
		"General":     {"help"},
		"Development": {"generate", "manifests", "fmt", "vet", "test"},
		"Build":       {"build", "run", "docker-build", "docker-push", "docker-buildx"},
		"Deployment":  {"install", "uninstall", "deploy", "undeploy"},
	}
	for section, names := range sections {
		_, body, ok := strings.Cut(plain, "\n"+section+"\n")
		if !ok {
			t.Errorf("make help has no section %s:\n%s", section, plain)
			continue
		}
		body, _, _ = strings.Cut(body, "\n\n")
		for _, name := range names {
			if !regexp.MustCompile(`(?m)^  ` + regexp.QuoteMeta(name) + ` +\S`).MatchString(body) {
				t.Errorf("make help lists no %s under %s:\n%s", name, section, plain)
			}
		}
	}

	// The targets run: generate and manifests, with this apiserver-boot.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("APISERVER_BOOT_TEST_MAIN", "1")
	out, err = makeIn(t, dir, "generate", "manifests", "APISERVER_BOOT="+self)
	if err != nil {
		t.Fatalf("make generate manifests: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "config", "kustomization.yaml")); err != nil {
		t.Errorf("make manifests wrote no config/kustomization.yaml: %v\n%s", err, out)
	}
}
