// Package runlocal is apiserver-boot run local: it generates and builds the
// project, supervises its apiserver and controller-manager on this machine
// (starting them, waiting until the apiserver is ready, stopping them on
// Ctrl-C), holds the project's run lock meanwhile, and with --watch reloads
// them on a change of the types or hooks.
package runlocal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/codegen"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	ownkubeconfig "github.com/apiserver-boot/apiserver-boot/internal/shared/kubeconfig"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/runlock"
)

// Options are run local's settings, its flags.
type Options struct {
	SecurePort  int
	EtcdServers string
	// DatastoreEndpoint stores in SQL through kine instead of etcd.
	DatastoreEndpoint string
	// DatastoreEndpointFile holds the endpoint (given, or written by run
	// local into the state folder): the apiserver reads it from there, so
	// that the URL's password is in no command line of the apiserver.
	DatastoreEndpointFile string
	Kubeconfig            string
	ControllerManager     bool
	// ControllerManagerAddress serves its /healthz, /readyz and /metrics.
	ControllerManagerAddress string
	Generate                 bool
	// Watch regenerates, rebuilds and restarts on changes under pkg/apis
	// (and config/crd, where the kinds' CRD manifests are).
	Watch   bool
	Timeout time.Duration
	// AuditPolicy and AuditLog turn on the apiserver's audit log.
	AuditPolicy, AuditLog string
}

// Validate checks the options (run local's flags, named as such) before
// anything is read or started.
func (o *Options) Validate() error {
	if err := checkPort("--secure-port", o.SecurePort); err != nil {
		return err
	}
	if o.ControllerManager && o.ControllerManagerAddress != "" {
		_, port, err := net.SplitHostPort(o.ControllerManagerAddress)
		if err != nil {
			return fmt.Errorf("--controller-manager-address %q is not valid: want host:port, such as 127.0.0.1:9440 (empty turns the endpoints off)", o.ControllerManagerAddress)
		}
		n, err := strconv.Atoi(port)
		if err != nil {
			return fmt.Errorf("--controller-manager-address %q is not valid: the port %q is not a number; want host:port, such as 127.0.0.1:9440", o.ControllerManagerAddress, port)
		}
		if err := checkPort("--controller-manager-address "+o.ControllerManagerAddress+": port", n); err != nil {
			return err
		}
	}
	if o.Timeout <= 0 {
		return fmt.Errorf("--timeout %s is not valid: want a positive duration, such as 5m", o.Timeout)
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

// Run is run local of the project at root (p and api as the command read
// them), on con, until ctx ends (Ctrl-C: nil) or a server exits (an
// error; with o.Watch a change starts them again). One runs per project:
// another is refused at once, naming this one. The command has checked o
// (Validate); what only the machine tells (a taken port, a kubeconfig of
// another cluster, the embedded etcd held) is refused before anything is
// built.
func Run(ctx context.Context, con *progress.Console, root string, p *project.Project, api *model.API, opts Options) error {
	o := &opts
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
	if o.Generate {
		if _, err := codegen.WithProgress(con, root, generators.GenerateOptions{Project: p, API: api}); err != nil {
			return err
		}
	}
	if _, err := buildBinaries(ctx, con, root, o); err != nil {
		return err
	}

	_ = os.Remove(kubeconfig)
	s := &localServers{o: o, root: root, kubeconfig: kubeconfig, con: con, out: out, info: info, logs: &prefixedOutput{w: out}, args: o.apiserverArgs(kubeconfig)}
	defer s.stop()
	if _, err := s.start(ctx); err != nil {
		return err
	}
	wd, _ := os.Getwd()
	rel, _ := filepath.Rel(wd, kubeconfig)
	fmt.Fprintf(out, "Ready. Try:\n  kubectl --kubeconfig %s %s\n", rel, readyExample(p))
	if o.ControllerManager {
		for _, line := range notRunLocally(p) {
			fmt.Fprintln(out, line)
		}
	}
	fmt.Fprintln(info, "Ctrl-C stops everything.")
	if o.Watch {
		return o.watchAndReload(ctx, s)
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(info, "Stopping...")
		return nil
	case c := <-s.exited:
		return fmt.Errorf("%s exited: %v", c.name, c.Err())
	}
}

// preflight refuses, before anything is generated, built or started, what
// would fail later: a taken port, a kubeconfig this project did not write,
// a missing audit policy, an embedded etcd held by another process. It
// returns the kubeconfig's path.
func (o *Options) preflight(root string, p *project.Project) (string, error) {
	if l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.SecurePort))); err != nil {
		return "", fmt.Errorf("port %d on 127.0.0.1 is taken: choose another with --secure-port", o.SecurePort)
	} else {
		l.Close()
	}
	if o.ControllerManager && o.ControllerManagerAddress != "" {
		if l, err := net.Listen("tcp", o.ControllerManagerAddress); err != nil {
			return "", fmt.Errorf("--controller-manager-address %s cannot be listened on (%v): choose another", o.ControllerManagerAddress, err)
		} else {
			l.Close()
		}
	}
	kubeconfig := o.Kubeconfig
	if !filepath.IsAbs(kubeconfig) {
		kubeconfig = filepath.Join(root, kubeconfig)
	}
	// The apiserver writes the kubeconfig anew once it serves. Never remove a
	// kubeconfig this project did not write (say, ~/.kube/config).
	if err := ownkubeconfig.Replaceable("--kubeconfig", kubeconfig, filepath.Base(p.Module)); err != nil {
		return "", err
	}
	if o.AuditPolicy != "" {
		policy := o.AuditPolicy
		if !filepath.IsAbs(policy) {
			policy = filepath.Join(root, policy)
		}
		if _, err := os.Stat(policy); err != nil {
			return "", fmt.Errorf("--audit-policy-file: %w", err)
		}
	}
	if o.DatastoreEndpoint != "" {
		if err := datastore.Validate(o.DatastoreEndpoint); err != nil {
			return "", err
		}
		if o.EtcdServers != "" {
			return "", datastore.ErrBothStores(o.DatastoreEndpoint)
		}
	} else if o.EtcdServers == "" {
		if err := embeddedEtcdFree(root); err != nil {
			return "", err
		}
	}
	return kubeconfig, nil
}

