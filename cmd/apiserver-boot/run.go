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
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	ownkubeconfig "github.com/apiserver-boot/apiserver-boot/internal/shared/kubeconfig"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/runlock"
)

func newRunCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the project",
		Example: `  apiserver-boot run local
  apiserver-boot run in-cluster --image registry.example.com/crontab:v0.1.0`,
	}
	cmd.AddCommand(newRunLocalCommand(), newRunInClusterCommand())
	return cmd
}

type runLocalOptions struct {
	securePort  int
	etcdServers string
	// datastoreEndpoint stores in SQL through kine instead of etcd.
	datastoreEndpoint string
	// datastoreEndpointFile holds the endpoint (given, or written by run
	// local into the state folder): the apiserver reads it from there, so
	// that the URL's password is in no command line of the apiserver.
	datastoreEndpointFile string
	kubeconfig            string
	controllerManager     bool
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
(embedded etcd under .apiserver-boot/ unless --etcd-servers is given; with
--datastore-endpoint no etcd: SQL through kine), waits until
it is ready, writes a kubeconfig for it, then starts the controller-manager. Logs
are prefixed per process. Ctrl-C stops everything.

With --watch it then watches pkg/apis (the types and their hooks): after a
change (saves within 200ms count as one), it regenerates and rebuilds while the
running apiserver keeps serving. If that fails, the error is printed and the
running apiserver stays; otherwise the apiserver and controller-manager are
restarted on the same etcd data (the embedded etcd's data directory under
.apiserver-boot/, or --etcd-servers) and the same kubeconfig, and
"Reloaded in <time>" is printed.

One run local runs per project: another one is refused at once, naming the
running one (its pid, apiserver and kubeconfig), and changes nothing. Builds
show their progress (packages compiled, time); --quiet keeps the Ready lines,
results, warnings, errors and the servers' logs.`,
		Example: `  apiserver-boot run local
  kubectl --kubeconfig kubeconfig get crontabs
  apiserver-boot run local --secure-port 10443 --etcd-servers http://127.0.0.1:2379
  apiserver-boot run local --datastore-endpoint sqlite://.apiserver-boot/state.db
  apiserver-boot run local --watch`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.securePort, "secure-port", o.securePort, "Loopback HTTPS port of the apiserver")
	f.StringVar(&o.etcdServers, "etcd-servers", "", "External etcd client URLs (comma separated); empty runs an embedded etcd")
	f.StringVar(&o.datastoreEndpoint, "datastore-endpoint", "", "Store in SQL through kine instead of etcd: "+datastore.Forms+" (a relative PATH is in the project root); no etcd runs")
	f.StringVar(&o.datastoreEndpointFile, "datastore-endpoint-file", "", "A file holding the --datastore-endpoint URL, which keeps its password out of every command line")
	f.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "Where to write the kubeconfig for kubectl, relative to the project root (a kubeconfig of another cluster there is refused, not overwritten)")
	f.BoolVar(&o.controllerManager, "controller-manager", o.controllerManager, "Also run the controller-manager")
	f.StringVar(&o.controllerManagerAddress, "controller-manager-address", o.controllerManagerAddress, "Address (host:port) of the controller-manager's /healthz, /readyz and /metrics; empty turns them off")
	f.BoolVar(&o.generate, "generate", o.generate, "Run `apiserver-boot generate` before building")
	f.BoolVar(&o.watch, "watch", false, "Watch pkg/apis (types and hooks): on a change, regenerate and rebuild while the running apiserver keeps serving, then restart it and the controller-manager on the same etcd data and kubeconfig; a failed generate or build keeps the running one")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the apiserver to become ready")
	f.StringVar(&o.auditPolicy, "audit-policy-file", "", "Audit policy of the apiserver (audit.k8s.io/v1 Policy), relative to the project root; with --audit-log-path, requests are logged as it says")
	f.StringVar(&o.auditLog, "audit-log-path", "", "Where the apiserver writes its audit log (JSON lines), relative to the project root; - for its standard output")
	return cmd
}

