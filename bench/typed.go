package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Item 4's typed-client rows: the serving project's own generated clientset
// (pkg/client/clientset/versioned) creating Widgets, once speaking JSON and
// once protobuf. The bench cannot import the project's packages (another
// module), so the load runs as a small program built in the project.

// typedLoadProgram is cmd/benchload/main.go of the serving project. It
// creates -n Widgets with -c workers after ten untimed warm-up creates on
// the same connection, and prints {"seconds": …} of the timed part.
const typedLoadProgram = `// Command benchload is written by apiserver-boot's bench: the generated
// typed clientset creating Widgets, for make bench's typed-client rows.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/flowcontrol"

	benchv1 "MODULE/pkg/apis/bench/v1"
	"MODULE/pkg/client/clientset/versioned"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the server")
	protobuf := flag.Bool("protobuf", false, "speak protobuf (else JSON)")
	namespace := flag.String("namespace", "default", "namespace of the Widgets")
	prefix := flag.String("prefix", "t", "name prefix")
	n := flag.Int("n", 1000, "timed creates")
	c := flag.Int("c", 1, "workers")
	flag.Parse()
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail(err)
	}
	cfg.RateLimiter = flowcontrol.NewFakeAlwaysRateLimiter()
	cfg.Timeout = time.Minute
	if *protobuf {
		cfg.ContentType = "application/vnd.kubernetes.protobuf"
		cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	}
	cs, err := versioned.NewForConfig(cfg)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	widgets := cs.BenchV1().Widgets(*namespace)
	create := func(name string) error {
		_, err := widgets.Create(ctx, &benchv1.Widget{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: benchv1.WidgetSpec{Replicas: 1}}, metav1.CreateOptions{})
		return err
	}
	for i := 0; i < 10; i++ {
		if err := create(fmt.Sprintf("%s-warm-%d", *prefix, i)); err != nil {
			fail(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	start := time.Now()
	for w := 0; w < *c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(*n) {
					return
				}
				if err := create(fmt.Sprintf("%s-%06d", *prefix, i)); err != nil {
					once.Do(func() { firstErr = err })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		fail(firstErr)
	}
	_ = json.NewEncoder(os.Stdout).Encode(map[string]float64{"seconds": time.Since(start).Seconds()})
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "benchload:", err)
	os.Exit(1)
}
`

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
	out, err := command(b.ctx, p.dir, nil, filepath.Join(p.dir, "bin", "benchload"), "-kubeconfig", t.kubeconfig,
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
