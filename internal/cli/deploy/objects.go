package deploy

import (
	"fmt"
	"path"
	"sort"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/image"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// Components, as the app.kubernetes.io/component label says.
const (
	componentAPIServer         = "apiserver"
	componentControllerManager = "controller-manager"
	componentEtcd              = "etcd"
)

// Where the containers find their certificates.
const (
	servingCertDir = "/var/run/apiserver/serving"
	etcdClientDir  = "/var/run/apiserver/etcd"
	etcdTLSDir     = "/etc/etcd/tls"
	etcdDataDir    = "/var/lib/etcd"
)

func typeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func (o *Options) selector(component string) map[string]string {
	return map[string]string{"app.kubernetes.io/name": o.Name, "app.kubernetes.io/component": component}
}

func (o *Options) labels(component string) map[string]string {
	l := o.selector(component)
	if component == "" {
		delete(l, "app.kubernetes.io/component")
	}
	l["app.kubernetes.io/managed-by"] = "apiserver-boot"
	return l
}

func (o *Options) meta(name, component string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: o.Namespace, Labels: o.labels(component)}
}

// hasControllers tells whether the project runs any controller.
func (o *Options) hasControllers() bool {
	for _, r := range o.Project.Resources {
		if r.Controller {
			return true
		}
	}
	return false
}

// etcd tells whether the configuration runs its own etcd.
func (o *Options) etcd() bool { return len(o.EtcdServers) == 0 && o.DatastoreSecret == "" }

// ownsNamespace tells whether the Namespace is ours to create (and, with
// `kubectl delete -k`, to delete): never a namespace every cluster has.
func (o *Options) ownsNamespace() bool {
	switch o.Namespace {
	case "default", "kube-public", "kube-node-lease":
		return false
	}
	return true
}

func (o *Options) namespace() *corev1.Namespace {
	return &corev1.Namespace{
		TypeMeta: typeMeta("v1", "Namespace"),
		ObjectMeta: metav1.ObjectMeta{Name: o.Namespace, Labels: map[string]string{
			"app.kubernetes.io/name": o.Name, "app.kubernetes.io/managed-by": "apiserver-boot",
			// Every pod here runs as the image's nonroot user without privileges.
			"pod-security.kubernetes.io/enforce": "restricted",
		}},
	}
}

func (o *Options) serviceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{TypeMeta: typeMeta("v1", "ServiceAccount"), ObjectMeta: o.meta(o.Name, "")}
}

func (o *Options) subjects() []rbacv1.Subject {
	return []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: o.Name, Namespace: o.Namespace}}
}

