package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	ownkubeconfig "github.com/apiserver-boot/apiserver-boot/internal/kubeconfig"
	"github.com/apiserver-boot/apiserver-boot/internal/project"
)

func newRunCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the project",
	}
	cmd.AddCommand(newRunLocalCommand(), newRunInClusterCommand())
	return cmd
}

type runLocalOptions struct {
	securePort        int
	etcdServers       string
	kubeconfig        string
	controllerManager bool
	// controllerManagerAddress serves its /healthz, /readyz and /metrics.
	controllerManagerAddress string
	generate                 bool
	// watch regenerates, rebuilds and restarts on changes under pkg/apis.
	watch   bool
	timeout time.Duration
	// auditPolicy and auditLog turn on the apiserver's audit log.
	auditPolicy, auditLog string
}

func newRunLocalCommand() *cobra.Command {
	o := &runLocalOptions{securePort: 9443, kubeconfig: "kubeconfig", controllerManager: true, controllerManagerAddress: "127.0.0.1:9440", generate: true, timeout: 5 * time.Minute}
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Generate, build and run the apiserver and controller-manager on this machine",
		Long: `local generates code, builds bin/apiserver and bin/controller-manager (only
bin/apiserver with --controller-manager=false), starts the apiserver on 127.0.0.1
(embedded etcd under .apiserver-boot/ unless --etcd-servers is given), waits until
it is ready, writes a kubeconfig for it, then starts the controller-manager. Logs
are prefixed per process. Ctrl-C stops everything.

With --watch it then watches pkg/apis (the types and their hooks): after a
change (saves within 200ms count as one), it regenerates and rebuilds while the
running apiserver keeps serving. If that fails, the error is printed and the
running apiserver stays; otherwise the apiserver and controller-manager are
restarted on the same etcd data (the embedded etcd's data directory under
.apiserver-boot/, or --etcd-servers) and the same kubeconfig, and
"Reloaded in <time>" is printed.`,
		Example: `  apiserver-boot run local
  kubectl --kubeconfig kubeconfig get crontabs
  apiserver-boot run local --secure-port 10443 --etcd-servers http://127.0.0.1:2379
  apiserver-boot run local --watch`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.securePort, "secure-port", o.securePort, "Loopback HTTPS port of the apiserver")
	f.StringVar(&o.etcdServers, "etcd-servers", "", "External etcd client URLs (comma separated); empty runs an embedded etcd")
	f.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "Where to write the kubeconfig for kubectl, relative to the project root (a kubeconfig of another cluster there is refused, not overwritten)")
	f.BoolVar(&o.controllerManager, "controller-manager", o.controllerManager, "Also run the controller-manager")
	f.StringVar(&o.controllerManagerAddress, "controller-manager-address", o.controllerManagerAddress, "Address of the controller-manager's /healthz, /readyz and /metrics")
	f.BoolVar(&o.generate, "generate", o.generate, "Run `apiserver-boot generate` before building")
	f.BoolVar(&o.watch, "watch", false, "Watch pkg/apis (types and hooks): on a change, regenerate and rebuild while the running apiserver keeps serving, then restart it and the controller-manager on the same etcd data and kubeconfig; a failed generate or build keeps the running one")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the apiserver to become ready")
	f.StringVar(&o.auditPolicy, "audit-policy-file", "", "Audit policy of the apiserver (audit.k8s.io/v1 Policy), relative to the project root; with --audit-log-path, requests are logged as it says")
	f.StringVar(&o.auditLog, "audit-log-path", "", "Where the apiserver writes its audit log (JSON lines), relative to the project root; - for its standard output")
	return cmd
}

