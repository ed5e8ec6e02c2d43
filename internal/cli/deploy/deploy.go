// Package deploy renders the Kubernetes configuration that runs a generated
// project in a cluster, aggregated behind kube-apiserver: a kustomize folder
// with the Namespace, ServiceAccount and RBAC, one APIService per served
// version, TLS certificates signed by a generated CA, the apiserver and
// controller-manager Deployments, and an etcd StatefulSet (unless an external
// etcd or a SQL datastore is given). Objects are built as typed k8s.io/api values, marshalled
// with sigs.k8s.io/yaml and checked by strict decoding before anything is written.
package deploy

import (
	"errors"
	"fmt"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/semver"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// Options describe one deployment of a project.
type Options struct {
	// Name prefixes every object and names the apiserver's Service.
	Name string
	// Namespace holds every namespaced object (and the ServiceAccount all
	// bindings name), except the RoleBinding that must live in kube-system.
	Namespace string
	// Image holds /apiserver and /controller-manager (build container).
	Image string
	// EtcdServers, when set, is an existing etcd cluster: no StatefulSet.
	EtcdServers []string
	// EtcdImage runs the etcd StatefulSet (see EtcdImageFor).
	EtcdImage string
	// DatastoreSecret, when set, names the Secret in Namespace whose key
	// DatastoreEndpointKey holds the apiserver's --datastore-endpoint (a
	// SQL database through kine): no etcd, neither a StatefulSet nor
	// --etcd-servers.
	DatastoreSecret string
	// Project says which controllers the controller-manager runs (built-in
	// kinds' among them).
	Project *project.Project
	// Kinds are the project's kinds as their markers declare them (the
	// generators' API loader): the controller-manager's RBAC covers them.
	Kinds []Kind
	// Versions are the served versions per full group name, most preferred
	// first (the apiserver's discovery order): one APIService each.
	Versions map[string][]string
	// MetricsReaders may get the controller-manager's /metrics (the
	// monitoring system's identity).
	MetricsReaders []rbacv1.Subject
	// Replicas of the apiserver and of the controller-manager (0: DefaultReplicas).
	Replicas int32
	// EtcdMembers of the etcd StatefulSet (0: DefaultEtcdMembers).
	EtcdMembers int32
}

// The Secret of --datastore-endpoint-secret, mounted read-only at
// DatastoreDir: the apiserver reads the URL from its key DatastoreEndpointKey
// (--datastore-endpoint-file), so that the URL, password included, is in no
// flag value, no environment, no ConfigMap and no process's command line;
// the URL may refer to files kept beside it (sslrootcert=DatastoreDir/ca.crt).
const (
	DatastoreEndpointKey = "endpoint"
	DatastoreDir         = "/var/run/apiserver/datastore"
)

// The HA topology build config writes by default: two replicas of each
// binary (the controller-manager's on a leader election Lease), three etcd
// members (a quorum that survives the loss of one).
const (
	DefaultReplicas    int32 = 2
	DefaultEtcdMembers int32 = 3
)

// ParseMetricsReader reads --metrics-reader: a ServiceAccount as
// namespace/name, or nothing when empty.
func ParseMetricsReader(s string) ([]rbacv1.Subject, error) {
	if s == "" {
		return nil, nil
	}
	ns, name, ok := strings.Cut(s, "/")
	if !ok || len(validation.IsDNS1123Label(ns)) > 0 || len(validation.IsDNS1123Subdomain(name)) > 0 {
		return nil, fmt.Errorf("--metrics-reader %q is not valid: want a ServiceAccount as namespace/name, such as monitoring/prometheus-k8s", s)
	}
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: ns, Name: name}}, nil
}

// MetricsReaderName names the ClusterRole allowed to get the
// controller-manager's /metrics, and its binding.
func MetricsReaderName(name string) string { return name + "-metrics-reader" }

// Kind is a kind of the project, as its markers declare it.
type Kind struct {
	project.KindDescriptor
	FullGroup string // the API group, e.g. stable.example.com
	Status    bool   // serves /status
	Scale     bool   // serves /scale
}

// Ports and priorities of the generated objects.
const (
	// SecurePort is the apiserver container's HTTPS port; the Service maps 443 to it.
	SecurePort  = 9443
	ServicePort = 443
	// MetricsPort serves the controller-manager's /healthz, /readyz and
	// /metrics over TLS (its --secure-port): /metrics to clients
	// kube-apiserver authenticates and authorizes (MetricsReaderName).
	MetricsPort = 8443
	EtcdPort    = 2379
	// EtcdPeerPort is where etcd members talk to each other (mutual TLS).
	EtcdPeerPort = 2380
	// EtcdMetricsPort serves etcd's /livez, /readyz, /health and /metrics over plain HTTP (no data).
	EtcdMetricsPort = 2381
	// GroupPriorityMinimum orders our groups among the cluster's: well after
	// the built-in *.k8s.io groups (17000-18000), as k8s.io/sample-apiserver does.
	GroupPriorityMinimum = 1000
	// VersionPriorityStep spaces the versions of a group: the most preferred
	// of n versions gets n*step, the least preferred step.
	VersionPriorityStep = 10
)

