package adopt

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// begin checks the permissions, finds the targets and reads where a run is.
// done is true when there is nothing to do (already printed).
func (r *run) begin(ctx context.Context) (pause string, phase Phase, done bool, err error) {
	if err := r.checkPermissions(ctx, false); err != nil {
		return "", "", false, err
	}
	if err := r.load(ctx); err != nil {
		return "", "", false, err
	}
	if len(r.targets) == 0 {
		r.printf("nothing to do: no CRD in the cluster is of the project's groups (%s)", strings.Join(r.cfg.Groups, ", "))
		return "", "", true, nil
	}
	if err := r.checkPermissions(ctx, true); err != nil {
		return "", "", false, err
	}
	pause, phase, detail, err := r.detect(ctx)
	if err != nil {
		return "", "", false, err
	}
	if pause != "" && r.pauseDone && r.o.DryRun {
		return "", "", false, fmt.Errorf("%w: an earlier %s run stopped while ending its pause: rerun without --dry-run to finish it", ErrRefused, pause)
	}
	if pause != "" && r.pauseDone {
		// Stopped while unpausing: finish that (nothing else is left).
		if err := r.finish(ctx); err != nil {
			return "", "", false, err
		}
		r.printf("finished the unpause of an earlier %s run: writes to %s resumed", pause, r.names())
		if pause, phase, detail, err = r.detect(ctx); err != nil {
			return "", "", false, err
		}
	}
	goal := Switched
	if r.o.Rollback {
		goal = Fresh
	}
	phase = r.narrow(pause, goal)
	if pause == "" && phase == Partial {
		return "", "", false, fmt.Errorf("%w: %s are partly switched and no adoption pause holds their writes (%s): both sides may have taken writes; "+
			"check which side holds what, then make every version's APIService and CRD agree by hand", ErrRefused, r.names(), strings.Join(detail, "; "))
	}
	return pause, phase, false, nil
}

func (r *run) adopt(ctx context.Context) error {
	pause, phase, done, err := r.begin(ctx)
	if err != nil || done {
		return err
	}
	switch {
	case pause == opRollback:
		return fmt.Errorf("%w: a rollback of %s is under way (writes paused by apiserver-boot adopt --rollback): rerun apiserver-boot adopt --rollback to finish it", ErrRefused, r.names())
	case pause == "" && phase == Switched:
		if r.o.DryRun {
			r.printf("nothing to do: %s are served by the project's apiserver", r.names())
			return nil
		}
		if err := r.finish(ctx); err != nil { // a policy or APIService left behind
			return err
		}
		r.printf("nothing to do: %s are served by the project's apiserver", r.names())
		return nil
	case pause != "" && r.o.DryRun:
		return fmt.Errorf("%w: an adoption of %s is under way (writes paused): rerun apiserver-boot adopt without --dry-run to finish it, or --rollback to abandon it", ErrRefused, r.names())
	}
	if err := r.ensureTempAPIService(ctx); err != nil {
		if pause == "" && !errors.Is(err, ErrRefused) {
			_ = r.removeTempAPIService(ctx) // nothing else was changed
		}
		return err
	}
	if pause == "" {
		ok, err := r.plan(ctx, true)
		if err != nil || !ok || r.o.DryRun {
			return r.endPlan(ctx, ok, err)
		}
		if err := r.pause(ctx, opAdopt, ""); err != nil {
			return err
		}
	} else {
		r.printf("resuming: the writes of %s are paused by an adoption that did not finish (%s)", r.names(), phase)
		if ok, err := r.plan(ctx, false); err != nil {
			return err
		} else if !ok {
			return fmt.Errorf("%w: the adoption under way can no longer go ahead (reasons above): rerun with --rollback to abandon it", ErrRefused)
		}
		if phase != Fresh {
			// What was read before is gone with the process: route back to
			// the CRDs (no write reached either side) and copy again.
			if err := r.switchAll(ctx, true); err != nil {
				return err
			}
		}
	}
	return r.move(ctx)
}

// endPlan ends a run that only planned: the dry run, or a refusal.
func (r *run) endPlan(ctx context.Context, ok bool, err error) error {
	if rmErr := r.removeTempAPIService(ctx); err == nil {
		err = rmErr
	}
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: the adoption of %s (reasons above); nothing was changed", ErrRefused, r.names())
	}
	r.printf("dry run: the adoption can go ahead")
	return nil
}

// move runs the paused part: wait for the pause, copy, switch, verify,
// unpause. A failure on the way routes back to the CRDs and ends the pause
// (undo); a stopped process leaves the pause for a rerun to continue.
func (r *run) move(ctx context.Context) error {
	total, err := r.moveAndVerify(ctx)
	if err != nil {
		return r.undo(ctx, err)
	}
	if err := r.markDone(ctx); err != nil {
		return err
	}
	if err := r.finish(ctx); err != nil {
		return err
	}
	paused := r.unpausedAt.Sub(r.pausedAt)
	r.printf("adopted %s: %d objects; writes paused for %s", r.names(), total, paused.Round(time.Millisecond))
	return nil
}

func (r *run) moveAndVerify(ctx context.Context) (int, error) {
	if err := r.waitPaused(ctx); err != nil {
		return 0, err
	}
	r.pausedFrom()
	r.printf("writes paused: kube-apiserver and the project's apiserver refuse them (%s)", r.sincePause())
	total := 0
	for _, t := range r.targets {
		n, err := r.copyTarget(ctx, t)
		if err != nil {
			return 0, err
		}
		if n, err = r.copyUntilSettled(ctx, t, n); err != nil {
			return 0, err
		}
		r.printf("copied %s: %d objects (%s)", t.name(), n, r.sincePause())
		total += n
	}
	if err := r.switchAll(ctx, false); err != nil {
		return 0, err
	}
	r.printf("switched %s to the project's apiserver (%s)", strings.Join(r.groups, ", "), r.sincePause())
	if err := r.verify(ctx); err != nil {
		return 0, err
	}
	r.printf("verified %d objects through kube-apiserver (%s)", total, r.sincePause())
	return total, nil
}

// pausedFrom starts the pause's clock where this run did not create the
// pause (a rerun that found it in place).
func (r *run) pausedFrom() {
	if r.pausedAt.IsZero() {
		r.pausedAt = time.Now()
	}
}

// sincePause is how long writes have been paused, for the step lines.
func (r *run) sincePause() time.Duration {
	return time.Since(r.pausedAt).Round(time.Millisecond)
}

// finish ends the pause and removes the temporary APIService.
func (r *run) finish(ctx context.Context) error {
	if err := r.unpause(ctx); err != nil {
		return err
	}
	return r.removeTempAPIService(ctx)
}

// undo answers a failure of the paused part (a failed verification, a
// refused copy, an unreachable server): the CRDs serve again and the pause
// ends. The pause held from before the copy, so no write reached either
// side: the CRDs hold what they held, and keeping writes paused would only
// stretch the outage while someone looks.
func (r *run) undo(ctx context.Context, cause error) error {
	if err := r.switchAll(ctx, true); err != nil {
		return fmt.Errorf("%w; switching back to the CRDs failed too (writes stay paused; rerun apiserver-boot adopt --rollback): %v", cause, err)
	}
	if err := r.unpause(ctx); err != nil {
		return fmt.Errorf("%w; the CRDs serve again, but ending the pause failed: %v", cause, err)
	}
	_ = r.removeTempAPIService(ctx)
	return fmt.Errorf("%w\nthe CRDs serve %s, as before (no write reached either side during the pause), and writes are resumed", cause, r.names())
}