func (o *runLocalOptions) run(cmd *cobra.Command) error {
	root, p, err := loadProject()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := cmd.OutOrStdout()

	if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.securePort))); err != nil {
		return fmt.Errorf("port %d on 127.0.0.1 is taken: choose another with --secure-port", o.securePort)
	} else {
		l.Close()
	}
	if o.controllerManager {
		if l, err := net.Listen("tcp", o.controllerManagerAddress); err != nil {
			return fmt.Errorf("%s is taken: choose another with --controller-manager-address", o.controllerManagerAddress)
		} else {
			l.Close()
		}
	}
	kubeconfig := o.kubeconfig
	if !filepath.IsAbs(kubeconfig) {
		kubeconfig = filepath.Join(root, kubeconfig)
	}
	// The apiserver writes the kubeconfig anew once it serves. Never remove a
	// kubeconfig this project did not write (say, ~/.kube/config).
	if err := ownkubeconfig.Replaceable("--kubeconfig", kubeconfig, filepath.Base(p.Module)); err != nil {
		return err
	}
	if o.auditPolicy != "" {
		policy := o.auditPolicy
		if !filepath.IsAbs(policy) {
			policy = filepath.Join(root, policy)
		}
		if _, err := os.Stat(policy); err != nil {
			return fmt.Errorf("--audit-policy-file: %w", err)
		}
	}
	if o.generate {
		if err := generate(root, io.Discard, false); err != nil {
			return err
		}
	}
	if _, err := buildBinaries(ctx, root, o.controllerManager, out, cmd.ErrOrStderr()); err != nil {
		return err
	}

	_ = os.Remove(kubeconfig)
	args := []string{"--secure-port", strconv.Itoa(o.securePort), "--write-kubeconfig", kubeconfig}
	if o.etcdServers != "" {
		args = append(args, "--etcd-servers", o.etcdServers)
	}
	if o.auditPolicy != "" {
		args = append(args, "--audit-policy-file", o.auditPolicy)
	}
	if o.auditLog != "" {
		args = append(args, "--audit-log-path", o.auditLog)
	}
	s := &localServers{o: o, root: root, kubeconfig: kubeconfig, out: out, logs: &prefixedOutput{w: out}, args: args}
	defer s.stop()
	if _, err := s.start(ctx); err != nil {
		return err
	}
	rel, _ := filepath.Rel(mustGetwd(), kubeconfig)
	fmt.Fprintf(out, "Ready. Try:\n  kubectl --kubeconfig %s %s\n", rel, readyExample(p))
	if o.controllerManager {
		for _, line := range notRunLocally(p) {
			fmt.Fprintln(out, line)
		}
	}
	fmt.Fprintln(out, "Ctrl-C stops everything.")
	if o.watch {
		return o.watchAndReload(ctx, s, cmd.ErrOrStderr())
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(out, "Stopping...")
		return nil
	case c := <-s.exited:
		return fmt.Errorf("%s exited: %v", c.name, c.err)
	}
}

// readyExample is the kubectl command the ready banner suggests: a get of a
// kind the standalone apiserver serves (one of the project's, not a
// built-in kind that only has a controller here).
func readyExample(p *project.Project) string {
	for _, r := range p.Resources {
		if !r.External && r.Plural != "" {
			return "get " + r.Plural
		}
	}
	return "api-resources"
}

// notRunLocally says which controllers the controller-manager leaves out
// under run local: those of built-in kinds, which the standalone apiserver
// does not serve (it says so too, in the same words).
func notRunLocally(p *project.Project) []string {
	var out []string
	for _, r := range p.Resources {
		if !r.External || !r.Controller {
			continue
		}
		group, _, _ := project.BuiltinKind(r.Group, r.Version, r.Kind)
		out = append(out, project.NotServedStandalone(project.ControllerPackage(r.Kind), schema.GroupVersion{Group: group, Version: r.Version}.String(), r.Kind))
	}
	return out
}

// localServers are the apiserver and controller-manager of run local.
type localServers struct {
	o                *runLocalOptions
	root, kubeconfig string
	out              io.Writer
	logs             *prefixedOutput
	args             []string // the apiserver's
	children         []*child
	// exited receives the children of the last start that exit; nil when none run.
	exited chan *child
}

// start starts the apiserver of bin/, waits until it is ready, then starts
// the controller-manager. It returns how long the apiserver took to be ready.
func (s *localServers) start(ctx context.Context) (time.Duration, error) {
	return s.startFrom(ctx, filepath.Join(s.root, "bin"))
}

// startFrom is start with the binaries of bin.
func (s *localServers) startFrom(ctx context.Context, bin string) (time.Duration, error) {
	started := time.Now()
	apiserver, err := startChild(s.root, "apiserver", filepath.Join(bin, "apiserver"), s.args, s.logs)
	if err != nil {
		return 0, err
	}
	s.children = []*child{apiserver}
	if err := waitReady(ctx, s.kubeconfig, apiserver, s.o.timeout); err != nil {
		return 0, err
	}
	ready := time.Since(started)
	fmt.Fprintf(s.out, "apiserver ready in %s\n", ready.Round(time.Millisecond))
	if s.o.controllerManager {
		// No Leases on a standalone apiserver: leader election is for clusters.
		// The standalone apiserver serves no built-in kinds: the
		// controller-manager leaves their controllers out (notRunLocally); a
		// slow sync must not stop the others either.
		cmArgs := []string{"--kubeconfig", s.kubeconfig, "--leader-elect=false", "--bind-address", s.o.controllerManagerAddress, "--cache-sync-timeout=0"}
		cm, err := startChild(s.root, "controller-manager", filepath.Join(bin, "controller-manager"), cmArgs, s.logs)
		if err != nil {
			return 0, err
		}
		s.children = append(s.children, cm)
	}
	exited := make(chan *child, len(s.children))
	for _, c := range s.children {
		go func() { <-c.done; exited <- c }()
	}
	s.exited = exited
	return ready, nil
}