// rbac grants the ServiceAccount what the two binaries need.
//
// The apiserver delegates authentication and authorization to kube-apiserver
// (TokenReview, SubjectAccessReview: system:auth-delegator) and reads the
// client CA and front-proxy settings from the extension-apiserver-authentication
// ConfigMap in kube-system (extension-apiserver-authentication-reader). In
// delegated mode it also admits requests as kube-apiserver does
// (NamespaceLifecycle, admission webhooks, admission policies) and applies the
// cluster's priority and fairness, reading namespaces, the admission
// configurations and the FlowSchemas through informers (the same rights as
// k8s.io/sample-apiserver's aggregated-apiserver-clusterrole).
//
// The controller-manager reads and writes every kind of the project (and the
// status and scale subresources), watches the built-in kinds it has
// controllers for, and holds its leader election Lease (and records Events)
// in its own namespace.
func (o *Options) rbac() []runtime.Object {
	objs := []runtime.Object{
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-auth-delegator", Labels: o.labels(componentAPIServer)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "system:auth-delegator"},
			Subjects:   o.subjects(),
		},
		&rbacv1.RoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-auth-reader", Namespace: "kube-system", Labels: o.labels(componentAPIServer)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: "extension-apiserver-authentication-reader"},
			Subjects:   o.subjects(),
		},
		&rbacv1.ClusterRole{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-apiserver", Labels: o.labels(componentAPIServer)},
			Rules:      ClusterRoleRules(),
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: o.Name + "-apiserver", Labels: o.labels(componentAPIServer)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: o.Name + "-apiserver"},
			Subjects:   o.subjects(),
		},
	}
	if !o.hasControllers() {
		return objs
	}
	cm := ControllerManagerName(o.Name)
	objs = append(objs,
		&rbacv1.ClusterRole{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: cm, Labels: o.labels(componentControllerManager)},
			Rules:      o.controllerRules(),
		},
		&rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: cm, Labels: o.labels(componentControllerManager)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: cm},
			Subjects:   o.subjects(),
		},
		&rbacv1.Role{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "Role"),
			ObjectMeta: o.meta(cm+"-leader-election", componentControllerManager),
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete"}},
				{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
			},
		},
		&rbacv1.RoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "RoleBinding"),
			ObjectMeta: o.meta(cm+"-leader-election", componentControllerManager),
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: cm + "-leader-election"},
			Subjects:   o.subjects(),
		},
		// Who may read the controller-manager's /metrics (a non-resource
		// URL, authorized by kube-apiserver through SubjectAccessReview;
		// like any such rule, it also covers the /metrics of the other
		// components that authorize that way, kube-apiserver's among them).
		&rbacv1.ClusterRole{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRole"),
			ObjectMeta: metav1.ObjectMeta{Name: MetricsReaderName(o.Name), Labels: o.labels(componentControllerManager)},
			Rules:      []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}},
		},
	)
	if len(o.MetricsReaders) > 0 {
		objs = append(objs, &rbacv1.ClusterRoleBinding{
			TypeMeta:   typeMeta("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
			ObjectMeta: metav1.ObjectMeta{Name: MetricsReaderName(o.Name), Labels: o.labels(componentControllerManager)},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: MetricsReaderName(o.Name)},
			Subjects:   o.MetricsReaders,
		})
	}
	return objs
}

// controllerRules: full rights on the project's own kinds, per group, and
// read and update rights on the built-in kinds that have a controller here.
func (o *Options) controllerRules() []rbacv1.PolicyRule {
	own := map[string]map[string]bool{}     // group -> resources
	sub := map[string]map[string]bool{}     // group -> plural/status, plural/scale
	builtin := map[string]map[string]bool{} // group -> resources
	add := func(m map[string]map[string]bool, g, r string) {
		if m[g] == nil {
			m[g] = map[string]bool{}
		}
		m[g][r] = true
	}
	for _, r := range o.Project.Resources {
		if !r.External || !r.Controller {
			continue
		}
		group, _, ok := project.BuiltinKind(r.Group, r.Version, r.Kind)
		if !ok {
			group = r.Group
		}
		add(builtin, group, r.Plural)
	}
	for _, k := range o.Kinds {
		add(own, k.FullGroup, k.Plural)
		if k.Status {
			add(sub, k.FullGroup, k.Plural+"/status")
		}
		if k.Scale {
			add(sub, k.FullGroup, k.Plural+"/scale")
		}
	}
	var rules []rbacv1.PolicyRule
	for _, g := range sortedKeys(own) {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: sortedKeys(own[g]),
			Verbs: []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection"}})
		if len(sub[g]) > 0 {
			rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: sortedKeys(sub[g]), Verbs: []string{"get", "update", "patch"}})
		}
	}
	for _, g := range sortedKeys(builtin) {
		rules = append(rules, rbacv1.PolicyRule{APIGroups: []string{g}, Resources: sortedKeys(builtin[g]),
			Verbs: []string{"get", "list", "watch", "update", "patch"}})
	}
	return rules
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// apiServices registers each served version of each group with
// kube-apiserver's aggregator, versionPriority following the apiserver's own
// preference so that kube-apiserver's discovery agrees with it.
func (o *Options) apiServices(caBundle []byte) []runtime.Object {
	var objs []runtime.Object
	for _, g := range sortedKeys(o.Versions) {
		versions := o.Versions[g] // most preferred first
		for i, v := range versions {
			objs = append(objs, &apiregistrationv1.APIService{
				TypeMeta:   typeMeta("apiregistration.k8s.io/v1", "APIService"),
				ObjectMeta: metav1.ObjectMeta{Name: APIServiceName(g, v), Labels: o.labels(componentAPIServer)},
				Spec: apiregistrationv1.APIServiceSpec{
					Group: g, Version: v,
					Service:              &apiregistrationv1.ServiceReference{Namespace: o.Namespace, Name: o.Name, Port: ptr.To[int32](ServicePort)},
					CABundle:             caBundle,
					GroupPriorityMinimum: GroupPriorityMinimum,
					VersionPriority:      int32(VersionPriorityStep * (len(versions) - i)),
				},
			})
		}
	}
	return objs
}

