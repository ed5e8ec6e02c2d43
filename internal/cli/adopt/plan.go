package adopt

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	authzv1 "k8s.io/api/authorization/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// permission is one thing the run must be allowed.
type permission struct {
	verb, group, resource, subresource string
}

func (p permission) String() string {
	res := p.resource
	if p.subresource != "" {
		res += "/" + p.subresource
	}
	return fmt.Sprintf("verb %q on %q in API group %q", p.verb, res, p.group)
}

// clusterPermissions are the kube-apiserver permissions every run needs.
func clusterPermissions() []permission {
	var out []permission
	add := func(group, resource string, verbs ...string) {
		for _, v := range verbs {
			out = append(out, permission{verb: v, group: group, resource: resource})
		}
	}
	add("apiextensions.k8s.io", "customresourcedefinitions", "get", "list", "update")
	add("apiregistration.k8s.io", "apiservices", "get", "create", "update", "delete")
	add("admissionregistration.k8s.io", "validatingadmissionpolicies", "get", "create", "update", "delete")
	add("admissionregistration.k8s.io", "validatingadmissionpolicybindings", "get", "create", "update", "delete")
	return out
}

// resourcePermissions are what the run needs on the adopted resources
// through kube-apiserver: reading them, the pause's dry-run probe (create),
// and for --rollback writing the differences back.
func (r *run) resourcePermissions() []permission {
	var out []permission
	for _, t := range r.targets {
		verbs := []string{"get", "list", "create"}
		if r.o.Rollback {
			verbs = append(verbs, "update", "delete")
		}
		for _, v := range verbs {
			out = append(out, permission{verb: v, group: t.group, resource: t.plural})
		}
		if r.o.Rollback && hasStatusAny(t) {
			out = append(out, permission{verb: "update", group: t.group, resource: t.plural, subresource: "status"})
		}
		// kube-apiserver authorizes the requests it forwards to the
		// adoption API too, as any aggregated request: GET of the State is a
		// list, GET of the schemas a get (of the name "schemas"), a Batch a
		// create, of the resource "<plural>.<group>".
		if !r.o.Rollback {
			for _, v := range []string{"get", "list", "create"} {
				out = append(out, permission{verb: v, group: adoption.Group, resource: t.plural + "." + t.group})
			}
		}
	}
	return out
}

func hasStatusAny(t *target) bool {
	for _, v := range t.crd.Spec.Versions {
		if v.Subresources != nil && v.Subresources.Status != nil {
			return true
		}
	}
	return false
}

// missing asks kube-apiserver (SelfSubjectAccessReview) for each permission
// and returns those denied.
func (r *run) missing(ctx context.Context, perms []permission) ([]permission, error) {
	var out []permission
	for _, p := range perms {
		ssar := &authzv1.SelfSubjectAccessReview{Spec: authzv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authzv1.ResourceAttributes{
			Verb: p.verb, Group: p.group, Resource: p.resource, Subresource: p.subresource,
		}}}
		res, err := r.c.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, ssar, metav1.CreateOptions{})
		if err != nil {
			return nil, fmt.Errorf("asking kube-apiserver whether %s is allowed: %w", p, err)
		}
		if !res.Status.Allowed {
			out = append(out, p)
		}
	}
	return out, nil
}

// refuseMissing prints each missing permission and refuses.
func (r *run) refuseMissing(missing []string) error {
	for _, m := range missing {
		r.printf("missing permission: %s", m)
	}
	return fmt.Errorf("%w: %d missing permissions (listed above): grant them (RBAC) to the user of --kubeconfig", ErrRefused, len(missing))
}

// checkPermissions asks for every kube-apiserver permission the run needs
// before anything is changed: the cluster's first (the CRDs are listed to
// find the resources), then the resources'.
func (r *run) checkPermissions(ctx context.Context, withResources bool) error {
	perms := clusterPermissions()
	if withResources {
		perms = r.resourcePermissions()
	}
	denied, err := r.missing(ctx, perms)
	if err != nil {
		return err
	}
	if len(denied) == 0 {
		return nil
	}
	var lines []string
	for _, p := range denied {
		lines = append(lines, p.String())
	}
	return r.refuseMissing(lines)
}

// adoptPermission is the line naming the adopt verb on a resource.
func adoptPermission(t *target) string {
	return permission{verb: adoption.Verb, group: t.group, resource: t.plural}.String() + " (the project's apiserver)"
}

// readVersion is the version objects move in: the project's storage version
// if the CRD serves it, else the CRD's storage version if the project serves
// it, else the first the CRD serves that the project does.
func readVersion(crdServed []string, crdStorage string, s *adoption.State) string {
	if slices.Contains(crdServed, s.StorageVersion) {
		return s.StorageVersion
	}
	if slices.Contains(crdServed, crdStorage) && slices.Contains(s.Versions, crdStorage) {
		return crdStorage
	}
	for _, v := range crdServed {
		if slices.Contains(s.Versions, v) {
			return v
		}
	}
	return ""
}

