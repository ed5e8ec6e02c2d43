package adopt

import (
	"context"
	"fmt"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// copyTarget reads every object of the target from the CRD (one
// resourceVersion, paginated) and stores it in the project's apiserver with
// its identity; then removes the project's copies the CRD no longer has and
// seals the store.
func (r *run) copyTarget(ctx context.Context, t *target) (int, error) {
	state, err := r.getState(ctx, t)
	if err != nil {
		return 0, fmt.Errorf("reading the adoption state of %s: %w", t.name(), err)
	}
	objs, err := r.list(ctx, t)
	if err != nil {
		return 0, err
	}
	t.read, t.stored = objs, map[string]string{}
	bs, err := batches(objs)
	if err != nil {
		return 0, err
	}
	var refused []string
	for _, b := range bs {
		res, err := r.post(ctx, t, &adoption.Batch{Objects: b})
		if err != nil {
			return 0, err
		}
		for _, x := range res.Results {
			if x.Error != nil {
				refused = append(refused, statusLines(t, x.Namespace, x.Name, x.Error)...)
				continue
			}
			t.stored[key(x.Namespace, x.Name)] = x.ResourceVersion
		}
	}
	if len(refused) > 0 {
		return 0, fmt.Errorf("the project's apiserver refused to store %d objects of %s:\n%s", len(refused), t.name(), strings.Join(refused, "\n"))
	}
	return len(objs), r.removeAndSeal(ctx, t, staleKeys(state.Objects, t.stored))
}

// staleKeys are the project's copies whose object the CRD does not hold.
func staleKeys(have []adoption.Key, read map[string]string) []adoption.Key {
	var out []adoption.Key
	for _, k := range have {
		if _, ok := read[key(k.Namespace, k.Name)]; !ok {
			out = append(out, k)
		}
	}
	return out
}

func (r *run) removeAndSeal(ctx context.Context, t *target, remove []adoption.Key) error {
	for {
		n := min(len(remove), pageSize)
		last := n == len(remove)
		if _, err := r.post(ctx, t, &adoption.Batch{Remove: remove[:n], Seal: last}); err != nil {
			return fmt.Errorf("removing %d stale copies of %s: %w", n, t.name(), err)
		}
		if last {
			return nil
		}
		remove = remove[n:]
	}
}
