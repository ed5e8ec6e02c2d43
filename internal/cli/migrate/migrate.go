// Package migrate is apiserver-boot migrate storage: every object of the
// chosen resources is read and written back unchanged through the running
// apiserver, which re-encodes it in the storage version.
package migrate

import (
	"context"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
)

// Target is a resource to migrate: its storage version's
// GroupVersionResource, and its kind.
type Target struct {
	schema.GroupVersionResource
	Kind string
}

// Select is every resource of api, only those of group (its short name)
// and kind when given, in their storage versions.
func Select(api *model.API, group, kind string) []Target {
	var targets []Target
	for _, g := range api.Groups {
		if group != "" && g.Name != group {
			continue
		}
		for _, k := range g.Kinds {
			if kind != "" && k.Kind != kind {
				continue
			}
			gvr := schema.GroupVersionResource{Group: g.FullName, Version: k.StorageVersion, Resource: k.Plural}
			targets = append(targets, Target{GroupVersionResource: gvr, Kind: k.Kind})
		}
	}
	return targets
}

// Storage writes back every object of targets through client, listing
// pageSize objects a request, within timeout; it says on out what it did
// per resource and fails, after trying every object, when one could not be
// written back.
func Storage(ctx context.Context, client dynamic.Interface, targets []Target, pageSize int64, timeout time.Duration, out io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	var failed []string
	for _, gvr := range targets {
		rewritten, total, errs := resource(ctx, client.Resource(gvr.GroupVersionResource), pageSize)
		fmt.Fprintf(out, "%s: %d objects, %d re-encoded in %s (%s's storage version), %d already were\n",
			gvr.GroupResource(), total, rewritten, gvr.Version, gvr.Kind, total-rewritten-len(errs))
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

// resource writes back every object of one resource, page by page.
// An update that changes nothing is not written to etcd when the stored bytes
// are already the storage version's: a new resourceVersion tells that it was.
func resource(ctx context.Context, res dynamic.NamespaceableResourceInterface, pageSize int64) (rewritten, total int, errs []error) {
	opts := metav1.ListOptions{Limit: pageSize}
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
