package adopt

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Phase is where the routing of the adopted groups is.
type Phase string

// The phases: every group version at its CRD, every one at the project, or
// some of each (a switch that stopped part-way).
const (
	Fresh    Phase = "served by the CRDs"
	Switched Phase = "served by the project's apiserver"
	Partial  Phase = "partly switched"
)

// detect reads where the run is: the pause objects (and whose they are:
// "adopt" or "rollback", "" without a pause), each group's phase, and the
// phase of all of them.
func (r *run) detect(ctx context.Context) (pause string, phase Phase, detail []string, err error) {
	if pause, r.pauseDone, r.pausedGroups, err = r.pauseOp(ctx); err != nil {
		return "", "", nil, err
	}
	r.phases = map[string]Phase{}
	for _, g := range r.groups {
		f, s, d, err := r.groupPhase(ctx, g)
		if err != nil {
			return "", "", nil, err
		}
		r.phases[g] = Partial
		if f {
			r.phases[g] = Fresh
		} else if s {
			r.phases[g] = Switched
		}
		detail = append(detail, d...)
	}
	return pause, r.overall(), detail, nil
}

// overall is the phase of every group of the run.
func (r *run) overall() Phase {
	phase := Phase("")
	for _, g := range r.groups {
		switch {
		case phase == "":
			phase = r.phases[g]
		case phase != r.phases[g]:
			return Partial
		}
	}
	return phase
}

// narrow keeps the groups the run acts on: with a pause, the groups it
// holds; without, the groups not already where the run takes them (done),
// so that a group adopted earlier and one whose CRD came later are each
// handled as they are. The groups left out are printed.
func (r *run) narrow(pause string, done Phase) Phase {
	var keep, left []string
	for _, g := range r.groups {
		switch {
		case pause != "" && slices.Contains(r.pausedGroups, g) || pause == "" && r.phases[g] != done:
			keep = append(keep, g)
		case pause != "":
			// A run stopped before it paused every group: this run finishes
			// what its pause holds; the others are as they are.
			left = append(left, fmt.Sprintf("%s (%s, not held by the pause under way: run adopt again afterwards)", strings.Join(r.groupNames(g), ", "), r.phases[g]))
		default:
			left = append(left, fmt.Sprintf("%s (%s)", strings.Join(r.groupNames(g), ", "), r.phases[g]))
		}
	}
	if len(keep) == 0 || len(left) == 0 {
		return r.overall()
	}
	r.printf("left as they are: %s", strings.Join(left, "; "))
	r.groups = keep
	var targets []*target
	for _, t := range r.targets {
		if slices.Contains(keep, t.group) {
			targets = append(targets, t)
		}
	}
	r.targets = targets
	return r.overall()
}

// groupPhase: fresh when every CRD of the group serves and the APIServices
// of the versions they serve are kube-apiserver's; switched when no CRD
// serves and every version the project serves is at its Service. detail
// says what is where.
func (r *run) groupPhase(ctx context.Context, g string) (fresh, switched bool, detail []string, err error) {
	fresh, switched = true, true
	for _, t := range r.targetsOf(g) {
		if served := servedVersions(t.crd); len(served) > 0 {
			switched = false
			detail = append(detail, fmt.Sprintf("the CRD %s serves %s", t.crd.Name, strings.Join(served, ",")))
		} else {
			fresh = false
			detail = append(detail, fmt.Sprintf("the CRD %s serves no version", t.crd.Name))
		}
	}
	crdVersions := r.crdGroupVersions(g)
	for _, v := range union(r.projectVersions(g), crdVersions) {
		as, err := r.getAPIService(ctx, apiServiceName(g, v))
		if err != nil {
			return false, false, nil, err
		}
		at := r.atService(as)
		if at {
			detail = append(detail, "the APIService "+apiServiceName(g, v)+" points at the project's apiserver")
		}
		if at && slices.Contains(crdVersions, v) {
			fresh = false
		}
		if !at && slices.Contains(r.projectVersions(g), v) {
			switched = false
		}
	}
	return fresh, switched, detail, nil
}

func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// switchGroup routes a group to the project: each version's APIService at
// the project's Service first; once kube-aggregator routes them there (no
// request reaches the CRD any more), every version of its CRDs unserved.
func (r *run) switchGroup(ctx context.Context, g string) error {
	for _, v := range r.projectVersions(g) {
		if err := r.pointAtProject(ctx, r.cfg.apiService(g, v)); err != nil {
			return fmt.Errorf("pointing the APIService %s at the project's apiserver: %w", apiServiceName(g, v), err)
		}
	}
	if err := r.waitRouted(ctx, g, true); err != nil {
		return err
	}
	for _, t := range r.targetsOf(g) {
		if err := r.unserve(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// switchBackGroup routes a group to its CRDs again: their versions served
// first (the APIServices still route to the project), then, once
// kube-apiserver's CRD handler had o.Settle to take them up (it follows the
// CRDs through an informer and shows nothing of its state while the
// APIServices route elsewhere), the APIServices of those versions
// kube-apiserver's again.
func (r *run) switchBackGroup(ctx context.Context, g string) error {
	changed := false
	for _, t := range r.targetsOf(g) {
		changed = changed || len(servedVersions(t.crd)) == 0
		if err := r.reserve(ctx, t); err != nil {
			return err
		}
	}
	if changed {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.o.Settle):
		}
	}
	for _, v := range r.crdGroupVersions(g) {
		if err := r.pointLocal(ctx, g, v); err != nil {
			return fmt.Errorf("giving the APIService %s back to the CRD: %w", apiServiceName(g, v), err)
		}
	}
	if err := r.waitRouted(ctx, g, false); err != nil {
		return err
	}
	return r.removeCreated(ctx, g)
}

func (r *run) switchAll(ctx context.Context, back bool) error {
	for _, g := range r.groups {
		f := r.switchGroup
		if back {
			f = r.switchBackGroup
		}
		if err := f(ctx, g); err != nil {
			return err
		}
	}
	return nil
}

// waitRouted waits until kube-aggregator has taken up the switch of a
// group's APIServices: Available with reason Local (kube-apiserver's own
// handlers, the CRD) or, at the project, Available from its checks. Its
// availability controller and its proxy follow the same informer.
func (r *run) waitRouted(ctx context.Context, g string, toProject bool) error {
	versions, where := r.crdGroupVersions(g), " to the CRD"
	if toProject {
		versions, where = r.projectVersions(g), " to the project's apiserver"
	}
	for _, v := range versions {
		name := apiServiceName(g, v)
		err := r.wait(ctx, "kube-apiserver to route "+name+where, func() (bool, string, error) {
			as, err := r.getAPIService(ctx, name)
			if err != nil {
				return false, "", fmt.Errorf("the APIService %s: %w", name, err)
			}
			if as == nil {
				return false, "the APIService " + name + " does not exist (yet)", nil
			}
			for _, c := range as.Status.Conditions {
				if c.Type == "Available" {
					local := c.Reason == "Local"
					why := fmt.Sprintf("Available %s: %s: %s", c.Status, c.Reason, c.Message)
					return local != toProject && c.Status == "True", why, nil
				}
			}
			return false, "no Available condition yet", nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
