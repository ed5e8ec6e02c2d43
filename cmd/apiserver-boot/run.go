package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/runlocal"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
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

func newRunLocalCommand() *cobra.Command {
	o := &runlocal.Options{SecurePort: 9443, Kubeconfig: "kubeconfig", ControllerManager: true, ControllerManagerAddress: "127.0.0.1:9440", Generate: true, Timeout: 5 * time.Minute}
	cmd := &cobra.Command{
		Use:   "local",
		Short: "Generate, build and run the apiserver and controller-manager on this machine",
		Long: `local generates code, builds bin/apiserver and bin/controller-manager (only
bin/apiserver with --controller-manager=false), starts the apiserver on 127.0.0.1
(embedded etcd under .apiserver-boot/ unless --etcd-servers is given: on etcd it is
built without kine, faster to rebuild; with --datastore-endpoint, SQL through kine),
waits until it is ready, writes a kubeconfig for it, then starts the
controller-manager. Logs are prefixed per process. Ctrl-C stops everything.

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
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLocal(cmd, o)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.SecurePort, "secure-port", o.SecurePort, "Loopback HTTPS port of the apiserver")
	f.StringVar(&o.EtcdServers, "etcd-servers", "", "External etcd client URLs (comma separated); empty runs an embedded etcd")
	f.StringVar(&o.DatastoreEndpoint, "datastore-endpoint", "", "Store in SQL through kine instead of etcd: "+datastore.Forms+" (a relative PATH is in the project root); no etcd runs")
	f.StringVar(&o.DatastoreEndpointFile, "datastore-endpoint-file", "", "A file holding the --datastore-endpoint URL, which keeps its password out of every command line")
	f.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Where to write the kubeconfig for kubectl, relative to the project root (a kubeconfig of another cluster there is refused, not overwritten)")
	f.BoolVar(&o.ControllerManager, "controller-manager", o.ControllerManager, "Also run the controller-manager")
	f.StringVar(&o.ControllerManagerAddress, "controller-manager-address", o.ControllerManagerAddress, "Address (host:port) of the controller-manager's /healthz, /readyz and /metrics; empty turns them off")
	f.BoolVar(&o.Generate, "generate", o.Generate, "Run `apiserver-boot generate` before building")
	f.BoolVar(&o.Watch, "watch", false, "Watch pkg/apis (types and hooks): on a change, regenerate and rebuild while the running apiserver keeps serving, then restart it and the controller-manager on the same etcd data and kubeconfig; a failed generate or build keeps the running one")
	f.DurationVar(&o.Timeout, "timeout", o.Timeout, "How long to wait for the apiserver to become ready")
	f.StringVar(&o.AuditPolicy, "audit-policy-file", "", "Audit policy of the apiserver (audit.k8s.io/v1 Policy), relative to the project root; with --audit-log-path, requests are logged as it says")
	f.StringVar(&o.AuditLog, "audit-log-path", "", "Where the apiserver writes its audit log (JSON lines), relative to the project root; - for its standard output")
	return cmd
}

// runLocal is run local: its flags checked, the project read, then
// runlocal.Run until Ctrl-C.
func runLocal(cmd *cobra.Command, o *runlocal.Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runlocal.Run(ctx, newConsole(cmd), root, p, api, *o)
}
