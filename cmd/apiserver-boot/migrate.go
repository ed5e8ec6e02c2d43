package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
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
	var targets []schema.GroupVersionResource
	kinds := map[schema.GroupVersionResource]string{}
	for _, g := range api.Groups {
		if o.group != "" && g.Name != o.group {
			continue
		}
		for _, k := range g.Kinds {
			if o.kind != "" && k.Kind != o.kind {
				continue
			}
			gvr := schema.GroupVersionResource{Group: g.FullName, Version: k.StorageVersion, Resource: k.Plural}
			targets = append(targets, gvr)
			kinds[gvr] = k.Kind
		}
	}
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
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	var failed []string
	for _, gvr := range targets {
		rewritten, total, errs := o.migrate(ctx, client.Resource(gvr))
		fmt.Fprintf(out, "%s: %d objects, %d re-encoded in %s (%s's storage version), %d already were\n",
			gvr.GroupResource(), total, rewritten, gvr.Version, kinds[gvr], total-rewritten-len(errs))
		for _, e := range errs {
			fmt.Fprintf(out, "  %v\n", e)
			failed = append(failed, e.Error())
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d objects could not be written back (listed above): fix them and run migrate storage again", len(failed))
	}
	return nil
}

// migrate writes back every object of one resource, page by page.
// An update that changes nothing is not written to etcd when the stored bytes
// are already the storage version's: a new resourceVersion tells that it was.
func (o *migrateStorageOptions) migrate(ctx context.Context, res dynamic.NamespaceableResourceInterface) (rewritten, total int, errs []error) {
	opts := metav1.ListOptions{Limit: o.pageSize}
	for {
		list, err := res.List(ctx, opts)
		if err != nil {
			return rewritten, total, append(errs, fmt.Errorf("listing: %w", err))
		}
		for i := range list.Items {
			total++
			item := &list.Items[i]
			changed := false
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
				updated, err := res.Namespace(item.GetNamespace()).Update(ctx, item, metav1.UpdateOptions{})
				if err == nil {
					changed = updated.GetResourceVersion() != item.GetResourceVersion()
				}
				if apierrors.IsConflict(err) {
					fresh, gerr := res.Namespace(item.GetNamespace()).Get(ctx, item.GetName(), metav1.GetOptions{})
					if gerr != nil {
						return gerr
					}
					item = fresh
				}
				return err
			})
			switch {
			case err == nil:
				if changed {
					rewritten++
				}
			case apierrors.IsNotFound(err):
				total-- // deleted meanwhile
			default:
				errs = append(errs, fmt.Errorf("%s: %w", objectName(item), err))
			}
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return rewritten, total, errs
		}
	}
}

func objectName(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetName()
	}
	return u.GetNamespace() + "/" + u.GetName()
}
