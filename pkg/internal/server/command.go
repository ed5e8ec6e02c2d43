package server

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"

	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// newCommand returns the apiserver command of a generated project: it
// serves p with the flags' options (AddFlags, then Complete, Validate and
// Run) and has the subcommands copy-storage and openapi.
func newCommand(p Project) *cobra.Command {
	o := NewOptions()
	var delegatedOnly []string
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: fmt.Sprintf("Serve the %s API", p.Name),
		Example: `  # standalone on an embedded etcd, writing a kubeconfig for kubectl
  apiserver --write-kubeconfig kubeconfig
  # on an external etcd
  apiserver --etcd-servers http://127.0.0.1:2379
  # on SQL through kine: SQLite (one process only) or Postgres
  apiserver --datastore-endpoint sqlite://.apiserver-boot/state.db
  apiserver --datastore-endpoint postgres://crontab:PASSWORD@db.example.com:5432/crontab
  # aggregated behind a kube-apiserver (in a cluster: --delegated-auth, in-cluster configuration)
  apiserver --etcd-servers https://etcd:2379 --tls-cert-file tls.crt --tls-private-key-file tls.key \
    --kubeconfig kubeconfig`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validateFlags(cmd.Flags(), delegatedOnly); err != nil {
				return err
			}
			o.Complete()
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), p, o)
		},
	}
	delegatedOnly = o.AddFlags(cmd.Flags())
	// One subcommand, copy-storage; no shell completion command for a server.
	cmd.CompletionOptions.DisableDefaultCmd = true
	cmd.AddCommand(storage.NewCopyCommand(o.Etcd.StorageConfig.Prefix), newOpenAPICommand(p))
	return cmd
}

// Main runs the apiserver command (flags from os.Args, stopped by SIGTERM
// or SIGINT), with the garbage collector's defaults of tuneGC, and returns
// the process exit code: 0, or 1 after printing the error.
func Main(p Project) int {
	if err := tuneGC(); err != nil {
		// The defaults of the collector still apply, without a memory limit.
		fmt.Fprintln(os.Stderr, "warning: the container's memory limit was not read (set GOMEMLIMIT to give one):", err)
	}
	ctx := genericapiserver.SetupSignalContext()
	cmd := newCommand(p)
	cmd.SetContext(ctx)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}
