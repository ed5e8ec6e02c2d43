package main

import (
	"debug/elf"
	"io"
	"log"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
)

// checkStatic fails unless path is a statically linked Linux executable for machine.
func checkStatic(t *testing.T, path string, machine elf.Machine) {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != machine || f.OSABI != elf.ELFOSABI_NONE && f.OSABI != elf.ELFOSABI_LINUX {
		t.Errorf("%s: machine %v, want %v", path, f.Machine, machine)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s is dynamically linked", path)
		}
	}
}

func TestBuildContainer(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles for two platforms")
	}
	dir := deployProject(t)
	const tag = "registry.example.com/crontab:v0.1.0"

	// One platform, default output: a docker load tarball.
	out, err := run(t, dir, "build", "container", "--image", tag, "--generate=false")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkStatic(t, filepath.Join(dir, "bin", "linux_amd64", "apiserver"), elf.EM_X86_64)
	ref, _ := name.NewTag(tag)
	img, err := tarball.ImageFromPath(filepath.Join(dir, "bin", "image.tar"), &ref)
	if err != nil {
		t.Fatalf("bin/image.tar: %v\n%s", err, out)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Architecture != "amd64" || cfg.OS != "linux" || cfg.Config.User != "65532:65532" || !slices.Equal(cfg.Config.Entrypoint, []string{"/apiserver"}) {
		t.Errorf("image config: %s/%s user %q entrypoint %v", cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint)
	}

	// Two platforms into an OCI layout: an index whose images hold each platform's binaries.
	out, err = run(t, dir, "build", "container", "--image", tag, "--generate=false", "--platform", "linux/amd64", "--platform", "linux/arm64", "--output", "out/layout")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	checkStatic(t, filepath.Join(dir, "bin", "linux_arm64", "controller-manager"), elf.EM_AARCH64)
	p, err := layout.FromPath(filepath.Join(dir, "out", "layout"))
	if err != nil {
		t.Fatal(err)
	}
	top, _ := p.ImageIndex()
	tm, _ := top.IndexManifest()
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatalf("the layout holds no image index: %v", err)
	}
	im, _ := idx.IndexManifest()
	var platforms []string
	for _, m := range im.Manifests {
		platforms = append(platforms, m.Platform.String())
	}
	if !slices.Equal(platforms, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("index platforms %v", platforms)
	}
}

