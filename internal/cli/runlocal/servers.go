package runlocal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/gobuild"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// localServers are the apiserver and controller-manager of run local.
type localServers struct {
	o                *Options
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
	if err := waitReady(ctx, s.kubeconfig, apiserver, s.o.Timeout); err != nil {
		return 0, err
	}
	ready := time.Since(started)
	fmt.Fprintf(s.info, "apiserver ready in %s\n", ready.Round(time.Millisecond))
	if s.o.ControllerManager {
		// No Leases on a standalone apiserver: leader election is for clusters.
		// The standalone apiserver serves no built-in kinds: the
		// controller-manager leaves their controllers out (notRunLocally); a
		// slow sync must not stop the others either.
		cmArgs := []string{"--kubeconfig", s.kubeconfig, "--leader-elect=false", "--bind-address", s.o.ControllerManagerAddress, "--cache-sync-timeout=0"}
		cm, err := startChild(s.root, "controller-manager", filepath.Join(bin, "controller-manager"), cmArgs, s.logs)
		if err != nil {
			return 0, err
		}
		s.children = append(s.children, cm)
	}
	exited := make(chan *child, len(s.children))
	for _, c := range s.children {
		go func() { <-c.Done(); exited <- c }()
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
func buildBinaries(ctx context.Context, con *progress.Console, root string, o *Options) (time.Duration, error) {
	return buildBinariesInto(ctx, con, root, "bin", o)
}

// buildBinariesInto is buildBinaries writing into dir (relative to root).
func buildBinariesInto(ctx context.Context, con *progress.Console, root, dir string, o *Options) (time.Duration, error) {
	pkgs := []string{"./cmd/apiserver"}
	step := "Building bin/apiserver"
	if o.ControllerManager {
		pkgs = append(pkgs, "./cmd/controller-manager")
		step = "Building bin/apiserver and bin/controller-manager"
	}
	fmt.Fprintln(con.Info(), step+"...")
	d, n, err := gobuild.Run(ctx, con, step, root, nil, devBuildArgs(goflags(ctx, root), dir, o.buildTags(), pkgs)...)
	if err != nil {
		return 0, fmt.Errorf("building the project: %w", err)
	}
	fmt.Fprintf(con.Info(), "Built in %s (%s).\n", d.Round(time.Millisecond), gobuild.Compiled(n))
	return d, nil
}

// buildTags are the build tags run local adds to GOFLAGS' own:
// datastore.NoKineTag, unless it stores in SQL. Nothing else changes: the apiserver serves the
// same; one built so refuses --datastore-endpoint, by name.
func (o *Options) buildTags() []string {
	if o.DatastoreEndpoint != "" {
		return nil
	}
	return []string{datastore.NoKineTag}
}

// devBuildArgs are go build's arguments for run local's binaries into dir,
// with tags added to GOFLAGS' own -tags (an argument would replace them):
// linked without DWARF (-ldflags=-w), which a rebuild after a one-field
// edit spends about a third of its link on, and which only a debugger
// reads: stack traces, panics and profiles use the symbol and line tables,
// which stay. Not for build container (its own go build). GOFLAGS with its
// own -ldflags is left to choose (a -ldflags argument would replace it).
func devBuildArgs(goflags, dir string, tags, pkgs []string) []string {
	args := []string{"-o", dir + "/"}
	if !strings.Contains(goflags, "-ldflags") {
		args = append(args, "-ldflags=-w")
	}
	if len(tags) > 0 {
		args = append(args, "-tags="+strings.Join(append(goflagsTags(goflags), tags...), ","))
	}
	return append(args, pkgs...)
}

// goflagsTags are the build tags GOFLAGS gives (-tags=a,b or --tags=a,b;
// GOFLAGS separates flags by spaces, and an entry may be quoted whole).
func goflagsTags(goflags string) []string {
	var tags []string
	for _, f := range strings.Fields(goflags) {
		f = strings.Trim(f, `"'`)
		name, value, _ := strings.Cut(strings.TrimPrefix(f, "-"), "=")
		if name == "-tags" || name == "tags" {
			tags = nil // the last one counts, as in go build
			for _, t := range strings.Split(value, ",") {
				if t = strings.TrimSpace(t); t != "" {
					tags = append(tags, t)
				}
			}
		}
	}
	return tags
}

// goflags is the GOFLAGS go build will use in root: the environment's, or
// what `go env -w GOFLAGS=…` stored (go env prints either).
func goflags(ctx context.Context, root string) string {
	cmd := exec.CommandContext(ctx, "go", "env", "GOFLAGS")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return os.Getenv("GOFLAGS")
	}
	return strings.TrimSpace(string(out))
}

// readyPoll is how often waitReady asks the starting apiserver: every
// poll not answered yet is time the edit loop waits for nothing.
const readyPoll = 50 * time.Millisecond

// waitReady waits for the kubeconfig the apiserver writes, then for /readyz
// through it. Its connection is closed once answered: an idle connection
// left open would hold up the apiserver's stop for a second (HTTP/2's
// GOAWAY waits that long for a client to hang up).
func waitReady(ctx context.Context, kubeconfig string, c *child, timeout time.Duration) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	var client *http.Client
	var host string
	defer func() {
		if client != nil {
			utilnet.CloseIdleConnectionsFor(client.Transport)
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.Done():
			if last := c.lastLog(); last != "" {
				status := "exit status 0"
				if c.Err() != nil {
					status = c.Err().Error()
				}
				return fmt.Errorf("apiserver exited before it was ready (%s); its last words: %s", status, last)
			}
			return fmt.Errorf("apiserver exited before it was ready: %v", c.Err())
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
			utilnet.CloseIdleConnectionsFor(client.Transport)
			client = nil
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return nil
		}
	}
}

// child is a server of run local: a process started in its own process
// group (proc.Start), so that stopping it also stops anything it started,
// and the terminal's Ctrl-C reaches only us.
type child struct {
	name string
	*proc.Process
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
	p, err := proc.Start(cmd, syscall.SIGTERM)
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &child{name: name, Process: p, logged: logged, last: last}
	// Wait has copied the last output: end the prefixing goroutine (run
	// local --watch starts children again and again).
	go func() { <-c.Done(); w.Close() }()
	return c, nil
}

// stopAll stops every child, in reverse start order: SIGTERM to its
// process group, SIGKILL to it after proc.StopGrace (15 seconds).
func stopAll(children []*child) {
	for i := len(children) - 1; i >= 0; i-- {
		_ = children[i].Stop(syscall.SIGTERM, proc.StopGrace)
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