func tlsSecret(meta metav1.ObjectMeta, ca []byte, kp KeyPair) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta: typeMeta("v1", "Secret"), ObjectMeta: meta, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: kp.Cert, corev1.TLSPrivateKeyKey: kp.Key, corev1.ServiceAccountRootCAKey: ca},
	}
}

func (o *Options) secrets(c *Certificates) []runtime.Object {
	objs := []runtime.Object{tlsSecret(o.meta(ServingSecretName(o.Name), componentAPIServer), c.CA, c.Serving)}
	if c.EtcdServer != nil && c.EtcdClient != nil {
		objs = append(objs,
			tlsSecret(o.meta(EtcdServerSecretName(o.Name), componentEtcd), c.CA, *c.EtcdServer),
			tlsSecret(o.meta(EtcdClientSecretName(o.Name), componentAPIServer), c.CA, *c.EtcdClient))
	}
	return objs
}

// Pods run as the image's nonroot user with no privileges: Pod Security "restricted".
func podSecurity(fsGroup bool) *corev1.PodSecurityContext {
	sc := &corev1.PodSecurityContext{
		RunAsNonRoot:   ptr.To(true),
		RunAsUser:      ptr.To[int64](image.NonrootUID),
		RunAsGroup:     ptr.To[int64](image.NonrootUID),
		SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	if fsGroup { // volumes (certificates, etcd data) readable and writable by that group
		sc.FSGroup = ptr.To[int64](image.NonrootUID)
		sc.FSGroupChangePolicy = ptr.To(corev1.FSGroupChangeOnRootMismatch)
	}
	return sc
}

func containerSecurity() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

func secretVolume(name, secret string) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret, DefaultMode: ptr.To[int32](0o440)}}}
}

func tmpVolume() corev1.Volume {
	return corev1.Volume{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
}

func probe(path string, port intstr.IntOrString, scheme corev1.URIScheme, period, failures int32) *corev1.Probe {
	return &corev1.Probe{
		ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: port, Scheme: scheme}},
		PeriodSeconds:    period,
		FailureThreshold: failures,
		TimeoutSeconds:   5,
	}
}

func requests(cpu, memory string) corev1.ResourceRequirements {
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourceMemory: resource.MustParse(memory),
	}}
}

// EtcdURLs are the --etcd-servers of the apiserver (none with a SQL datastore).
func (o *Options) EtcdURLs() []string {
	if o.DatastoreSecret != "" {
		return nil
	}
	if !o.etcd() {
		return o.EtcdServers
	}
	// Every member: the client balances over them and fails over when one
	// goes (one name of the headless Service would pin it to one address).
	svc := EtcdName(o.Name)
	var urls []string
	for i := range o.etcdMembers() {
		urls = append(urls, fmt.Sprintf("https://%s-%d.%s.%s.svc:%d", svc, i, svc, o.Namespace, EtcdPort))
	}
	return urls
}