func TestBuildContainerBadInput(t *testing.T) {
	dir := deployProject(t)
	before := listFiles(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--image is required"},
		{[]string{"--image", "registry.example.com/crontab"}, "--image"},
		{[]string{"--image", "Not/Valid:v1"}, "--image"},
		{[]string{"--image", "r.example.com/c:v1", "--platform", "linux/mips"}, "--platform \"linux/mips\" is not supported: valid platforms are linux/386, linux/amd64"},
		{[]string{"--image", "r.example.com/c:v1", "--platform", "windows/amd64"}, "--platform"},
		{[]string{"--image", "r.example.com/c:v1", "--platform", "linux/amd64,linux/arm64", "--output", "x.tar"}, "one --platform"},
	} {
		_, err := run(t, dir, append([]string{"build", "container", "--generate=false"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	if after := listFiles(t, dir); len(after) != len(before) {
		t.Errorf("files written on error: %v", after)
	}
}

// fakeKubectl writes a kubectl stand-in that logs its arguments and answers
// `get apiservice` from a state file: Available after the first poll,
// unless never is set.
func fakeKubectl(t *testing.T, dir string, never bool) (bin, logFile string) {
	t.Helper()
	bin, logFile = filepath.Join(dir, "kubectl"), filepath.Join(dir, "kubectl.log")
	answer := `if [ -e "$STATE.$name" ]; then echo 'True|Passed|all checks passed'; else touch "$STATE.$name"; echo 'False|MissingEndpoints|endpoints for service/crontab in "crontab-system" have no addresses'; fi`
	if never {
		answer = `echo 'False|FailedDiscoveryCheck|failing or missing response from https://10.0.0.1:9443'`
	}
	script := "#!/bin/sh\necho \"$@\" >> " + logFile + "\nSTATE=" + filepath.Join(dir, "state") + "\n" +
		"case \"$*\" in\n*\"get apiservice\"*)\n  for a in \"$@\"; do case \"$a\" in v*.*) name=$a;; esac; done\n  " + answer + "\n  ;;\nesac\n"
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, logFile
}

func TestRunInCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles")
	}
	dir := deployProject(t)
	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	u, _ := url.Parse(reg.URL)
	tag := u.Host + "/crontab:v0.1.0"
	kubectl, logFile := fakeKubectl(t, t.TempDir(), false)

	out, err := run(t, dir, "run", "in-cluster", "--name", "crontab", "--namespace", "crontab-system", "--image", tag,
		"--generate=false", "--kubectl", kubectl, "--kubeconfig", "/clusters/kind.kubeconfig", "--context", "kind-kind", "--timeout", "1m")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	// The pushed image is in the registry, and the configuration deploys it by digest.
	ref, _ := name.NewTag(tag)
	desc, err := remote.Get(ref)
	if err != nil {
		t.Fatalf("pulling back %s: %v", tag, err)
	}
	img, err := desc.Image()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := img.ConfigFile()
	if cfg.Config.Entrypoint[0] != "/apiserver" {
		t.Errorf("pulled image entrypoint %v", cfg.Config.Entrypoint)
	}
	content, _ := os.ReadFile(filepath.Join(dir, "config", "apiserver.yaml"))
	var deployment *appsv1.Deployment
	for _, o := range strictDecode(t, content) {
		if d, ok := o.(*appsv1.Deployment); ok {
			deployment = d
		}
	}
	if want := tag + "@" + desc.Digest.String(); deployment == nil || deployment.Spec.Template.Spec.Containers[0].Image != want {
		t.Errorf("the apiserver Deployment runs %v, want the pushed %s", deployment, want)
	}

	// kubectl: apply, rollout, then polls until every APIService is Available, always with --kubeconfig and --context.
	b, _ := os.ReadFile(logFile)
	calls := strings.Split(strings.TrimSpace(string(b)), "\n")
	prefix := "--kubeconfig /clusters/kind.kubeconfig --context kind-kind "
	for _, c := range calls {
		if !strings.HasPrefix(c, prefix) {
			t.Errorf("kubectl %s: not run against --kubeconfig and --context", c)
		}
	}
	if len(calls) < 2 || calls[0] != prefix+"apply -k "+filepath.Join(dir, "config") || !strings.HasPrefix(calls[1], prefix+"rollout status --namespace crontab-system deployment/crontab-apiserver") {
		t.Errorf("kubectl calls: %q", calls)
	}
	polled := map[string]int{}
	for _, c := range calls[2:] {
		f := strings.Fields(strings.TrimPrefix(c, prefix))
		polled[f[2]]++
	}
	for _, n := range []string{"v2.stable.example.com", "v1.stable.example.com", "v1beta1.stable.example.com", "v1alpha1.batch.example.com"} {
		if polled[n] != 2 { // False, then True
			t.Errorf("APIService %s polled %d times, want 2 (%v)", n, polled[n], polled)
		}
	}
	for _, want := range []string{"Available: v1alpha1.batch.example.com, v2.stable.example.com", "kubectl " + prefix + "get crontabs.stable.example.com", "get oxen.batch.example.com"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

func TestRunInClusterTimesOut(t *testing.T) {
	dir := deployProject(t)
	kubectl, _ := fakeKubectl(t, t.TempDir(), true)
	_, err := run(t, dir, "run", "in-cluster", "--build=false", "--image", "registry.example.com/crontab:v0.1.0", "--kubectl", kubectl, "--timeout", "1s")
	if err == nil || !strings.Contains(err.Error(), "--timeout") || !strings.Contains(err.Error(), "FailedDiscoveryCheck") {
		t.Fatalf("want a timeout naming the APIServices' condition, got %v", err)
	}
	if _, err := run(t, dir, "run", "in-cluster", "--build=false", "--image", "registry.example.com/crontab:v0.1.0", "--kubectl", filepath.Join(dir, "nokubectl")); err == nil || !strings.Contains(err.Error(), "--kubectl") {
		t.Errorf("a missing kubectl: want an error naming --kubectl, got %v", err)
	}
}