// stop stops every child, the controller-manager first.
func (s *localServers) stop() {
	stopAll(s.children)
	s.children, s.exited = nil, nil
}

// buildBinaries builds bin/apiserver and, when it runs, bin/controller-manager, in one go build.
func buildBinaries(ctx context.Context, root string, controllerManager bool, out, errOut io.Writer) (time.Duration, error) {
	return buildBinariesInto(ctx, root, "bin", controllerManager, out, errOut)
}

// buildBinariesInto is buildBinaries writing into dir (relative to root).
func buildBinariesInto(ctx context.Context, root, dir string, controllerManager bool, out, errOut io.Writer) (time.Duration, error) {
	start := time.Now()
	pkgs := []string{"./cmd/apiserver"}
	if controllerManager {
		pkgs = append(pkgs, "./cmd/controller-manager")
		fmt.Fprintln(out, "Building bin/apiserver and bin/controller-manager...")
	} else {
		fmt.Fprintln(out, "Building bin/apiserver...")
	}
	build := exec.Command("go", append([]string{"build", "-o", dir + "/"}, pkgs...)...)
	build.Dir, build.Stdout, build.Stderr = root, out, errOut
	if err := runProcess(ctx, "go build", build); err != nil {
		return 0, fmt.Errorf("building the project: %w", err)
	}
	d := time.Since(start)
	fmt.Fprintf(out, "Built in %s.\n", d.Round(time.Millisecond))
	return d, nil
}

func mustGetwd() string {
	wd, _ := os.Getwd()
	return wd
}

// waitReady waits for the kubeconfig the apiserver writes, then for /readyz through it.
func waitReady(ctx context.Context, kubeconfig string, c *child, timeout time.Duration) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var client *http.Client
	var host string
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.done:
			return fmt.Errorf("apiserver exited before it was ready: %v", c.err)
		case <-deadline:
			return fmt.Errorf("apiserver not ready after %s (--timeout)", timeout)
		case <-tick.C:
		}
		if client == nil {
			cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
			if err != nil {
				continue // not written yet
			}
			cfg.Timeout = 5 * time.Second
			if client, err = rest.HTTPClientFor(cfg); err != nil {
				return err
			}
			host = cfg.Host
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, host+"/readyz", nil)
		resp, err := client.Do(req)
		if err != nil {
			// A kubeconfig of an earlier start (run local --watch keeps it)
			// is read again until the new apiserver has rewritten it.
			client = nil
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
}

// child is a process started in its own process group, so that stopping it
// also stops anything it started, and the terminal's Ctrl-C reaches only us.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

func startChild(dir, name, bin string, args []string, logs *prefixedOutput) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	w := logs.writer(name)
	cmd.Stdout, cmd.Stderr = w, w
	c, err := startProcess(name, cmd)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	// Wait has copied the last output: end the prefixing goroutine (run
	// local --watch starts children again and again).
	go func() { <-c.done; w.Close() }()
	return c, nil
}

// stopAll sends SIGTERM to every child's process group, in reverse start
// order, and SIGKILL to any still running after 15 seconds.
func stopAll(children []*child) {
	for i := len(children) - 1; i >= 0; i-- {
		c := children[i]
		select {
		case <-c.done:
			continue
		default:
		}
		_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-c.done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
	}
}

// prefixedOutput interleaves child logs line by line, each with its process name.
type prefixedOutput struct {
	mu sync.Mutex
	w  io.Writer
}

func (p *prefixedOutput) writer(name string) *io.PipeWriter {
	r, w := io.Pipe()
	go func() {
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			p.mu.Lock()
			fmt.Fprintf(p.w, "[%s] %s\n", name, s.Text())
			p.mu.Unlock()
		}
		if err := s.Err(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
			_, _ = io.Copy(io.Discard, r)
		}
	}()
	return w
}