// Names of the objects, from --name.
func APIServerName(name string) string         { return name + "-apiserver" }
func ControllerManagerName(name string) string { return name + "-controller-manager" }
func EtcdName(name string) string              { return name + "-etcd" }
func ServingSecretName(name string) string     { return name + "-apiserver-tls" }
func EtcdServerSecretName(name string) string  { return name + "-etcd-server-tls" }
func EtcdClientSecretName(name string) string  { return name + "-etcd-client-tls" }

// APIServiceName is the name kube-apiserver requires: <version>.<group>.
func APIServiceName(group, version string) string { return version + "." + group }

// APIServiceNames lists the APIServices, groups sorted, most preferred version first.
func (o *Options) APIServiceNames() []string {
	var out []string
	for _, g := range sortedKeys(o.Versions) {
		for _, v := range o.Versions[g] {
			out = append(out, APIServiceName(g, v))
		}
	}
	return out
}

// maxNameLength keeps derived names (<name>-controller-manager, the etcd
// pod <name>-etcd-0 and its revision label) within the 63-character limit of labels and hostnames.
const maxNameLength = 40

// Validate checks the options, naming the flag at fault.
func (o *Options) Validate() error {
	if o.Name == "" {
		return errors.New("--name is required: it names the apiserver's Service and prefixes every object, e.g. --name crontab")
	}
	if errs := validation.IsDNS1035Label(o.Name); len(errs) > 0 || len(o.Name) > maxNameLength {
		return fmt.Errorf("--name %q is not valid: want a lowercase DNS label of at most %d characters (letters, digits, '-', starting with a letter), e.g. crontab", o.Name, maxNameLength)
	}
	if o.Namespace == "" {
		return errors.New("--namespace is required, e.g. --namespace crontab-system")
	}
	if errs := validation.IsDNS1123Label(o.Namespace); len(errs) > 0 {
		return fmt.Errorf("--namespace %q is not valid: want a lowercase DNS label (letters, digits, '-'), e.g. crontab-system: %s", o.Namespace, strings.Join(errs, "; "))
	}
	if o.Namespace == "kube-system" {
		return errors.New("--namespace kube-system is refused: give the apiserver a namespace of its own, e.g. --namespace " + o.Name + "-system")
	}
	if o.Image == "" {
		return errors.New("--image is required: the image built by `apiserver-boot build container`, e.g. --image registry.example.com/crontab:v0.1.0")
	}
	for _, s := range o.EtcdServers {
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("--etcd-servers %q is not valid: want comma-separated URLs such as https://etcd-0.etcd.example.svc:2379", s)
		}
	}
	if o.DatastoreSecret != "" {
		if errs := validation.IsDNS1123Subdomain(o.DatastoreSecret); len(errs) > 0 {
			return fmt.Errorf("--datastore-endpoint-secret %q is not valid: want the name of a Secret in --namespace (a lowercase DNS subdomain), e.g. %s-datastore", o.DatastoreSecret, o.Name)
		}
		if len(o.EtcdServers) > 0 {
			return errors.New("--datastore-endpoint-secret and --etcd-servers exclude each other: the apiserver stores its objects either in a SQL database (kine) or in etcd; give one of them")
		}
		if o.EtcdImage != "" {
			return errors.New("--datastore-endpoint-secret and --etcd-image exclude each other: with a SQL database no etcd runs; drop --etcd-image")
		}
	}
	if o.etcd() && o.EtcdImage == "" {
		return errors.New("no etcd image: give --etcd-image, --etcd-servers or --datastore-endpoint-secret")
	}
	if o.Project == nil || len(o.Versions) == 0 {
		return errors.New("the project serves no resources yet: run `apiserver-boot create group version resource` first")
	}
	return nil
}

// EtcdRepository is the etcd project's own release image: published by
// etcd's release process (also as quay.io/coreos/etcd) with tags equal to the
// Go module's version (v3.7.0), so the tag follows go.mod exactly. (Kubernetes'
// registry.k8s.io/etcd carries a packaging suffix, 3.6.4-0, and only the
// versions Kubernetes ships, so a newer etcd module may have no image there.)
const EtcdRepository = "gcr.io/etcd-development/etcd"

// EtcdModule is the etcd server module k8s.io/apiserver is built against.
const EtcdModule = "go.etcd.io/etcd/server/v3"

// EtcdImageFor returns the etcd image matching the etcd server version a
// project's go.mod requires: the apiserver is built and tested against it.
func EtcdImageFor(goMod []byte) (string, error) {
	f, err := modfile.ParseLax("go.mod", goMod, nil)
	if err != nil {
		return "", fmt.Errorf("go.mod: %w", err)
	}
	for _, r := range f.Require {
		if r.Mod.Path != EtcdModule {
			continue
		}
		v := r.Mod.Version
		if !semver.IsValid(v) || semver.Prerelease(v) != "" || semver.Build(v) != "" {
			return "", fmt.Errorf("go.mod requires %s %s, which has no release image: pass --etcd-image or --etcd-servers", EtcdModule, v)
		}
		return EtcdRepository + ":" + v, nil
	}
	return "", fmt.Errorf("go.mod does not require %s: pass --etcd-image or --etcd-servers (or run `go mod tidy`)", EtcdModule)
}