// validate checks the flags before anything is read or started.
func (o *runLocalOptions) validate() error {
	if err := checkPort("--secure-port", o.securePort); err != nil {
		return err
	}
	if o.controllerManager && o.controllerManagerAddress != "" {
		_, port, err := net.SplitHostPort(o.controllerManagerAddress)
		if err != nil {
			return fmt.Errorf("--controller-manager-address %q is not valid: want host:port, such as 127.0.0.1:9440 (empty turns the endpoints off)", o.controllerManagerAddress)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return fmt.Errorf("--controller-manager-address %q is not valid: the port %q is not a number; want host:port, such as 127.0.0.1:9440", o.controllerManagerAddress, port)
		}
		if err := checkPort("--controller-manager-address "+o.controllerManagerAddress+": port", n); err != nil {
			return err
		}
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout %s is not valid: want a positive duration, such as 5m", o.timeout)
	}
	return nil
}

// checkPort refuses a port number outside 1-65535.
func checkPort(flag string, port int) error {
	if port < 1 || port > 65535 {
		return fmt.Errorf("%s %d is not valid: want a port from 1 to 65535", flag, port)
	}
	return nil
}

func (o *runLocalOptions) run(cmd *cobra.Command) error {
	if err := o.validate(); err != nil {
		return err
	}
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	con := newConsole(cmd)
	out, info := io.Writer(con), con.Info()

	if err := o.readDatastoreFile(); err != nil {
		return err
	}
	// One run local per project, before anything is touched (bin/, the
	// kubeconfig, etcd's data): another one is refused, naming this one.
	lock, err := runlock.Acquire(filepath.Join(root, private.StateDir), o.record())
	if err != nil {
		return err
	}
	defer lock.Release()
	kubeconfig, err := o.preflight(root, p)
	if err != nil {
		return err
	}
	if err := o.writeDatastoreFile(root); err != nil {
		return err
	}
	if o.generate {
		if _, err := generateWithProgress(con, root, generators.GenerateOptions{Project: p, API: api}); err != nil {
			return err
		}
	}
	if _, err := buildBinaries(ctx, con, root, o.controllerManager); err != nil {
		return err
	}

	_ = os.Remove(kubeconfig)
	s := &localServers{o: o, root: root, kubeconfig: kubeconfig, con: con, out: out, info: info, logs: &prefixedOutput{w: out}, args: o.apiserverArgs(kubeconfig)}
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
	fmt.Fprintln(info, "Ctrl-C stops everything.")
	if o.watch {
		return o.watchAndReload(ctx, s)
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(info, "Stopping...")
		return nil
	case c := <-s.exited:
		return fmt.Errorf("%s exited: %v", c.name, c.err)
	}
}

// preflight refuses, before anything is generated, built or started, what
// would fail later: a taken port, a kubeconfig this project did not write,
// a missing audit policy, an embedded etcd held by another process. It
// returns the kubeconfig's path.
func (o *runLocalOptions) preflight(root string, p *project.Project) (string, error) {
	if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.securePort))); err != nil {
		return "", fmt.Errorf("port %d on 127.0.0.1 is taken: choose another with --secure-port", o.securePort)
	} else {
		l.Close()
	}
	if o.controllerManager && o.controllerManagerAddress != "" {
		if l, err := net.Listen("tcp", o.controllerManagerAddress); err != nil {
			return "", fmt.Errorf("--controller-manager-address %s cannot be listened on (%v): choose another", o.controllerManagerAddress, err)
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
		return "", err
	}
	if o.auditPolicy != "" {
		policy := o.auditPolicy
		if !filepath.IsAbs(policy) {
			policy = filepath.Join(root, policy)
		}
		if _, err := os.Stat(policy); err != nil {
			return "", fmt.Errorf("--audit-policy-file: %w", err)
		}
	}
	if o.datastoreEndpoint != "" {
		if err := datastore.Validate(o.datastoreEndpoint); err != nil {
			return "", err
		}
		if o.etcdServers != "" {
			return "", datastore.ErrBothStores(o.datastoreEndpoint)
		}
	} else if o.etcdServers == "" {
		if err := embeddedEtcdFree(root); err != nil {
			return "", err
		}
	}
	return kubeconfig, nil
}

