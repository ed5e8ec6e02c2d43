// Package adopt moves the live API of a project's CRDs into the project's
// apiserver (`apiserver-boot adopt`), and back with --rollback.
//
// The run, all through kube-apiserver (the project's apiserver is reached
// through a temporary APIService of the adoption API's group):
//   - plan: every CRD of the project's groups must be a resource the project
//     serves, in every version the CRD serves; every object is dry-run
//     created by the project (schema, CEL, hooks, admission); each
//     difference between the CRD's schema and the project's is listed, and
//     a field stored objects hold that the project's schema would prune
//     refuses. --dry-run stops here.
//   - pause: a ValidatingAdmissionPolicy and its binding per group refuse
//     every write of the adopted resources. kube-apiserver enforces it for
//     the CRD and the project's apiserver for itself, from the same object,
//     so it holds on both sides of the switch with nothing of ours running
//     in the request path; it is only used once both refuse a probe.
//   - copy: every object, read at one resourceVersion, stored with its
//     identity through the adoption API; stale copies removed; sealed.
//   - switch, per group: the APIServices at the project's Service (without
//     kube-aggregator's automanaged label), and once kube-aggregator routes
//     there, the CRD versions served: false. Nothing is deleted.
//   - verify, unpause, remove the temporary APIService.
//
// A failure before the pause ends routes back to the CRDs and ends the
// pause: no write reached either side while it held, so the CRDs hold what
// they held, and keeping writes paused would only stretch the outage.
// Where a run is comes from the cluster only (the pause's bindings and
// whose they are, the APIServices, the CRDs' served versions), so a rerun
// after a stopped process continues: under an adoption's pause it routes
// back to the CRDs (if it had switched) and copies again; a pause whose
// operation had finished (its bindings are marked before the first is
// deleted) is only ended.
package adopt

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

// Options of one run of adopt.
type Options struct {
	// Kubeconfig is the cluster's (Main).
	Kubeconfig string
	// ConfigDir is build config's output folder, holding apiservice.yaml.
	ConfigDir string
	// SamplesDir holds the project's sample objects (config/samples), the
	// probe of the pause when a resource has no object.
	SamplesDir string
	// DryRun plans only: it changes nothing but the temporary APIService,
	// which it removes again.
	DryRun bool
	// Rollback puts the CRDs back in charge.
	Rollback bool
	// Out receives the plan and the result lines.
	Out io.Writer
	// Timeout bounds each wait (an APIService available, the pause
	// enforced, the switch seen); 60 s when zero.
	Timeout time.Duration
	// Poll is the interval of those waits; 500 ms when zero.
	Poll time.Duration
	// Settle is how long kube-apiserver's CRD handler is given to serve
	// the versions a switch back serves again before the APIServices
	// route there; 2 s when zero.
	Settle time.Duration
}

// Clients reach the cluster through kube-apiserver.
type Clients struct {
	Kube       kubernetes.Interface // admissionregistration, authentication, authorization
	Aggregator aggregator.Interface // apiregistration
	Dynamic    dynamic.Interface    // CRDs and the adopted resources
	Adoption   rest.Interface       // the adoption API (through the temporary APIService)
}

// NewClients builds the clients from a kubeconfig's rest.Config. Unless
// the config sets them, client-go's rate limits (5 requests a second) are
// raised: the writes of a rollback go one request an object while writes
// are paused.
func NewClients(cfg *rest.Config) (*Clients, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 && cfg.Burst == 0 && cfg.RateLimiter == nil {
		cfg.QPS, cfg.Burst = 200, 400
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	agg, err := aggregator.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	rc, err := AdoptionClient(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Kube: kube, Aggregator: agg, Dynamic: dyn, Adoption: rc}, nil
}

// AdoptionClient is a REST client for the adoption API's group version.
func AdoptionClient(cfg *rest.Config) (*rest.RESTClient, error) {
	c := rest.CopyConfig(cfg)
	c.GroupVersion = &schema.GroupVersion{Group: adoption.Group, Version: adoption.Version}
	c.APIPath = "/apis"
	c.NegotiatedSerializer = clientgoscheme.Codecs.WithoutConversion()
	c.ContentType = runtime.ContentTypeJSON
	c.AcceptContentTypes = runtime.ContentTypeJSON
	return rest.RESTClientFor(c)
}

// ErrRefused is returned when the run refused to go ahead: the reasons were
// printed to Options.Out.
var ErrRefused = errors.New("refused")

var crdGVR = apiextv1.SchemeGroupVersion.WithResource("customresourcedefinitions")

// run is one invocation's state.
type run struct {
	c            *Clients
	o            Options
	cfg          *Config
	targets      []*target
	groups       []string // the adopted groups: the project's with a CRD in the cluster
	user         string
	pausedAt     time.Time        // when this run made the pause (its first binding), or found it
	unpausedAt   time.Time        // when the last binding was deleted
	pauseDone    bool             // the pause's operation had done its work when it began to unpause
	pausedGroups []string         // the groups whose writes a pause holds
	phases       map[string]Phase // the phase of each group
}

// target is one adopted resource: a CRD of one of the project's groups.
type target struct {
	group, plural string
	crd           *apiextv1.CustomResourceDefinition
	state         *adoption.State
	version       string                       // the version objects are read and compared in
	read          []*unstructured.Unstructured // the objects as read from the side in charge
	stored        map[string]string            // namespace/name → the stored copy's resourceVersion
}

func (t *target) name() string { return t.plural + "." + t.group }

func (t *target) gvr() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: t.group, Version: t.version, Resource: t.plural}
}

