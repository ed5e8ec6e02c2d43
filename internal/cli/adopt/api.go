package adopt

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

const (
	pageSize = 500
	// maxBatchBytes keeps a batch well under the server's 64 MiB.
	maxBatchBytes = 32 << 20
)

// getState asks the project's apiserver for a resource's adoption state.
func (r *run) getState(ctx context.Context, t *target) (*adoption.State, error) {
	raw, err := r.c.Adoption.Get().AbsPath(adoption.Path(t.group, t.plural)).Do(ctx).Raw()
	if err != nil {
		return nil, err
	}
	s := &adoption.State{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("the adoption state of %s does not decode: %w", t.name(), err)
	}
	return s, nil
}

// getSchemas asks the project's apiserver for a resource's schemas by
// version; one built before the endpoint answers 404 Not Found.
func (r *run) getSchemas(ctx context.Context, t *target) (*adoption.Schemas, error) {
	raw, err := r.c.Adoption.Get().AbsPath(adoption.SchemasPath(t.group, t.plural)).Do(ctx).Raw()
	if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("reading the schemas of %s from the project's apiserver: %w", t.name(), err)
	}
	s := &adoption.Schemas{}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("the schemas of %s do not decode: %w", t.name(), err)
	}
	return s, nil
}

// post sends one batch and checks the answer has a result per object.
func (r *run) post(ctx context.Context, t *target, b *adoption.Batch) (*adoption.BatchResult, error) {
	b.APIVersion, b.Kind = adoption.Group+"/"+adoption.Version, "Batch"
	body, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	raw, err := r.c.Adoption.Post().AbsPath(adoption.Path(t.group, t.plural)).SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Raw()
	if err != nil {
		return nil, fmt.Errorf("the adoption API of %s: %w", t.name(), err)
	}
	res := &adoption.BatchResult{}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("the adoption API's answer for %s does not decode: %w", t.name(), err)
	}
	if len(res.Results) != len(b.Objects) {
		return nil, fmt.Errorf("the adoption API answered %d results for %d objects of %s", len(res.Results), len(b.Objects), t.name())
	}
	return res, nil
}

// batches splits objects into batches of at most MaxBatch objects and
// maxBatchBytes of JSON.
func batches(objs []*unstructured.Unstructured) ([][]runtime.RawExtension, error) {
	var out [][]runtime.RawExtension
	var cur []runtime.RawExtension
	size := 0
	for _, o := range objs {
		b, err := o.MarshalJSON()
		if err != nil {
			return nil, err
		}
		if len(cur) > 0 && (len(cur) == pageSize || size+len(b) > maxBatchBytes) {
			out, cur, size = append(out, cur), nil, 0
		}
		cur = append(cur, runtime.RawExtension{Raw: b})
		size += len(b)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out, nil
}

// list reads every object of the target in t.version through kube-apiserver,
// in pages of pageSize at one resourceVersion (the first page's).
func (r *run) list(ctx context.Context, t *target) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	opts := metav1.ListOptions{Limit: pageSize}
	for {
		l, err := r.c.Dynamic.Resource(t.gvr()).List(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("listing %s in %s: %w", t.name(), t.version, err)
		}
		for i := range l.Items {
			out = append(out, &l.Items[i])
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out, nil
		}
	}
}

// statusLines renders a refused object: one line per cause, or the message.
func statusLines(t *target, ns, name string, s *metav1.Status) []string {
	prefix := t.name() + " " + key(ns, name) + ": "
	if s.Details == nil || len(s.Details.Causes) == 0 {
		return []string{prefix + s.Message}
	}
	var out []string
	for _, c := range s.Details.Causes {
		if c.Field != "" {
			out = append(out, prefix+c.Field+": "+c.Message)
		} else {
			out = append(out, prefix+c.Message)
		}
	}
	return out
}

// probe is an object whose dry-run create the pause must refuse: a copy of
// an existing one under a new name, identity cleared, or the project's
// sample of the kind.
func (r *run) probe(ctx context.Context, t *target) (*unstructured.Unstructured, error) {
	var src *unstructured.Unstructured
	if len(t.read) > 0 {
		src = t.read[0].DeepCopy()
	} else if l, err := r.c.Dynamic.Resource(t.gvr()).List(ctx, metav1.ListOptions{Limit: 1}); err == nil && len(l.Items) > 0 {
		src = l.Items[0].DeepCopy()
	} else if src, err = r.sample(t); err != nil {
		return nil, err
	}
	for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "generateName", "selfLink"} {
		unstructured.RemoveNestedField(src.Object, "metadata", f)
	}
	src.SetName("apiserver-boot-adoption-probe")
	if t.namespaced() && src.GetNamespace() == "" {
		src.SetNamespace("default")
	}
	return src, nil
}

// sample finds the project's sample of the target's kind in t.version.
func (r *run) sample(t *target) (*unstructured.Unstructured, error) {
	files, _ := filepath.Glob(filepath.Join(r.o.SamplesDir, "*.yaml"))
	kind := t.crd.Spec.Names.Kind
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal(b, &u.Object); err != nil {
			continue
		}
		if u.GetKind() == kind && u.GetAPIVersion() == t.group+"/"+t.version {
			return u, nil
		}
	}
	return nil, fmt.Errorf("%s has no object and %s has no sample of %s %s/%s to check the pause with: run apiserver-boot generate (it writes the samples)", t.name(), r.o.SamplesDir, kind, t.group, t.version)
}

// waitPaused waits until the pause holds on the path clients write through
// (kube-apiserver: the CRD, or the project once switched) and in the
// project's own admission (the adoption API's dry-run create).
func (r *run) waitPaused(ctx context.Context) error {
	for _, t := range r.targets {
		p, err := r.probe(ctx, t)
		if err != nil {
			return err
		}
		msg := PauseMessage(r.groupNames(t.group))
		err = r.wait(ctx, "the pause of "+t.name()+" to be enforced", func() (bool, string, error) {
			if ok, why := r.kubeRefuses(ctx, t, p, msg); !ok {
				return false, "kube-apiserver: " + why, nil
			}
			ok, why, err := r.projectRefuses(ctx, t, p, msg)
			return ok, "the project's apiserver: " + why, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// kubeRefuses: a dry-run create of the probe through kube-apiserver is
// refused with the pause's message.
func (r *run) kubeRefuses(ctx context.Context, t *target, p *unstructured.Unstructured, msg string) (bool, string) {
	_, err := r.c.Dynamic.Resource(t.gvr()).Namespace(p.GetNamespace()).Create(ctx, p, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err == nil {
		return false, "a dry-run create was accepted"
	}
	return strings.Contains(err.Error(), msg), err.Error()
}

// projectRefuses: the project's admission refuses the probe (Validate).
func (r *run) projectRefuses(ctx context.Context, t *target, p *unstructured.Unstructured, msg string) (bool, string, error) {
	b, err := p.MarshalJSON()
	if err != nil {
		return false, "", err
	}
	res, err := r.post(ctx, t, &adoption.Batch{Validate: true, Objects: []runtime.RawExtension{{Raw: b}}})
	if apierrors.IsForbidden(err) {
		return false, "", err
	}
	if err != nil {
		return false, err.Error(), nil
	}
	if e := res.Results[0].Error; e != nil {
		return strings.Contains(e.Message, msg), e.Message, nil
	}
	return false, "a dry-run create was accepted", nil
}