// apiserverArgs are the apiserver's flags that run local's flags set.
func (o *runLocalOptions) apiserverArgs(kubeconfig string) []string {
	args := []string{"--secure-port", strconv.Itoa(o.securePort), "--write-kubeconfig", kubeconfig}
	if o.etcdServers != "" {
		args = append(args, "--etcd-servers", o.etcdServers)
	}
	if o.datastoreEndpointFile != "" {
		args = append(args, "--datastore-endpoint-file", o.datastoreEndpointFile)
	}
	if o.auditPolicy != "" {
		args = append(args, "--audit-policy-file", o.auditPolicy)
	}
	if o.auditLog != "" {
		args = append(args, "--audit-log-path", o.auditLog)
	}
	return args
}

// readDatastoreFile reads --datastore-endpoint-file, for the checks and the
// record; the apiserver reads the same file.
func (o *runLocalOptions) readDatastoreFile() error {
	if o.datastoreEndpointFile == "" {
		return nil
	}
	if o.datastoreEndpoint != "" {
		return errors.New("--datastore-endpoint and --datastore-endpoint-file both given: give the URL one way (the file keeps its password out of every command line)")
	}
	b, err := os.ReadFile(o.datastoreEndpointFile)
	if err != nil {
		return fmt.Errorf("--datastore-endpoint-file: %w", err)
	}
	if o.datastoreEndpoint = strings.TrimSpace(string(b)); o.datastoreEndpoint == "" {
		return fmt.Errorf("--datastore-endpoint-file %s is empty: want one line, %s", o.datastoreEndpointFile, datastore.Forms)
	}
	abs, err := filepath.Abs(o.datastoreEndpointFile)
	o.datastoreEndpointFile = abs
	return err
}

// writeDatastoreFile writes a --datastore-endpoint given on the command
// line into the state folder (0600) for the apiserver to read, so that the
// URL is not in the apiserver's command line too.
func (o *runLocalOptions) writeDatastoreFile(root string) error {
	if o.datastoreEndpoint == "" || o.datastoreEndpointFile != "" {
		return nil
	}
	dir := filepath.Join(root, private.StateDir)
	if err := private.Dir(dir); err != nil {
		return err
	}
	file := filepath.Join(dir, "datastore-endpoint")
	if err := files.WriteAtomic(file, []byte(o.datastoreEndpoint+"\n"), 0o600); err != nil {
		return err
	}
	o.datastoreEndpointFile = file
	return nil
}

// record is what this run local says about itself to another one.
func (o *runLocalOptions) record() runlock.Record {
	r := runlock.Record{PID: os.Getpid(), APIServer: fmt.Sprintf("https://127.0.0.1:%d", o.securePort), Etcd: "embedded",
		Kubeconfig: o.kubeconfig, Watch: o.watch, Started: time.Now()}
	if !filepath.IsAbs(r.Kubeconfig) && !strings.HasPrefix(r.Kubeconfig, ".") {
		r.Kubeconfig = "./" + r.Kubeconfig
	}
	if o.controllerManager {
		r.ControllerManager = o.controllerManagerAddress
	}
	if o.etcdServers != "" {
		r.Etcd = o.etcdServers
	}
	if o.datastoreEndpoint != "" {
		r.Etcd = datastore.Redact(o.datastoreEndpoint)
	}
	return r
}

