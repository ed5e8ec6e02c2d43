package adopt

import (
	"context"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// copyTarget reads every object of the target from the CRD (one
// resourceVersion, paginated), seals the project's store (the floor below
// which resourceVersions answer 410) and stores each object in it with its
// identity; then removes the project's copies the CRD no longer has.
func (r *run) copyTarget(ctx context.Context, t *target) (int, error) {
	state, err := r.getState(ctx, t)
	if err != nil {
		return 0, fmt.Errorf("reading the adoption state of %s: %w", t.name(), err)
	}
	planned := t.read // what the plan validated; none on a rerun
	objs, err := r.list(ctx, t)
	if err != nil {
		return 0, err
	}
	// Objects written between the plan and the pause are validated now:
	// the copy stores without admission.
	refusedLate, err := r.validateObjects(ctx, t, newerThan(planned, objs))
	if err != nil {
		return 0, err
	}
	if len(refusedLate) > 0 {
		return 0, fmt.Errorf("the project's apiserver refuses %d objects of %s written since the plan:\n%s", len(refusedLate), t.name(), strings.Join(refusedLate, "\n"))
	}
	t.read, t.stored = objs, map[string]string{}
	// The floor first: the copies' resourceVersions are above it, so a
	// client that read a copy can watch from it.
	if _, err := r.post(ctx, t, &adoption.Batch{Seal: true}); err != nil {
		return 0, fmt.Errorf("sealing %s before the copy: %w", t.name(), err)
	}
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
	return len(objs), r.removeStale(ctx, t, staleKeys(state.Objects, t.stored))
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

// removeStale deletes the project's stale copies, a page at a time.
func (r *run) removeStale(ctx context.Context, t *target, stale []adoption.Key) error {
	for len(stale) > 0 {
		n := min(len(stale), pageSize)
		if _, err := r.post(ctx, t, &adoption.Batch{Remove: stale[:n]}); err != nil {
			return fmt.Errorf("removing %d stale copies of %s: %w", n, t.name(), err)
		}
		stale = stale[n:]
	}
	return nil
}

// copyUntilSettled lists the target from the CRD once more after its copy
// and copies again while what it finds differs from what was copied: a
// kube-apiserver replica that saw the pause late may have taken a write
// after the copy's list, which the switch must not lose. n is the count of
// the copy just made.
func (r *run) copyUntilSettled(ctx context.Context, t *target, n int) (int, error) {
	for range 3 {
		now, err := r.list(ctx, t)
		if err != nil {
			return 0, err
		}
		changed := changedSince(t.read, now)
		if changed == 0 {
			return n, nil
		}
		r.printf("%s: %d objects changed on the CRD after the copy's list (a kube-apiserver that saw the pause late): copying again", t.name(), changed)
		if n, err = r.copyTarget(ctx, t); err != nil {
			return 0, err
		}
	}
	return 0, fmt.Errorf("%s kept changing on the CRD while writes were paused: is the pause (ValidatingAdmissionPolicy) enforced by every kube-apiserver?", t.name())
}

// changedSince counts the objects whose uid or resourceVersion differs
// between two reads, or that only one read holds.
func changedSince(before, after []*unstructured.Unstructured) int {
	was := map[string]string{}
	for _, o := range before {
		was[key(o.GetNamespace(), o.GetName())] = string(o.GetUID()) + "/" + o.GetResourceVersion()
	}
	changed := 0
	for _, o := range after {
		k := key(o.GetNamespace(), o.GetName())
		if was[k] != string(o.GetUID())+"/"+o.GetResourceVersion() {
			changed++
		}
		delete(was, k)
	}
	return changed + len(was)
}

// newerThan are the objects of now that before does not hold with the same
// uid and resourceVersion.
func newerThan(before, now []*unstructured.Unstructured) []*unstructured.Unstructured {
	was := map[string]string{}
	for _, o := range before {
		was[key(o.GetNamespace(), o.GetName())] = string(o.GetUID()) + "/" + o.GetResourceVersion()
	}
	var out []*unstructured.Unstructured
	for _, o := range now {
		if was[key(o.GetNamespace(), o.GetName())] != string(o.GetUID())+"/"+o.GetResourceVersion() {
			out = append(out, o)
		}
	}
	return out
}
