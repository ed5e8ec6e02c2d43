package adoption

import (
	"context"
	"fmt"
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"

	pkgstorage "github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// Floors are the resources' floors, kept in the store itself (etcd, or SQL
// through kine, which speaks etcd's API), so that every replica of the
// apiserver sees a floor as soon as Seal wrote it: the revision, in
// decimal, at <prefix>/adoption.apiserver-boot.io/floors/<group>/<resource>
// (storage.AdoptionFloors, which copy-storage skips), where no list or
// watch of a resource sees it.
type Floors struct {
	client *clientv3.Client
	prefix string
}

// NewFloors keeps floors under the server's etcd prefix, through client.
func NewFloors(client *clientv3.Client, prefix string) *Floors {
	return &Floors{client: client, prefix: prefix}
}

func (f *Floors) key(gr schema.GroupResource) string {
	return pkgstorage.AdoptionFloors(f.prefix) + gr.Group + "/" + gr.Resource
}

// Get is the floor of gr: 0 when none was set.
func (f *Floors) Get(ctx context.Context, gr schema.GroupResource) (uint64, error) {
	resp, err := f.client.Get(ctx, f.key(gr))
	if err != nil || len(resp.Kvs) == 0 {
		return 0, err
	}
	n, err := strconv.ParseUint(string(resp.Kvs[0].Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the floor of %s (%s): %w", gr, f.key(gr), err)
	}
	return n, nil
}

// Set makes rev the floor of gr, with the transactions kine takes (create
// when absent, else update at the key's revision; another writer between
// the read and the write makes it try again).
func (f *Floors) Set(ctx context.Context, gr schema.GroupResource, rev uint64) error {
	key, value := f.key(gr), strconv.FormatUint(rev, 10)
	for {
		resp, err := f.client.Get(ctx, key)
		if err != nil {
			return err
		}
		txn := f.client.Txn(ctx)
		if len(resp.Kvs) == 0 {
			txn = txn.If(clientv3.Compare(clientv3.ModRevision(key), "=", 0)).Then(clientv3.OpPut(key, value))
		} else {
			txn = txn.If(clientv3.Compare(clientv3.ModRevision(key), "=", resp.Kvs[0].ModRevision)).Then(clientv3.OpPut(key, value)).Else(clientv3.OpGet(key))
		}
		r, err := txn.Commit()
		if err != nil || r.Succeeded {
			return err
		}
	}
}

// Guard wraps the storage of resource gr (after the store's
// CompleteWithOptions: with the watch cache on, the cacher) so that a
// LIST or WATCH at a resourceVersion N (set and not "0") answers 410 Gone,
// as after a compaction, when N is above the store's current revision or
// below the resource's floor: a client holding the resourceVersion of
// another store (the CRD's, before an adoption) relists, where etcd would
// accept a watch at a future revision and stay silent.
//
// Each such request reads the current revision and the floor: two round
// trips to the store, made only by requests with a resourceVersion (an
// informer's watch after its list, not the list itself), which is cheap
// beside the watch they start.
func Guard(s storage.Interface, gr schema.GroupResource, floors *Floors) storage.Interface {
	return &guard{Interface: s, gr: gr, floors: floors}
}

type guard struct {
	storage.Interface
	gr     schema.GroupResource
	floors *Floors
}

func (g *guard) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	if err := g.check(ctx, opts.ResourceVersion); err != nil {
		return nil, err
	}
	return g.Interface.Watch(ctx, key, opts)
}

func (g *guard) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	if err := g.check(ctx, opts.ResourceVersion); err != nil {
		return err
	}
	return g.Interface.GetList(ctx, key, opts, listObj)
}

// check answers 410 for a resourceVersion outside floor..current; one that
// is not a number is left to the storage, which says so.
func (g *guard) check(ctx context.Context, rv string) error {
	if rv == "" || rv == "0" {
		return nil
	}
	n, err := strconv.ParseUint(rv, 10, 64)
	if err != nil {
		return nil
	}
	// When the store cannot tell (an etcd member or the database is
	// down), the request goes on as it would without the guard: the watch
	// cache may still serve it, and refusing every watch during an outage
	// would be worse than not catching a foreign resourceVersion then.
	current, err := g.Interface.GetCurrentResourceVersion(ctx)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("resourceVersion not checked: the store's revision is unknown", "resource", g.gr, "err", err)
		return nil
	}
	floor, err := g.floors.Get(ctx, g.gr)
	if err != nil {
		klog.FromContext(ctx).V(2).Info("resourceVersion not checked: the adoption floor is unknown", "resource", g.gr, "err", err)
		return nil
	}
	if floor > current {
		// A floor above everything the store holds is not this store's (a
		// copy or a restored backup of it carried the key): enforcing it
		// would refuse every resourceVersion and make clients relist forever.
		klog.FromContext(ctx).Info("adoption floor above the store's revision: ignored", "resource", g.gr, "floor", floor, "revision", current)
		floor = 0
	}
	if n <= current && n >= floor {
		return nil
	}
	return apierrors.NewResourceExpired(fmt.Sprintf("resourceVersion %d is not one of this store's (%d..%d): list again without it", n, max(floor, 1), current))
}
