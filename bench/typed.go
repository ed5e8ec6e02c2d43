package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Item 4's typed-client rows: the serving project's own generated clientset
// (pkg/client/clientset/versioned) creating Widgets, once speaking JSON and
// once protobuf. The bench cannot import the project's packages (another
// module), so the load runs as a small program built in the project.

// typedLoadProgram is cmd/benchload/main.go of the serving project (MODULE
// replaced by its module path). It creates -n Widgets with -c workers after
// ten untimed warm-up creates on the same connection, and prints
// {"seconds": …} of the timed part.
//
//go:embed typedload.go.tmpl
var typedLoadProgram string

// writeTypedLoad writes cmd/benchload into the serving project (built with
// the project's other binaries).
func writeTypedLoad(dir, module string) error {
	path := filepath.Join(dir, "cmd", "benchload", "main.go")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(strings.ReplaceAll(typedLoadProgram, "MODULE", module)), 0o644)
}

// writeKubeconfig writes a kubeconfig reaching cfg's server as cfg does
// (bearer token; the CA, or no verification).
func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["bench"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, CertificateAuthority: cfg.CAFile, InsecureSkipTLSVerify: cfg.Insecure}
	kc.AuthInfos["bench"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: "bench"}
	kc.CurrentContext = "bench"
	return clientcmd.WriteToFile(*kc, path)
}

// typedCreates runs the serving project's benchload against t: n creates
// with c workers into ns, protobuf or JSON, and returns the timed part.
func (b *bench) typedCreates(p *servingProject, t *target, ns, prefix string, n, c int, protobuf bool) (time.Duration, error) {
	out, err := proc.Command(b.ctx, p.dir, nil, filepath.Join(p.dir, "bin", "benchload"), "-kubeconfig", t.kubeconfig,
		fmt.Sprintf("-protobuf=%t", protobuf), "-namespace", ns, "-prefix", prefix, "-n", fmt.Sprint(n), "-c", fmt.Sprint(c))
	if err != nil {
		return 0, fmt.Errorf("%s: typed clientset: %w", t.name, err)
	}
	var r struct{ Seconds float64 }
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &r); err != nil {
		return 0, fmt.Errorf("%s: typed clientset printed %q: %w", t.name, out, err)
	}
	return time.Duration(r.Seconds * float64(time.Second)), nil
}