// embeddedEtcdFree refuses to start when another process holds the embedded
// etcd's database (an apiserver left running, say): etcd would wait for it
// for ever, and the apiserver would never be ready.
func embeddedEtcdFree(root string) error {
	dir := filepath.Join(root, private.StateDir, "etcd")
	db := datastore.EtcdDB(dir)
	who, pid, held := runlock.HeldBy(db)
	if !held {
		return nil // the apiserver says what is wrong, if anything
	}
	stop := fmt.Sprintf("`fuser %s` names it", relToWd(db))
	if pid > 0 {
		stop = fmt.Sprintf("kill %d", pid)
	}
	return fmt.Errorf("the embedded etcd's data %s is in use by %s, an apiserver left running?: stop it (%s), or run on another etcd with --etcd-servers", relToWd(dir), who, stop)
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
	con              *progress.Console
	// out is for errors and results, info for the rest (nothing with --quiet).
	out, info io.Writer
	logs      *prefixedOutput
	args      []string // the apiserver's
	children  []*child
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
	fmt.Fprintf(s.info, "apiserver ready in %s\n", ready.Round(time.Millisecond))
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
func buildBinaries(ctx context.Context, con *progress.Console, root string, controllerManager bool) (time.Duration, error) {
	return buildBinariesInto(ctx, con, root, "bin", controllerManager)
}

// buildBinariesInto is buildBinaries writing into dir (relative to root).
func buildBinariesInto(ctx context.Context, con *progress.Console, root, dir string, controllerManager bool) (time.Duration, error) {
	pkgs := []string{"./cmd/apiserver"}
	step := "Building bin/apiserver"
	if controllerManager {
		pkgs = append(pkgs, "./cmd/controller-manager")
		step = "Building bin/apiserver and bin/controller-manager"
	}
	fmt.Fprintln(con.Info(), step+"...")
	d, n, err := goBuild(ctx, con, step, root, nil, append([]string{"-o", dir + "/"}, pkgs...)...)
	if err != nil {
		return 0, fmt.Errorf("building the project: %w", err)
	}
	fmt.Fprintf(con.Info(), "Built in %s (%s).\n", d.Round(time.Millisecond), compiled(n))
	return d, nil
}

// goBuild runs go build -v with args in root, its progress shown as step,
// and returns how long it took and how many packages it compiled.
func goBuild(ctx context.Context, con *progress.Console, step, root string, env []string, args ...string) (time.Duration, int, error) {
	task := con.Start(step, "packages compiled")
	build := exec.Command("go", append([]string{"build", "-v"}, args...)...)
	build.Dir, build.Env = root, env
	w := task.GoBuildOutput()
	build.Stdout, build.Stderr = con, w
	err := runProcess(ctx, "go build", build)
	w.Close()
	d := task.Done()
	return d, task.Count(), err
}

// compiled says how many packages a build compiled.
func compiled(n int) string {
	if n == 1 {
		return "1 package compiled"
	}
	return fmt.Sprintf("%d packages compiled", n)
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
			if last := c.lastLog(); last != "" {
				status := "exit status 0"
				if c.err != nil {
					status = c.err.Error()
				}
				return fmt.Errorf("apiserver exited before it was ready (%s); its last words: %s", status, last)
			}
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
	// logged is closed once its output is all printed; last is its last line.
	logged <-chan struct{}
	last   func() string
}

// lastLog is the last line the child printed, once it has exited.
func (c *child) lastLog() string {
	if c.logged == nil {
		return ""
	}
	select {
	case <-c.logged:
	case <-time.After(time.Second):
	}
	return c.last()
}

func startChild(dir, name, bin string, args []string, logs *prefixedOutput) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	w, logged, last := logs.writer(name)
	cmd.Stdout, cmd.Stderr = w, w
	c, err := startProcess(name, cmd)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c.logged, c.last = logged, last
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

// writer is the output of the process name; logged is closed once the
// writer is closed and all is printed; last returns the last line printed.
func (p *prefixedOutput) writer(name string) (w *io.PipeWriter, logged <-chan struct{}, last func() string) {
	r, w := io.Pipe()
	done := make(chan struct{})
	var lastLine string
	go func() {
		defer close(done)
		s := bufio.NewScanner(r)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			p.mu.Lock()
			fmt.Fprintf(p.w, "[%s] %s\n", name, s.Text())
			if t := strings.TrimSpace(s.Text()); t != "" {
				lastLine = t
			}
			p.mu.Unlock()
		}
		if err := s.Err(); err != nil && !errors.Is(err, io.ErrClosedPipe) {
			_, _ = io.Copy(io.Discard, r)
		}
	}()
	return w, done, func() string {
		p.mu.Lock()
		defer p.mu.Unlock()
		return lastLine
	}
}