// apiserverArgs: the flags of pkg/apiserver for running aggregated in a cluster.
func (o *Options) apiserverArgs() []string {
	args := []string{
		fmt.Sprintf("--secure-port=%d", SecurePort),
		"--bind-address=0.0.0.0",
		"--tls-cert-file=" + servingCertDir + "/" + corev1.TLSCertKey,
		"--tls-private-key-file=" + servingCertDir + "/" + corev1.TLSPrivateKeyKey,
		// Authenticate and authorize through kube-apiserver with the pod's
		// ServiceAccount (in-cluster configuration): no kubeconfig needed.
		"--delegated-auth",
	}
	args = append(args, o.storageArgs()...)
	args = append(args,
		// A rolling update drops no request: on SIGTERM (after the preStop
		// pause) /readyz fails while requests are still served for 10s, then
		// in-flight requests drain and late ones get 429 with Retry-After.
		"--shutdown-delay-duration=10s",
		"--shutdown-send-retry-after=true",
		// The audit log, as the policy of the ConfigMap says, on standard
		// output (kubectl logs; a node's log collector).
		"--audit-policy-file="+auditDir+"/"+auditPolicyFile,
		"--audit-log-path=-")
	if o.etcd() {
		args = append(args,
			"--etcd-cafile="+etcdClientDir+"/"+corev1.ServiceAccountRootCAKey,
			"--etcd-certfile="+etcdClientDir+"/"+corev1.TLSCertKey,
			"--etcd-keyfile="+etcdClientDir+"/"+corev1.TLSPrivateKeyKey)
	}
	return args
}

// storageArgs point the apiserver at its storage: the etcd members, or
// the SQL database whose URL the mounted Secret holds (read from the file,
// so that the URL and its password are in no flag value and in no
// process's command line).
// With a SQL database, the apiserver is also told how many replicas share
// it, so that a sqlite:// URL in the Secret is refused at start rather than
// served by replicas each holding their own file.
func (o *Options) storageArgs() []string {
	if o.DatastoreSecret != "" {
		return []string{"--datastore-endpoint-file=" + path.Join(DatastoreDir, DatastoreEndpointKey),
			fmt.Sprintf("--datastore-replicas=%d", o.replicas())}
	}
	return []string{"--etcd-servers=" + strings.Join(o.EtcdURLs(), ",")}
}

func (o *Options) apiserverDeployment() *appsv1.Deployment {
	https := intstr.FromString("https")
	volumes := []corev1.Volume{secretVolume("serving-cert", ServingSecretName(o.Name)), tmpVolume(),
		{Name: "audit-policy", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: AuditPolicyName(o.Name)}}}}}
	mounts := []corev1.VolumeMount{{Name: "serving-cert", MountPath: servingCertDir, ReadOnly: true}, {Name: "tmp", MountPath: "/tmp"},
		{Name: "audit-policy", MountPath: auditDir, ReadOnly: true}}
	if o.etcd() {
		volumes = append(volumes, secretVolume("etcd-client-cert", EtcdClientSecretName(o.Name)))
		mounts = append(mounts, corev1.VolumeMount{Name: "etcd-client-cert", MountPath: etcdClientDir, ReadOnly: true})
	}
	if o.DatastoreSecret != "" {
		// Files the URL may name (sslrootcert=.../ca.crt, sslcert, sslkey).
		volumes = append(volumes, secretVolume("datastore", o.DatastoreSecret))
		mounts = append(mounts, corev1.VolumeMount{Name: "datastore", MountPath: DatastoreDir, ReadOnly: true})
	}
	startup := probe("/livez", https, corev1.URISchemeHTTPS, 5, 60) // up to 5 minutes for etcd (or the database) to come up
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: o.meta(APIServerName(o.Name), componentAPIServer),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(o.replicas()),
			Selector: &metav1.LabelSelector{MatchLabels: o.selector(componentAPIServer)},
			// A new pod is ready before an old one goes.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxUnavailable: ptr.To(intstr.FromInt32(0)), MaxSurge: ptr.To(intstr.FromInt32(1))}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: o.labels(componentAPIServer)},
				Spec: corev1.PodSpec{
					ServiceAccountName: o.Name,
					SecurityContext:    podSecurity(true),
					// Replicas on different nodes (and zones) where there are some.
					TopologySpreadConstraints: []corev1.TopologySpreadConstraint{
						{MaxSkew: 1, TopologyKey: corev1.LabelHostname, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: o.selector(componentAPIServer)}},
						{MaxSkew: 1, TopologyKey: corev1.LabelTopologyZone, WhenUnsatisfiable: corev1.ScheduleAnyway, LabelSelector: &metav1.LabelSelector{MatchLabels: o.selector(componentAPIServer)}},
					},
					// preStop pause + shutdown delay + draining.
					TerminationGracePeriodSeconds: ptr.To[int64](60),
					Containers: []corev1.Container{{
						Name:  "apiserver",
						Image: o.Image,
						// The image's entrypoint is /apiserver.
						Args:           o.apiserverArgs(),
						Ports:          []corev1.ContainerPort{{Name: "https", ContainerPort: SecurePort, Protocol: corev1.ProtocolTCP}},
						VolumeMounts:   mounts,
						StartupProbe:   startup,
						ReadinessProbe: probe("/readyz", https, corev1.URISchemeHTTPS, 5, 1),
						LivenessProbe:  probe("/livez", https, corev1.URISchemeHTTPS, 10, 3),
						// Endpoints and kube-proxy learn of the deletion
						// while the server still serves normally.
						Lifecycle:       &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
						Resources:       requests("100m", "128Mi"),
						SecurityContext: containerSecurity(),
					}},
					Volumes: volumes,
				},
			},
		},
	}
}