// states reads every target's adoption state and checks the versions:
// refusal lines for a resource the project lacks, a version it does not
// serve, or the adopt permission missing (as missingPerms).
func (r *run) states(ctx context.Context) (refusals, missingPerms []string, err error) {
	for _, t := range r.targets {
		s, err := r.getState(ctx, t)
		switch {
		case apierrors.IsNotFound(err):
			refusals = append(refusals, fmt.Sprintf("%s: the project's apiserver has no resource %s in %s: routing %s to it would hide the CRD %s and its objects; add the kind to the project (or remove the CRD)",
				t.name(), t.plural, t.group, t.group, t.crd.Name))
			continue
		case apierrors.IsForbidden(err):
			missingPerms = append(missingPerms, adoptPermission(t))
			continue
		case err != nil:
			return nil, nil, fmt.Errorf("reading the adoption state of %s from the project's apiserver: %w", t.name(), err)
		}
		t.state = s
		if born := bornInProject(s); born != "" {
			refusals = append(refusals, fmt.Sprintf("%s: the project's store already holds objects that no adoption put there (%s): the copy would replace or remove them; move or delete them first", t.name(), born))
		}
		served := servedBefore(t)
		for _, v := range served {
			if !slices.Contains(s.Versions, v) {
				refusals = append(refusals, fmt.Sprintf("%s: the CRD serves %s, which the project's apiserver does not serve", t.name(), v))
			}
		}
		switch t.version = readVersion(served, storageVersion(t.crd), s); {
		case len(served) == 0:
			refusals = append(refusals, fmt.Sprintf("%s: the CRD serves no version (and records none it served): nothing to move", t.name()))
		case t.version == "":
			refusals = append(refusals, fmt.Sprintf("%s: the CRD and the project's apiserver serve no version in common", t.name()))
		}
	}
	return refusals, missingPerms, nil
}

// plan checks each target's versions and, with validate, prints its plan
// line, listing its objects and having the project's apiserver dry-run
// create each: refusal lines for every object it would refuse; then the
// differences between the CRD's schema and the project's, refusing a field
// the copy would prune from stored objects. ok is false when refused.
func (r *run) plan(ctx context.Context, validate bool) (bool, error) {
	refusals, perms, err := r.states(ctx)
	if err != nil {
		return false, err
	}
	if len(perms) > 0 {
		return false, r.refuseMissing(perms)
	}
	for _, t := range r.targets {
		if t.state == nil || t.version == "" || !validate {
			continue
		}
		refused, err := r.validate(ctx, t)
		if err != nil {
			return false, err
		}
		refusals = append(refusals, refused...)
		r.printf("%s: CRD serves %s (stores %s); the project serves %s (stores %s); %d objects", t.name(),
			strings.Join(servedBefore(t), ","), storageVersion(t.crd), strings.Join(t.state.Versions, ","), t.state.StorageVersion, len(t.read))
		lost, err := r.compareSchemas(ctx, t)
		if err != nil {
			return false, err
		}
		refusals = append(refusals, lost...)
	}
	for _, l := range refusals {
		r.printf("%s", l)
	}
	return len(refusals) == 0, nil
}

// validate lists the target's objects from the CRD and has the project's
// apiserver dry-run create them, in batches.
func (r *run) validate(ctx context.Context, t *target) ([]string, error) {
	objs, err := r.list(ctx, t)
	if err != nil {
		return nil, err
	}
	t.read = objs
	return r.validateObjects(ctx, t, objs)
}

// validateObjects has the project's apiserver dry-run create objs, in
// batches, and returns a refusal line for each it would refuse.
func (r *run) validateObjects(ctx context.Context, t *target, objs []*unstructured.Unstructured) ([]string, error) {
	bs, err := batches(objs)
	if err != nil {
		return nil, err
	}
	var refused []string
	for _, b := range bs {
		res, err := r.post(ctx, t, &adoption.Batch{Validate: true, Objects: b})
		if apierrors.IsForbidden(err) {
			return nil, r.refuseMissing([]string{adoptPermission(t)})
		}
		if err != nil {
			return nil, err
		}
		for _, x := range res.Results {
			if x.Error != nil && !staleCopy(t.state, x) && !pausedOnly(x) {
				refused = append(refused, statusLines(t, x.Namespace, x.Name, x.Error)...)
			}
		}
	}
	return refused, nil
}

// staleCopy tells whether a Validate result refuses an object only because
// the project's store holds a copy of it, left by an earlier adoption (then
// a rollback) or by a run that stopped part-way: the dry-run create answers
// AlreadyExists from the store, after the schema, the hooks and admission
// passed the object, and the copy is replaced when the objects are stored.
func staleCopy(s *adoption.State, x adoption.Result) bool {
	if x.Error.Reason != metav1.StatusReasonAlreadyExists {
		return false
	}
	for _, k := range s.Objects {
		if k.Namespace == x.Namespace && k.Name == x.Name {
			return true
		}
	}
	return false
}

