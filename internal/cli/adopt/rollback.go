package adopt

import (
	"context"
	"fmt"
	"sort"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func (r *run) rollback(ctx context.Context) error {
	pause, phase, done, err := r.begin(ctx)
	if err != nil || done {
		return err
	}
	switch {
	case pause == "" && phase == Fresh:
		r.printf("nothing to do: %s are served by their CRDs", r.names())
		return r.finish(ctx)
	case pause == opAdopt:
		return r.abandon(ctx, phase)
	}
	if err := r.whoAmI(ctx); err != nil {
		return err
	}
	if err := r.ensureTempAPIService(ctx); err != nil {
		return err
	}
	if err := r.rollbackStates(ctx); err != nil {
		return err
	}
	// The pause without the exemption (a rerun removes one left before).
	if err := r.pause(ctx, opRollback, ""); err != nil {
		return err
	}
	if phase != Switched {
		// A rollback that stopped after switching back: route to the
		// project again (writes are paused) to read what it holds.
		r.printf("resuming: the writes of %s are paused by a rollback that did not finish", r.names())
		if err := r.switchAll(ctx, false); err != nil {
			return err
		}
	}
	if err := r.readPaused(ctx); err != nil {
		// Routed to the project, which holds every change: ending the
		// pause leaves the resources adopted, as before the rollback.
		if uerr := r.finish(ctx); uerr != nil {
			return fmt.Errorf("%w; ending the pause failed too (rerun apiserver-boot adopt --rollback): %v", err, uerr)
		}
		return fmt.Errorf("%w\nthe project's apiserver serves %s, as before the rollback, and writes are resumed", err, r.names())
	}
	return r.rollbackPaused(ctx)
}

// readPaused waits for the pause and reads every object from the project.
func (r *run) readPaused(ctx context.Context) error {
	if err := r.waitPaused(ctx); err != nil {
		return err
	}
	r.pausedFrom()
	for _, t := range r.targets {
		var err error
		if t.read, err = r.readProject(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// rollbackPaused switches back, lets its own user through the pause and
// writes the differences to the CRDs.
func (r *run) rollbackPaused(ctx context.Context) error {
	if err := r.switchAll(ctx, true); err != nil {
		return err
	}
	// kube-apiserver holds the pause for the CRD before anyone is let through.
	for _, t := range r.targets {
		if err := r.waitKubePaused(ctx, t); err != nil {
			return err
		}
	}
	if err := r.pause(ctx, opRollback, r.user); err != nil {
		return err
	}
	var sum summary
	for _, t := range r.targets {
		if err := r.waitExempt(ctx, t); err != nil {
			return err
		}
		crd, err := r.listWhenServed(ctx, t)
		if err != nil {
			return err
		}
		if err := r.apply(ctx, t, Diff(t.read, crd), &sum); err != nil {
			return err
		}
	}
	if err := r.markDone(ctx); err != nil {
		return err
	}
	if err := r.finish(ctx); err != nil {
		return err
	}
	paused := r.unpausedAt.Sub(r.pausedAt)
	r.printf("rolled back %s: %d objects (%d created, %d updated, %d deleted); writes paused for %s", r.names(), sum.total, sum.created, sum.updated, sum.deleted, paused.Round(time.Millisecond))
	return nil
}

// abandon ends an adoption that did not finish: under its pause only the
// copy wrote (to the project's store), so the CRDs hold everything.
func (r *run) abandon(ctx context.Context, phase Phase) error {
	start := time.Now()
	if phase != Fresh {
		if err := r.switchAll(ctx, true); err != nil {
			return err
		}
	}
	if err := r.finish(ctx); err != nil {
		return err
	}
	r.printf("rolled back %s: the adoption had not finished (no write reached either side while it held writes); the CRDs serve as before; writes paused for %s", r.names(), time.Since(start).Round(time.Millisecond))
	return nil
}

func (r *run) whoAmI(ctx context.Context) error {
	res, err := r.c.Kube.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authnv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("asking kube-apiserver who the user of --kubeconfig is (SelfSubjectReview): %w", err)
	}
	if r.user = res.Status.UserInfo.Username; r.user == "" {
		return fmt.Errorf("kube-apiserver names no user for --kubeconfig (SelfSubjectReview): --rollback needs one to let its own writes through the pause")
	}
	return nil
}

// listWhenServed lists a target through kube-apiserver, waiting out the
// 404 and 503 of a routing change.
func (r *run) listWhenServed(ctx context.Context, t *target) ([]*unstructured.Unstructured, error) {
	var got []*unstructured.Unstructured
	err := r.wait(ctx, "kube-apiserver to serve "+t.name(), func() (bool, string, error) {
		var err error
		got, err = r.list(ctx, t)
		if retriable(err) {
			return false, err.Error(), nil
		}
		return err == nil, "", err
	})
	return got, err
}

// readProject lists a target through kube-apiserver once the answer is the
// project's: the objects (namespace, name, uid) its adoption state names.
// Writes are paused, so the two agree once kube-apiserver routes there.
func (r *run) readProject(ctx context.Context, t *target) ([]*unstructured.Unstructured, error) {
	state, err := r.getState(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("reading the adoption state of %s: %w", t.name(), err)
	}
	want := map[string]types.UID{}
	for _, k := range state.Objects {
		want[key(k.Namespace, k.Name)] = k.UID
	}
	var got []*unstructured.Unstructured
	err = r.wait(ctx, "kube-apiserver to serve "+t.name()+" from the project's apiserver", func() (bool, string, error) {
		got, err = r.list(ctx, t)
		if retriable(err) {
			return false, err.Error(), nil
		} else if err != nil {
			return false, "", err
		}
		same := len(got) == len(want)
		for _, o := range got {
			if uid, ok := want[objKey(o)]; !ok || uid != o.GetUID() {
				same = false
			}
		}
		return same, fmt.Sprintf("the list (%d objects) is not what the project's store holds (%d objects)", len(got), len(want)), nil
	})
	return got, err
}

// waitKubePaused waits until kube-apiserver refuses a write of the target
// with the pause's message.
func (r *run) waitKubePaused(ctx context.Context, t *target) error {
	p, err := r.probe(ctx, t)
	if err != nil {
		return err
	}
	msg := PauseMessage(r.groupNames(t.group))
	return r.wait(ctx, "kube-apiserver to pause the writes of "+t.name(), func() (bool, string, error) {
		ok, why := r.kubeRefuses(ctx, t, p, msg)
		return ok, why, nil
	})
}

// waitExempt waits until a dry-run create by the run's own user passes the
// pause on the CRD (its exemption is enforced).
func (r *run) waitExempt(ctx context.Context, t *target) error {
	p, err := r.probe(ctx, t)
	if err != nil {
		return err
	}
	msg := PauseMessage(r.groupNames(t.group))
	return r.wait(ctx, "the pause of "+t.name()+" to let "+r.user+" through", func() (bool, string, error) {
		refused, why := r.kubeRefuses(ctx, t, p, msg)
		return !refused, why, nil
	})
}

// Change is one write of a rollback: the object to write (the project's
// copy, made ready for the CRD) and the CRD's current copy, if any.
type Change struct {
	Want *unstructured.Unstructured // nil: delete
	Have *unstructured.Unstructured // nil: create
}

// Diff compares the project's objects with the CRD's, by namespace/name:
// creates, updates (any difference but the identity the CRD assigns:
// resourceVersion, uid, creationTimestamp, generation, managedFields) and
// deletions, sorted by key.
func Diff(project, crd []*unstructured.Unstructured) []Change {
	have := map[string]*unstructured.Unstructured{}
	for _, o := range crd {
		have[objKey(o)] = o
	}
	var out []Change
	for _, p := range project {
		k := objKey(p)
		h, ok := have[k]
		delete(have, k)
		switch {
		case !ok:
			out = append(out, Change{Want: p})
		case h.GetUID() != p.GetUID() || !equality.Semantic.DeepEqual(comparable(p), comparable(h)):
			out = append(out, Change{Want: p, Have: h})
		}
	}
	for _, h := range have {
		out = append(out, Change{Have: h})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

func (c Change) key() string {
	if c.Want != nil {
		return objKey(c.Want)
	}
	return objKey(c.Have)
}

// comparable is an object without what each store assigns.
func comparable(u *unstructured.Unstructured) map[string]any {
	c := u.DeepCopy()
	for _, f := range []string{"resourceVersion", "uid", "creationTimestamp", "generation", "managedFields", "selfLink"} {
		unstructured.RemoveNestedField(c.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(c.Object, "apiVersion")
	return c.Object
}

// rollbackStates reads each target's adoption state: the version its
// objects are read and written in.
func (r *run) rollbackStates(ctx context.Context) error {
	_, perms, err := r.states(ctx)
	if err != nil {
		return err
	}
	if len(perms) > 0 {
		return r.refuseMissing(perms)
	}
	for _, t := range r.targets {
		if t.state == nil || t.version == "" {
			return fmt.Errorf("%s: the project's apiserver does not serve it in a version the CRD served (%v): nothing to roll back from", t.name(), servedBefore(t))
		}
	}
	return nil
}