func (o *Options) service() *corev1.Service {
	return &corev1.Service{
		TypeMeta:   typeMeta("v1", "Service"),
		ObjectMeta: o.meta(o.Name, componentAPIServer),
		Spec: corev1.ServiceSpec{
			Selector: o.selector(componentAPIServer),
			Ports:    []corev1.ServicePort{{Name: "https", Port: ServicePort, TargetPort: intstr.FromString("https"), Protocol: corev1.ProtocolTCP}},
		},
	}
}

func (o *Options) controllerManagerDeployment() *appsv1.Deployment {
	metrics := intstr.FromString("https-metrics")
	return &appsv1.Deployment{
		TypeMeta:   typeMeta("apps/v1", "Deployment"),
		ObjectMeta: o.meta(ControllerManagerName(o.Name), componentControllerManager),
		Spec: appsv1.DeploymentSpec{
			// Replicas on one Lease: one leads, the others take over.
			Replicas: ptr.To(o.replicas()),
			Selector: &metav1.LabelSelector{MatchLabels: o.selector(componentControllerManager)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: o.labels(componentControllerManager)},
				Spec: corev1.PodSpec{
					Affinity:           o.spread(componentControllerManager),
					ServiceAccountName: o.Name,
					SecurityContext:    podSecurity(false),
					Containers: []corev1.Container{{
						Name:    "controller-manager",
						Image:   o.Image,
						Command: []string{"/controller-manager"},
						// In-cluster configuration (no --kubeconfig); the Lease
						// lives in the pod's namespace.
						// Health and metrics over TLS, /metrics for clients
						// kube-apiserver authenticates and authorizes (the
						// ServiceAccount may review tokens and access); the
						// plain port stays on the pod's loopback.
						Args:  []string{"--leader-elect=true", fmt.Sprintf("--secure-port=%d", MetricsPort), "--cert-dir=/tmp/certificates"},
						Ports: []corev1.ContainerPort{{Name: "https-metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP}},
						// /readyz answers 503 until this replica leads and its
						// informers synced: probing it would keep standby
						// replicas, and a rolling update's new pod, unready
						// forever. /healthz says the process serves.
						ReadinessProbe:  probe("/healthz", metrics, corev1.URISchemeHTTPS, 10, 3),
						LivenessProbe:   probe("/healthz", metrics, corev1.URISchemeHTTPS, 10, 3),
						Resources:       requests("50m", "64Mi"),
						SecurityContext: containerSecurity(),
						VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
					}},
					Volumes: []corev1.Volume{tmpVolume()},
				},
			},
		},
	}
}

// EtcdStorage is the size of etcd's volume (etcd's default quota is 2 GiB).
const EtcdStorage = "1Gi"

// etcd is one member serving clients over TLS with client certificate
// authentication (only holders of the apiserver's client certificate get
// in: a plain etcd would let any pod in the cluster bypass the apiserver),
// its peer URL on loopback, health and metrics on a plain-HTTP port for
// probes. Each member is <svc>-<i>, reachable as <svc>-<i>.<svc>.<namespace>.svc
// through the headless Service (before it is ready too: the members find
// each other to form the quorum that makes them ready).
func (o *Options) etcdObjects() []runtime.Object {
	svc := EtcdName(o.Name)
	members := o.etcdMembers()
	objs := []runtime.Object{
		&corev1.Service{
			TypeMeta:   typeMeta("v1", "Service"),
			ObjectMeta: o.meta(svc, componentEtcd),
			Spec: corev1.ServiceSpec{
				ClusterIP:                corev1.ClusterIPNone, // headless: DNS names the pods
				PublishNotReadyAddresses: true,
				Selector:                 o.selector(componentEtcd),
				Ports: []corev1.ServicePort{
					{Name: "client", Port: EtcdPort, TargetPort: intstr.FromString("client"), Protocol: corev1.ProtocolTCP},
					{Name: "peer", Port: EtcdPeerPort, TargetPort: intstr.FromString("peer"), Protocol: corev1.ProtocolTCP},
				},
			},
		},
		&appsv1.StatefulSet{
			TypeMeta:   typeMeta("apps/v1", "StatefulSet"),
			ObjectMeta: o.meta(svc, componentEtcd),
			Spec: appsv1.StatefulSetSpec{
				ServiceName: svc,
				Replicas:    ptr.To(members),
				// Every member starts at once: one alone never becomes ready
				// without the quorum the others make.
				PodManagementPolicy: appsv1.ParallelPodManagement,
				Selector:            &metav1.LabelSelector{MatchLabels: o.selector(componentEtcd)},
				Template: corev1.PodTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: o.labels(componentEtcd)},
					Spec: corev1.PodSpec{
						SecurityContext:              podSecurity(true),
						AutomountServiceAccountToken: ptr.To(false),
						Affinity:                     o.spread(componentEtcd),
						Containers:                   []corev1.Container{o.etcdContainer(svc, members)},
						Volumes:                      []corev1.Volume{secretVolume("tls", EtcdServerSecretName(o.Name))},
					},
				},
				VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
					TypeMeta:   typeMeta("v1", "PersistentVolumeClaim"),
					ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: o.labels(componentEtcd)},
					Spec: corev1.PersistentVolumeClaimSpec{
						AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
						Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(EtcdStorage)}},
					},
				}},
			},
		},
	}
	// A voluntary disruption (a node drain) may take one member at a time
	// while the others keep the quorum.
	if members > 1 {
		objs = append(objs, o.disruptionBudget(svc, componentEtcd, intstr.FromInt32(members/2+1)))
	}
	return objs
}