// apiserverArgs are the apiserver's flags that run local's flags set.
func (o *Options) apiserverArgs(kubeconfig string) []string {
	args := []string{"--secure-port", strconv.Itoa(o.SecurePort), "--write-kubeconfig", kubeconfig}
	if o.EtcdServers != "" {
		args = append(args, "--etcd-servers", o.EtcdServers)
	}
	if o.DatastoreEndpointFile != "" {
		args = append(args, "--datastore-endpoint-file", o.DatastoreEndpointFile)
	}
	if o.AuditPolicy != "" {
		args = append(args, "--audit-policy-file", o.AuditPolicy)
	}
	if o.AuditLog != "" {
		args = append(args, "--audit-log-path", o.AuditLog)
	}
	return args
}

// readDatastoreFile reads --datastore-endpoint-file, for the checks and the
// record; the apiserver reads the same file.
func (o *Options) readDatastoreFile() error {
	if o.DatastoreEndpointFile == "" {
		return nil
	}
	if o.DatastoreEndpoint != "" {
		return errors.New("--datastore-endpoint and --datastore-endpoint-file both given: give the URL one way (the file keeps its password out of every command line)")
	}
	b, err := os.ReadFile(o.DatastoreEndpointFile)
	if err != nil {
		return fmt.Errorf("--datastore-endpoint-file: %w", err)
	}
	if o.DatastoreEndpoint = strings.TrimSpace(string(b)); o.DatastoreEndpoint == "" {
		return fmt.Errorf("--datastore-endpoint-file %s is empty: want one line, %s", o.DatastoreEndpointFile, datastore.Forms)
	}
	abs, err := filepath.Abs(o.DatastoreEndpointFile)
	o.DatastoreEndpointFile = abs
	return err
}

// writeDatastoreFile writes a --datastore-endpoint given on the command
// line into the state folder (0600) for the apiserver to read, so that the
// URL is not in the apiserver's command line too.
func (o *Options) writeDatastoreFile(root string) error {
	if o.DatastoreEndpoint == "" || o.DatastoreEndpointFile != "" {
		return nil
	}
	dir := filepath.Join(root, private.StateDir)
	if err := private.Dir(dir); err != nil {
		return err
	}
	file := filepath.Join(dir, "datastore-endpoint")
	if err := files.WriteAtomic(file, []byte(o.DatastoreEndpoint+"\n"), 0o600); err != nil {
		return err
	}
	o.DatastoreEndpointFile = file
	return nil
}

// record is what this run local says about itself to another one.
func (o *Options) record() runlock.Record {
	r := runlock.Record{PID: os.Getpid(), APIServer: fmt.Sprintf("https://127.0.0.1:%d", o.SecurePort), Etcd: "embedded",
		Kubeconfig: o.Kubeconfig, Watch: o.Watch, Started: time.Now()}
	if !filepath.IsAbs(r.Kubeconfig) && !strings.HasPrefix(r.Kubeconfig, ".") {
		r.Kubeconfig = "./" + r.Kubeconfig
	}
	if o.ControllerManager {
		r.ControllerManager = o.ControllerManagerAddress
	}
	if o.EtcdServers != "" {
		r.Etcd = o.EtcdServers
	}
	if o.DatastoreEndpoint != "" {
		r.Etcd = datastore.Redact(o.DatastoreEndpoint)
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
	stop := fmt.Sprintf("`fuser %s` names it", files.RelToWd(db))
	if pid > 0 {
		stop = fmt.Sprintf("kill %d", pid)
	}
	return fmt.Errorf("the embedded etcd's data %s is in use by %s, an apiserver left running?: stop it (%s), or run on another etcd with --etcd-servers", files.RelToWd(dir), who, stop)
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