// bornInProject names (up to five of) the objects of a resource's store
// when no adoption ever sealed it: objects created through the project's
// own API (a version the CRD does not serve), which the copy must not
// overwrite or remove. Once an adoption has sealed the store, what it holds
// are copies, replaced or removed by the next copy.
func bornInProject(s *adoption.State) string {
	if s.Floor != "" || len(s.Objects) == 0 {
		return ""
	}
	var names []string
	for _, k := range s.Objects[:min(len(s.Objects), 5)] {
		names = append(names, strings.TrimPrefix(k.Namespace+"/"+k.Name, "/"))
	}
	if len(s.Objects) > 5 {
		names = append(names, fmt.Sprintf("and %d more", len(s.Objects)-5))
	}
	return strings.Join(names, ", ")
}

// pausedOnly tells whether a Validate result refuses an object only because
// writes are paused (objects checked again under the pause, written after
// the plan): the project's validating admission runs after its schema,
// CEL rules and hooks, which passed it.
func pausedOnly(x adoption.Result) bool {
	return strings.Contains(x.Error.Message, "are paused while apiserver-boot adopt moves them")
}

// compareSchemas prints, for each version the CRD serves and the project
// too, each difference between the CRD's openAPIV3Schema and the project's
// schema (or that they are equal), and returns a refusal line for each
// field that stored objects hold and the project's schema would prune on
// copy (in t.version, the version objects move in). A project's apiserver
// built before the schemas endpoint gets a line saying it cannot compare.
func (r *run) compareSchemas(ctx context.Context, t *target) ([]string, error) {
	s, err := r.getSchemas(ctx, t)
	switch {
	case apierrors.IsNotFound(err):
		r.printf("warning: %s: cannot compare the CRD's schema with the project's: the project's apiserver predates the adoption API's schemas (GET %s answered 404 Not Found); deploy the project built with this apiserver-boot to have them compared",
			t.name(), adoption.SchemasPath(t.group, t.plural))
		return nil, nil
	case apierrors.IsForbidden(err):
		return nil, r.refuseMissing([]string{adoptPermission(t)})
	case err != nil:
		return nil, err
	}
	project := map[string]adoption.VersionSchema{}
	for _, v := range s.Versions {
		project[v.Version] = v
	}
	var refusals []string
	for _, v := range servedBefore(t) {
		pv, ok := project[v]
		if !ok {
			continue // refused already: a version the project does not serve
		}
		prefix := fmt.Sprintf("%s %s: ", t.name(), v)
		cs, ps, why := versionSchemas(t.crd, v, pv)
		if why != "" {
			r.printf("warning: %scannot compare the schemas: %s", prefix, why)
			continue
		}
		diff := schemaDiff(cs, ps)
		if len(diff) == 0 {
			r.printf("  %sschemas equal", prefix)
		}
		for _, l := range diff {
			r.printf("  %s%s", prefix, l)
		}
		if v == t.version {
			manifest := "" // the project's schema is its manifest's already
			if pv.Manifest == "" {
				manifest = "config/crd/bases/" + t.group + "_" + t.plural + ".yaml"
			}
			for _, f := range lostFields(t.read, cs, ps) {
				refusals = append(refusals, f.line(prefix, manifest))
			}
		}
	}
	return refusals, nil
}

// versionSchemas are the structural schemas of version v: the CRD's and the
// project's; why says what prevents comparing them.
func versionSchemas(crd *apiextv1.CustomResourceDefinition, v string, pv adoption.VersionSchema) (c, p *structuralschema.Structural, why string) {
	var cv *apiextv1.JSONSchemaProps
	for _, x := range crd.Spec.Versions {
		if x.Name == v && x.Schema != nil {
			cv = x.Schema.OpenAPIV3Schema
		}
	}
	if cv == nil {
		return nil, nil, fmt.Sprintf("the CRD %s has no openAPIV3Schema for %s", crd.Name, v)
	}
	if len(pv.OpenAPIV3Schema) == 0 {
		return nil, nil, fmt.Sprintf("the project's apiserver has no schema for %s", v)
	}
	c, err := structural(cv)
	if err != nil {
		return nil, nil, fmt.Sprintf("the CRD %s's openAPIV3Schema of %s is not structural: %v", crd.Name, v, err)
	}
	pp := &apiextv1.JSONSchemaProps{}
	if err := json.Unmarshal(pv.OpenAPIV3Schema, pp); err != nil {
		return nil, nil, fmt.Sprintf("the project's schema of %s is not an apiextensions/v1 JSONSchemaProps: %v", v, err)
	}
	if p, err = structural(pp); err != nil {
		return nil, nil, fmt.Sprintf("the project's schema of %s is not structural: %v", v, err)
	}
	return c, p, ""
}