// etcdContainer is the container of each member of the StatefulSet svc.
func (o *Options) etcdContainer(svc string, members int32) corev1.Container {
	metrics := intstr.FromString("metrics")
	return corev1.Container{
		Name:    "etcd",
		Image:   o.EtcdImage,
		Command: []string{"/usr/local/bin/etcd"},
		Args:    o.etcdArgs(svc, members),
		Env: []corev1.EnvVar{{Name: "POD_NAME", ValueFrom: &corev1.EnvVarSource{
			FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}}},
		Ports: []corev1.ContainerPort{
			{Name: "client", ContainerPort: EtcdPort, Protocol: corev1.ProtocolTCP},
			{Name: "peer", ContainerPort: EtcdPeerPort, Protocol: corev1.ProtocolTCP},
			{Name: "metrics", ContainerPort: EtcdMetricsPort, Protocol: corev1.ProtocolTCP},
		},
		VolumeMounts: []corev1.VolumeMount{
			{Name: "data", MountPath: etcdDataDir},
			{Name: "tls", MountPath: etcdTLSDir, ReadOnly: true},
		},
		StartupProbe:    probe("/readyz", metrics, corev1.URISchemeHTTP, 5, 60),
		ReadinessProbe:  probe("/readyz", metrics, corev1.URISchemeHTTP, 10, 3),
		LivenessProbe:   probe("/livez", metrics, corev1.URISchemeHTTP, 10, 3),
		Resources:       requests("100m", "128Mi"),
		SecurityContext: containerSecurity(),
	}
}

