//go:build e2e

package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// runLocal starts `apiserver-boot run local` and waits until it is ready.
func runLocal(t *testing.T, extra ...string) (*harness.Process, int) {
	t.Helper()
	port := harness.FreePort(t)
	args := append([]string{"run", "local", "--secure-port", fmt.Sprint(port)}, extra...)
	p := harness.Start(t, proj, cli, args...)
	p.WaitFor(t, "Ready.", 5*time.Minute)
	for _, line := range strings.Split(p.Out.String(), "\n") {
		if strings.HasPrefix(line, "apiserver ready in") {
			t.Log(line)
		}
	}
	return p, port
}

// projectProcesses lists processes running a binary of the project's bin/.
func projectProcesses() []string {
	var out []string
	entries, _ := os.ReadDir("/proc")
	binDir := filepath.Join(proj, "bin") + "/"
	for _, e := range entries {
		exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		if err == nil && strings.HasPrefix(exe, binDir) {
			out = append(out, e.Name()+" "+exe)
		}
	}
	return out
}

type result struct {
	stdout, stderr string
	err            error
}

func kubectl(args ...string) result {
	return kubectlWith(filepath.Join(proj, "kubeconfig"), "", args...)
}

// kubectlWith runs kubectl with a kubeconfig and, when not empty, stdin.
func kubectlWith(kubeconfig, stdin string, args ...string) result {
	// No discovery cache across calls: kubectl keys it by host:port, and a
	// port freed by one test's server is taken by another serving other
	// versions (kubectl then asks for a version that is not there).
	cache, err := os.MkdirTemp("", "kubectl-cache-")
	if err != nil {
		return result{"", "", err}
	}
	defer os.RemoveAll(cache)
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig, "--cache-dir", cache}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	return result{stdout.String(), stderr.String(), err}
}

func mustKubectl(t *testing.T, args ...string) string {
	t.Helper()
	r := kubectl(args...)
	if r.err != nil {
		t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), r.err, r.stdout, r.stderr)
	}
	return r.stdout
}

func kubectlApplyStdin(t *testing.T, verb, manifest string) result {
	t.Helper()
	return kubectlStdin(manifest, verb, "-f", "-")
}

// kubectlStdin runs kubectl with manifest on its standard input.
func kubectlStdin(manifest string, args ...string) result {
	return kubectlWith(filepath.Join(proj, "kubeconfig"), manifest, args...)
}
