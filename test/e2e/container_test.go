//go:build e2e

package e2e

import (
	"archive/tar"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	appsv1 "k8s.io/api/apps/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
)

// TestBuildContainer builds the e2e project's image (linux/amd64 only, to
// keep CI time), opens the docker tarball, checks its config, and runs the
// binaries extracted from its layers: --help, then the apiserver serving kubectl.
func TestBuildContainer(t *testing.T) {
	tmp := t.TempDir()
	const ref = "registry.example.com/crontab:v0.1.0"
	tarPath := filepath.Join(tmp, "crontab.tar")
	var out string
	if err := timed("build container", func() (err error) {
		out, err = harness.Sh(proj, cli, "build", "container", "--image", ref, "--output", tarPath, "--generate=false")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Log(out)

	tag, _ := name.NewTag(ref)
	img, err := tarball.ImageFromPath(tarPath, &tag)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("platform %s/%s, want linux/amd64", cfg.OS, cfg.Architecture)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/apiserver"}) || cfg.Config.User != "65532:65532" {
		t.Errorf("entrypoint %v, user %q", cfg.Config.Entrypoint, cfg.Config.User)
	}

	root := filepath.Join(tmp, "rootfs")
	files := extract(t, img, root)
	for _, f := range []string{"apiserver", "controller-manager", "etc/passwd", "etc/group", "etc/ssl/certs/ca-certificates.crt"} {
		if !slices.Contains(files, f) {
			t.Errorf("the image has no /%s: %v", f, files)
		}
	}
	if passwd, _ := os.ReadFile(filepath.Join(root, "etc", "passwd")); !strings.Contains(string(passwd), "nonroot:x:65532:65532:") {
		t.Errorf("/etc/passwd:\n%s", passwd)
	}
	for _, bin := range []string{"apiserver", "controller-manager"} {
		f, err := elf.Open(filepath.Join(root, bin))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("/%s is dynamically linked", bin)
			}
		}
		f.Close()
	}

	help, err := exec.Command(filepath.Join(root, "apiserver"), "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(help), "--delegated-auth") || !strings.Contains(string(help), "--etcd-servers") {
		t.Errorf("/apiserver --help: %v\n%s", err, help)
	}
	help, err = exec.Command(filepath.Join(root, "controller-manager"), "--help").CombinedOutput()
	if err != nil || !strings.Contains(string(help), "--leader-elect") {
		t.Errorf("/controller-manager --help: %v\n%s", err, help)
	}

	// The static, trimmed binary serves: standalone on an embedded etcd, as a user would try the image.
	state := filepath.Join(tmp, "state")
	port := harness.FreePort(t)
	kubeconfig := filepath.Join(state, "kubeconfig")
	p := harness.Start(t, tmp, filepath.Join(root, "apiserver"), "--secure-port", fmt.Sprint(port),
		"--write-kubeconfig", kubeconfig, "--token-file", filepath.Join(state, "token"), "--cert-dir", filepath.Join(state, "certs"),
		"--embedded-etcd-data-dir", filepath.Join(state, "etcd"),
		"--embedded-etcd-client-port", fmt.Sprint(harness.FreePort(t)), "--embedded-etcd-peer-port", fmt.Sprint(harness.FreePort(t)))
	if !harness.WaitUntil(2*time.Minute, func() bool { _, err := os.Stat(kubeconfig); return err == nil }) {
		t.Fatalf("the image's apiserver wrote no kubeconfig:\n%s", p.Out.String())
	}
	got, err := exec.Command("kubectl", "--cache-dir", t.TempDir(), "--kubeconfig", kubeconfig, "get", "crontabs", "-A").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl get crontabs through the image's apiserver: %v\n%s\n%s", err, got, p.Out.String())
	}
	p.Stop(t)
}

// extract writes the image's flattened file system under dir and lists its files.
func extract(t *testing.T, img v1.Image, dir string) []string {
	t.Helper()
	rc := mutate.Extract(img)
	defer rc.Close()
	var files []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			os.MkdirAll(filepath.Dir(path), 0o755)
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o777|0o600)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(f, tr); err != nil {
				t.Fatal(err)
			}
			f.Close()
			files = append(files, strings.TrimPrefix(h.Name, "/"))
		}
	}
}

// TestBuildConfigOfProject writes the configuration of the e2e project (two
// groups, a kind in two versions, a cluster-scoped kind, a controller of a
// built-in kind) and checks it through kubectl kustomize and strict decoding.
func TestBuildConfigOfProject(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "config")
	if _, err := harness.Sh(proj, cli, "build", "config", "--name", "crontab", "--namespace", "crontab-system",
		"--image", "registry.example.com/crontab:v0.1.0", "--output", dir); err != nil {
		t.Fatal(err)
	}
	out, err := harness.Sh(proj, "kubectl", "kustomize", dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := deploy.Decode([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	// The etcd image follows the etcd the project's go.mod requires.
	etcdVersion, err := harness.Sh(proj, "go", "list", "-m", "-f", "{{.Version}}", "go.etcd.io/etcd/server/v3")
	if err != nil {
		t.Fatal(err)
	}
	wantImage := "gcr.io/etcd-development/etcd:" + strings.TrimSpace(etcdVersion)
	var apiServices, rules []string
	for _, o := range objs {
		switch o := o.(type) {
		case *apiregistrationv1.APIService:
			apiServices = append(apiServices, fmt.Sprintf("%s:%d", o.Name, o.Spec.VersionPriority))
		case *rbacv1.ClusterRole:
			for _, r := range o.Rules {
				rules = append(rules, strings.Join(r.APIGroups, ",")+"/"+strings.Join(r.Resources, ","))
			}
		case *appsv1.StatefulSet:
			if img := o.Spec.Template.Spec.Containers[0].Image; img != wantImage {
				t.Errorf("etcd image %s, want %s", img, wantImage)
			}
		}
	}
	// stable serves CronTab in v1 and v2 (v2 preferred); ops serves Backup in v1 (and v2 once TestStorageVersionChange ran).
	for _, want := range []string{"v1.stable.example.com:10", "v2.stable.example.com:20"} {
		if !slices.Contains(apiServices, want) {
			t.Errorf("APIServices %v lack %s", apiServices, want)
		}
	}
	if !slices.ContainsFunc(apiServices, func(s string) bool { return strings.HasPrefix(s, "v1.ops.example.com:") }) || len(apiServices) < 3 {
		t.Errorf("APIServices %v lack v1.ops.example.com", apiServices)
	}
	for _, want := range []string{"stable.example.com/calendars,crontabs,oxen", "ops.example.com/backups", "apps/deployments"} {
		if !slices.Contains(rules, want) {
			t.Errorf("the controller-manager's rules %v lack %s", rules, want)
		}
	}
}
