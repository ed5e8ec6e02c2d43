package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/migrate"
)

func newMigrateCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "migrate",
		Short:   "Maintenance of a running API's data",
		Example: `  apiserver-boot migrate storage`,
	}
	cmd.AddCommand(newMigrateStorageCommand())
	return cmd
}

type migrateStorageOptions struct {
	kubeconfig string
	group      string
	kind       string
	pageSize   int64
	timeout    time.Duration
}

func newMigrateStorageCommand() *cobra.Command {
	o := &migrateStorageOptions{kubeconfig: "kubeconfig", pageSize: 500, timeout: 30 * time.Minute}
	cmd := &cobra.Command{
		Use:   "storage",
		Short: "Rewrite every object in the current storage version",
		Long: `storage reads every object of the project's resources and writes it back
unchanged, through the running apiserver. The apiserver encodes what it writes in
the storage version (+storageversion), so objects etcd still holds in an older
version are re-encoded; objects already in the storage version are left as they
are (etcd sees no change). Run it after moving +storageversion to another
version and deploying the new apiserver, and before removing the old version.

Conflicting writes (someone else updated the object meanwhile) are retried with
a fresh read; objects deleted meanwhile are skipped. Objects the apiserver
refuses (say, a Validate hook now rejects them) are listed, and the command
fails after trying every object.`,
		Example: `  # against the apiserver of "apiserver-boot run local"
  apiserver-boot migrate storage
  # one kind, against a deployed apiserver (through kube-apiserver)
  apiserver-boot migrate storage --group stable --kind CronTab --kubeconfig ~/.kube/config`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", o.kubeconfig, "kubeconfig of the apiserver to migrate, relative to the project root (default: the one run local writes)")
	f.StringVar(&o.group, "group", "", "Only this group (its short name, e.g. stable)")
	f.StringVar(&o.kind, "kind", "", "Only this kind")
	f.Int64Var(&o.pageSize, "page-size", o.pageSize, "Objects per list request")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "Give up after this long")
	return cmd
}

func (o *migrateStorageOptions) run(ctx context.Context, out io.Writer) error {
	if o.pageSize < 1 {
		return fmt.Errorf("--page-size %d is not valid: want 1 or more objects per list request", o.pageSize)
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout %s is not valid: want a positive duration, such as 30m", o.timeout)
	}
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	if o.group, err = p.ResolveGroup(o.group); err != nil {
		return err
	}
	targets := migrate.Select(api, o.group, o.kind)
	if len(targets) == 0 {
		if hint := p.Suggest(o.group, "", o.kind); hint != "" && o.kind != "" {
			return fmt.Errorf("no resource matches --group %q --kind %q%s", o.group, o.kind, hint)
		}
		return fmt.Errorf("no resource matches --group %q --kind %q: see PROJECT for the project's groups and kinds", o.group, o.kind)
	}

	kubeconfig := o.kubeconfig
	if !filepath.IsAbs(kubeconfig) {
		kubeconfig = filepath.Join(root, kubeconfig)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return migrate.Storage(ctx, client, targets, o.pageSize, o.timeout, out)
}
