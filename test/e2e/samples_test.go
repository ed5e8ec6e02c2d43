//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/generators/crdschema"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/testing/apidocstest"
	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// TestSamplesAccepted: every sample generate wrote (config/samples) is
// created by a running server: those of the committed example project, of
// the e2e project (markers, required fields, several groups) and of Gateway
// API's v1 types served from their Go files. A sample the user edited is
// kept by generate.
func TestSamplesAccepted(t *testing.T) {
	t.Run("Example", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "example")
		if out, err := harness.Sh(repoRoot, "cp", "-r", "example", dir); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, local := range []string{"bin", ".apiserver-boot", "kubeconfig"} {
			os.RemoveAll(filepath.Join(dir, local))
		}
		gomod := filepath.Join(dir, "go.mod")
		b, err := os.ReadFile(gomod)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, gomod, []byte(strings.Replace(string(b), "=> ..\n", "=> "+repoRoot+"\n", 1)))

		// An edited sample is the user's: generate keeps it.
		sample := filepath.Join(dir, "config", "samples", "stable_v1_crontab.yaml")
		b, err = os.ReadFile(sample)
		if err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(b), "spec: {}", "spec:\n  replicas: 3 # mine", 1)
		if edited == string(b) {
			t.Fatalf("the sample of CronTab changed shape:\n%s", b)
		}
		writeFile(t, sample, []byte(edited))
		if out, err := harness.Sh(dir, cli, "generate", "--force"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if b, _ := os.ReadFile(sample); string(b) != edited {
			t.Fatalf("generate replaced the edited sample:\n%s", b)
		}
		kubeconfig := serve(t, dir)
		applySamples(t, dir, kubeconfig, 3)

		// build docs --format openapi writes, without a server, the
		// documents the running server publishes, byte for byte.
		out := t.TempDir()
		if msg, err := harness.Sh(dir, cli, "build", "docs", "--format", "openapi", "--output", out); err != nil {
			t.Fatalf("%v\n%s", err, msg)
		}
		for _, v := range []string{"v1", "v2"} {
			path := "/openapi/v3/apis/stable.example.com/" + v
			served := kubectlWith(kubeconfig, "", "get", "--raw", path)
			if served.err != nil {
				t.Fatalf("GET %s: %v\n%s", path, served.err, served.stderr)
			}
			written, err := os.ReadFile(filepath.Join(out, "stable.example.com", v+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if served.stdout != string(written) {
				t.Errorf("%s: build docs wrote %d bytes, the server publishes %d, not the same", path, len(written), len(served.stdout))
			} else {
				t.Logf("%s: %d bytes, identical", path, len(written))
			}
		}
	})
	t.Run("E2EProject", func(t *testing.T) {
		applySamples(t, proj, serve(t, proj), 8)
	})
	t.Run("GatewayAPI", func(t *testing.T) {
		src := downloadModule(t, gatewayAPI)
		kubeconfig, _ := serveTypes(t, "gateway-samples", filepath.Join(src, "apis", "v1"), "networking.k8s.io", "gateway", "v1", nil)
		dir := filepath.Dir(kubeconfig)
		applySamples(t, dir, kubeconfig, 5)

		// Its reference documents every field of every schema the server
		// validates against, with its constraints and CEL rules, and of the
		// documented schemas with its description.
		if msg, err := harness.Sh(dir, cli, "build", "docs"); err != nil {
			t.Fatalf("%v\n%s", err, msg)
		}
		b, err := os.ReadFile(filepath.Join(dir, "docs", "api", "gateway.networking.k8s.io.md"))
		if err != nil {
			t.Fatal(err)
		}
		md := string(b)
		served, err := apidocstest.ServedSchemas(dir)
		if err != nil {
			t.Fatal(err)
		}
		for key, s := range served {
			for _, m := range apidocstest.Missing(md, s, false) {
				t.Errorf("%s: %s", key, m)
			}
		}
		p, err := project.Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		api, err := model.LoadAPI(dir, p, "github.com/apiserver-boot/apiserver-boot", "")
		if err != nil {
			t.Fatal(err)
		}
		documented, _, err := crdschema.GenerateDocumented(api, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range documented {
			for _, m := range apidocstest.Missing(md, s.Schema, true) {
				t.Errorf("%s: %s", s.Key(), m)
			}
		}
		if !strings.Contains(md, "Must have port for Service reference") {
			t.Error("the message of the backendRefs port rule is not on the page")
		}
		t.Logf("%d schemas, %d bytes of Markdown", len(served), len(md))
	})
}

// serve starts run local in the project dir until the test ends and returns its kubeconfig.
func serve(t *testing.T, dir string) string {
	t.Helper()
	p := harness.Start(t, dir, cli, "run", "local", "--secure-port", fmt.Sprint(harness.FreePort(t)), "--controller-manager=false")
	t.Cleanup(func() { p.Stop(t) })
	p.WaitFor(t, "Ready.", 5*time.Minute)
	return filepath.Join(dir, "kubeconfig")
}

// applySamples creates (then deletes) the object of every sample of the
// project at dir, failing on any the server refuses; there must be at least min.
func applySamples(t *testing.T, dir, kubeconfig string, min int) {
	t.Helper()
	list, _ := filepath.Glob(filepath.Join(dir, "config", "samples", "*.yaml"))
	if len(list) < min {
		t.Fatalf("%d samples in %s, want at least %d", len(list), dir, min)
	}
	for _, f := range list {
		r := kubectlWith(kubeconfig, "", "create", "-f", f)
		if r.err != nil {
			b, _ := os.ReadFile(f)
			t.Errorf("%s refused: %v\n%s%s\n%s", filepath.Base(f), r.err, r.stdout, r.stderr, b)
			continue
		}
		t.Logf("%s: %s", filepath.Base(f), strings.TrimSpace(r.stdout))
		if r := kubectlWith(kubeconfig, "", "delete", "-f", f); r.err != nil {
			t.Errorf("delete %s: %v\n%s", filepath.Base(f), r.err, r.stderr)
		}
	}
}