func (t *target) namespaced() bool { return t.crd.Spec.Scope == apiextv1.NamespaceScoped }

func (t *target) hasStatus() bool {
	for _, v := range t.crd.Spec.Versions {
		if v.Name == t.version && v.Subresources != nil && v.Subresources.Status != nil {
			return true
		}
	}
	return false
}

// Main is the adopt command in the project at root: ConfigDir and
// SamplesDir are taken relative to root unless absolute, the cluster is
// Kubeconfig's.
func Main(ctx context.Context, root string, o Options) error {
	for _, d := range []*string{&o.ConfigDir, &o.SamplesDir} {
		if !filepath.IsAbs(*d) {
			*d = filepath.Join(root, *d)
		}
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig %s: %w", o.Kubeconfig, err)
	}
	c, err := NewClients(cfg)
	if err != nil {
		return err
	}
	return Run(ctx, c, o)
}

// Run adopts the project's CRDs (or rolls back with o.Rollback). A refusal
// returns an error wrapping ErrRefused after printing the reasons.
func Run(ctx context.Context, c *Clients, o Options) error {
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Timeout <= 0 {
		o.Timeout = 60 * time.Second
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	if o.Settle <= 0 {
		o.Settle = 2 * time.Second
	}
	if o.DryRun && o.Rollback {
		return errors.New("--dry-run and --rollback do not go together: --dry-run plans an adoption")
	}
	cfg, err := LoadConfig(o.ConfigDir)
	if err != nil {
		return err
	}
	r := &run{c: c, o: o, cfg: cfg}
	if o.Rollback {
		return r.rollback(ctx)
	}
	err = r.adopt(ctx)
	if o.DryRun && errors.Is(err, ErrRefused) {
		r.printf("dry run: the adoption would be refused")
	}
	return err
}

// load lists the CRDs of the project's groups: the targets.
func (r *run) load(ctx context.Context) error {
	list, err := r.c.Dynamic.Resource(crdGVR).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing the cluster's CRDs: %w", err)
	}
	groups := map[string]bool{}
	for _, g := range r.cfg.Groups {
		groups[g] = true
	}
	r.targets, r.groups = nil, nil
	seen := map[string]bool{}
	for i := range list.Items {
		crd, err := toCRD(&list.Items[i])
		if err != nil {
			return err
		}
		if !groups[crd.Spec.Group] {
			continue
		}
		r.targets = append(r.targets, &target{group: crd.Spec.Group, plural: crd.Spec.Names.Plural, crd: crd})
		if !seen[crd.Spec.Group] {
			seen[crd.Spec.Group] = true
			r.groups = append(r.groups, crd.Spec.Group)
		}
	}
	sort.Strings(r.groups)
	sort.Slice(r.targets, func(i, j int) bool { return r.targets[i].name() < r.targets[j].name() })
	return nil
}

// reloadCRDs reads each target's CRD again (after an update of the switch).
func (r *run) reloadCRD(ctx context.Context, t *target) error {
	u, err := r.c.Dynamic.Resource(crdGVR).Get(ctx, t.crd.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the CRD %s: %w", t.crd.Name, err)
	}
	crd, err := toCRD(u)
	if err != nil {
		return err
	}
	t.crd = crd
	return nil
}

func toCRD(u *unstructured.Unstructured) (*apiextv1.CustomResourceDefinition, error) {
	crd := &apiextv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, crd); err != nil {
		return nil, fmt.Errorf("the CRD %s does not decode: %w", u.GetName(), err)
	}
	return crd, nil
}

func (r *run) targetsOf(group string) []*target {
	var out []*target
	for _, t := range r.targets {
		if t.group == group {
			out = append(out, t)
		}
	}
	return out
}

func (r *run) names() string {
	var n []string
	for _, t := range r.targets {
		n = append(n, t.name())
	}
	return strings.Join(n, ", ")
}

func (r *run) printf(format string, args ...any) {
	fmt.Fprintf(r.o.Out, format+"\n", args...)
}

// wait polls cond every o.Poll until it answers true, an error, or o.Timeout
// passes: then the error says what was awaited and the last answer (why).
func (r *run) wait(ctx context.Context, what string, cond func() (bool, string, error)) error {
	deadline := time.Now().Add(r.o.Timeout)
	for {
		ok, why, err := cond()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %s (%s)", what, r.o.Timeout, why)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(r.o.Poll):
		}
	}
}

// key is namespace/name, or name for a cluster-scoped object.
func key(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func objKey(u *unstructured.Unstructured) string { return key(u.GetNamespace(), u.GetName()) }

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