// etcdArgs are a member's flags: its name and URLs from the pod's name, the
// initial cluster of every member, TLS for clients and peers with a
// certificate of the configuration's CA.
func (o *Options) etcdArgs(svc string, members int32) []string {
	peer := func(member string) string {
		return fmt.Sprintf("https://%s.%s.%s.svc:%d", member, svc, o.Namespace, EtcdPeerPort)
	}
	var cluster []string
	for i := range members {
		m := fmt.Sprintf("%s-%d", svc, i)
		cluster = append(cluster, m+"="+peer(m))
	}
	self := fmt.Sprintf("$(POD_NAME).%s.%s.svc", svc, o.Namespace)
	return []string{
		"--name=$(POD_NAME)",
		"--data-dir=" + etcdDataDir + "/data",
		fmt.Sprintf("--listen-client-urls=https://0.0.0.0:%d", EtcdPort),
		fmt.Sprintf("--advertise-client-urls=https://%s:%d", self, EtcdPort),
		fmt.Sprintf("--listen-peer-urls=https://0.0.0.0:%d", EtcdPeerPort),
		fmt.Sprintf("--initial-advertise-peer-urls=https://%s:%d", self, EtcdPeerPort),
		"--initial-cluster=" + strings.Join(cluster, ","),
		"--initial-cluster-state=new",
		"--initial-cluster-token=" + svc,
		fmt.Sprintf("--listen-metrics-urls=http://0.0.0.0:%d", EtcdMetricsPort),
		"--client-cert-auth=true",
		"--trusted-ca-file=" + etcdTLSDir + "/" + corev1.ServiceAccountRootCAKey,
		"--cert-file=" + etcdTLSDir + "/" + corev1.TLSCertKey,
		"--key-file=" + etcdTLSDir + "/" + corev1.TLSPrivateKeyKey,
		"--peer-client-cert-auth=true",
		"--peer-trusted-ca-file=" + etcdTLSDir + "/" + corev1.ServiceAccountRootCAKey,
		"--peer-cert-file=" + etcdTLSDir + "/" + corev1.TLSCertKey,
		"--peer-key-file=" + etcdTLSDir + "/" + corev1.TLSPrivateKeyKey,
	}
}

// etcdMembers is the size of the etcd StatefulSet (default 3).
func (o *Options) etcdMembers() int32 {
	if o.EtcdMembers > 0 {
		return o.EtcdMembers
	}
	return DefaultEtcdMembers
}

// replicas is the number of apiserver and controller-manager pods (default 2).
func (o *Options) replicas() int32 {
	if o.Replicas > 0 {
		return o.Replicas
	}
	return DefaultReplicas
}

// spread prefers the component's pods on different nodes: a node lost
// takes one of them (preferred, so a one-node cluster still runs them).
func (o *Options) spread(component string) *corev1.Affinity {
	return &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: o.selector(component)},
				TopologyKey:   corev1.LabelHostname,
			},
		}},
	}}
}

// disruptionBudget keeps minAvailable pods of the component through
// voluntary disruptions (node drains, cluster upgrades).
func (o *Options) disruptionBudget(name, component string, minAvailable intstr.IntOrString) *policyv1.PodDisruptionBudget {
	return &policyv1.PodDisruptionBudget{
		TypeMeta:   typeMeta("policy/v1", "PodDisruptionBudget"),
		ObjectMeta: o.meta(name, component),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MinAvailable: &minAvailable,
			Selector:     &metav1.LabelSelector{MatchLabels: o.selector(component)},
		},
	}
}
