package adopt

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	admv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

const (
	// opAnnotation says which operation paused the writes: "adopt" or
	// "rollback" (a rerun of the other refuses, or aborts).
	opAnnotation = "adoption.apiserver-boot.io/operation"
	opAdopt      = "adopt"
	opRollback   = "rollback"
	exemptName   = "apiserver-boot-adopt-itself"
	// doneAnnotation marks the bindings of an operation whose work is done
	// and whose pause is being removed.
	doneAnnotation = "adoption.apiserver-boot.io/done"
)

// PauseName names a group's ValidatingAdmissionPolicy and its binding.
func PauseName(group string) string { return "apiserver-boot-adoption." + group }

// PauseMessage is what a write to the paused resources is refused with.
func PauseMessage(names []string) string {
	return "writes to " + strings.Join(names, ", ") + " are paused while apiserver-boot adopt moves them to the project's apiserver; retry in a few seconds"
}

func (r *run) groupNames(g string) []string {
	var out []string
	for _, t := range r.targetsOf(g) {
		out = append(out, t.name())
	}
	return out
}

// policy is the pause of a group: every write of its adopted resources and
// their subresources refused; exempt, when set, is the user let through.
func (r *run) policy(g, op, exempt string) *admv1.ValidatingAdmissionPolicy {
	var res []string
	for _, t := range r.targetsOf(g) {
		res = append(res, t.plural, t.plural+"/*")
	}
	fail := admv1.Fail
	p := &admv1.ValidatingAdmissionPolicy{
		ObjectMeta: r.pauseMeta(g, op),
		Spec: admv1.ValidatingAdmissionPolicySpec{
			FailurePolicy: &fail,
			MatchConstraints: &admv1.MatchResources{ResourceRules: []admv1.NamedRuleWithOperations{{
				RuleWithOperations: admv1.RuleWithOperations{
					Operations: []admv1.OperationType{admv1.Create, admv1.Update, admv1.Delete, admv1.Connect},
					Rule:       admv1.Rule{APIGroups: []string{g}, APIVersions: []string{"*"}, Resources: res},
				},
			}}},
			Validations: []admv1.Validation{{Expression: "false", Message: PauseMessage(r.groupNames(g))}},
		},
	}
	if exempt != "" {
		p.Spec.MatchConditions = []admv1.MatchCondition{{Name: exemptName, Expression: "request.userInfo.username != " + strconv.Quote(exempt)}}
	}
	return p
}

func (r *run) pauseMeta(g, op string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: PauseName(g), Labels: map[string]string{managedByLabel: managedBy}, Annotations: map[string]string{opAnnotation: op}}
}

func (r *run) binding(g, op string) *admv1.ValidatingAdmissionPolicyBinding {
	return &admv1.ValidatingAdmissionPolicyBinding{
		ObjectMeta: r.pauseMeta(g, op),
		Spec:       admv1.ValidatingAdmissionPolicyBindingSpec{PolicyName: PauseName(g), ValidationActions: []admv1.ValidationAction{admv1.Deny}},
	}
}

// pauseOp is the operation of the pause in force ("" when none), and
// whether that operation had finished its work when it began to unpause.
// A pause is its bindings: a policy without one (left by a run stopped
// between the two) enforces nothing.
func (r *run) pauseOp(ctx context.Context) (op string, done bool, groups []string, err error) {
	adm := r.c.Kube.AdmissionregistrationV1()
	for _, g := range r.groups {
		b, err := adm.ValidatingAdmissionPolicyBindings().Get(ctx, PauseName(g), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return "", false, nil, fmt.Errorf("reading the ValidatingAdmissionPolicyBinding %s: %w", PauseName(g), err)
		}
		op = opOf(b.Annotations)
		done = done || b.Annotations[doneAnnotation] == "true"
		groups = append(groups, g)
	}
	return op, done, groups, nil
}

// markDone records on every binding that the operation's work is done, before
// the first is deleted: a rerun after a stop part-way through the unpause
// then only finishes it (the groups already unpaused may have taken writes).
func (r *run) markDone(ctx context.Context) error {
	api := r.c.Kube.AdmissionregistrationV1().ValidatingAdmissionPolicyBindings()
	for _, g := range r.groups {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			b, err := api.Get(ctx, PauseName(g), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if b.Annotations == nil {
				b.Annotations = map[string]string{}
			}
			b.Annotations[doneAnnotation] = "true"
			_, err = api.Update(ctx, b, metav1.UpdateOptions{})
			return err
		})
		if ignoreNotFound(err) != nil {
			return fmt.Errorf("marking the ValidatingAdmissionPolicyBinding %s done: %w", PauseName(g), err)
		}
	}
	return nil
}

func opOf(annotations map[string]string) string {
	if annotations[opAnnotation] == opRollback {
		return opRollback
	}
	return opAdopt
}

// pause creates (or makes what it should be) each group's policy and
// binding: the policy first, so that the binding never names a missing one.
func (r *run) pause(ctx context.Context, op, exempt string) error {
	adm := r.c.Kube.AdmissionregistrationV1()
	for _, g := range r.groups {
		want := r.policy(g, op, exempt)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := adm.ValidatingAdmissionPolicies().Get(ctx, want.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				_, err = adm.ValidatingAdmissionPolicies().Create(ctx, want, metav1.CreateOptions{})
				return err
			} else if err != nil {
				return err
			}
			cur.Labels, cur.Annotations, cur.Spec = want.Labels, want.Annotations, want.Spec
			_, err = adm.ValidatingAdmissionPolicies().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("pausing writes: the ValidatingAdmissionPolicy %s: %w", want.Name, err)
		}
		wantB := r.binding(g, op)
		if r.pausedAt.IsZero() {
			r.pausedAt = time.Now() // writes may be refused from here on
		}
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := adm.ValidatingAdmissionPolicyBindings().Get(ctx, wantB.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				_, err = adm.ValidatingAdmissionPolicyBindings().Create(ctx, wantB, metav1.CreateOptions{})
				return err
			} else if err != nil {
				return err
			}
			cur.Labels, cur.Annotations, cur.Spec = wantB.Labels, wantB.Annotations, wantB.Spec
			_, err = adm.ValidatingAdmissionPolicyBindings().Update(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("pausing writes: the ValidatingAdmissionPolicyBinding %s: %w", wantB.Name, err)
		}
	}
	return nil
}

// unpause deletes every group's binding (which ends the pause), then the
// policies.
func (r *run) unpause(ctx context.Context) error {
	adm := r.c.Kube.AdmissionregistrationV1()
	for _, g := range r.groups {
		if err := adm.ValidatingAdmissionPolicyBindings().Delete(ctx, PauseName(g), metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
			return fmt.Errorf("ending the pause: deleting the ValidatingAdmissionPolicyBinding %s: %w", PauseName(g), err)
		}
	}
	r.unpausedAt = time.Now()
	for _, g := range r.groups {
		if err := adm.ValidatingAdmissionPolicies().Delete(ctx, PauseName(g), metav1.DeleteOptions{}); ignoreNotFound(err) != nil {
			return fmt.Errorf("ending the pause: deleting the ValidatingAdmissionPolicy %s: %w", PauseName(g), err)
		}
	}
	return nil
}
