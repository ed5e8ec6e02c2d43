package main

import (
	"bufio"
	"bytes"
	"crypto/x509"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	certutil "k8s.io/client-go/util/cert"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
)

// deployProject writes the files build config and build container read: a
// PROJECT with two groups, three versions of one (served in priority order
// v2, v1, v1beta1), a cluster-scoped kind with /scale and a controller of a
// built-in kind; their versioned types (markers only); a go.mod requiring
// etcd; and two tiny commands standing in for the apiserver and
// controller-manager (compiled in seconds).
func deployProject(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/crontab\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v3.7.0 // indirect\n",
		"PROJECT": `version: "1"
domain: example.com
module: example.com/crontab
resources:
- {group: stable, version: v1beta1, kind: CronTab, plural: crontabs, singular: crontab, scope: Namespaced, subresources: [status], controller: false}
- {group: stable, version: v1, kind: CronTab, plural: crontabs, singular: crontab, scope: Namespaced, subresources: [status], controller: true}
- {group: stable, version: v2, kind: CronTab, plural: crontabs, singular: crontab, scope: Namespaced, subresources: [status], controller: false}
- {group: batch, version: v1alpha1, kind: Ox, plural: oxen, singular: ox, scope: Cluster, subresources: [scale], controller: false}
- {group: apps, version: v1, kind: Deployment, plural: deployments, singular: deployment, scope: "", controller: true, external: true, package: k8s.io/api/apps/v1}
`,
	}
	// The versioned types, as the generators read them (source only).
	kind := func(group, version, kind, plural, scope, extra string) {
		files["pkg/apis/"+group+"/"+version+"/doc.go"] = "// +groupName=" + group + ".example.com\npackage " + version + "\n"
		files["pkg/apis/"+group+"/"+version+"/"+strings.ToLower(kind)+"_types.go"] = "package " + version + "\n\n" +
			"import metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n" +
			"// +resource:path=" + plural + ",strategy=" + kind + "Strategy,scope=" + scope + "\n" + extra +
			"type " + kind + " struct {\n\tmetav1.TypeMeta   `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n}\n"
	}
	kind("stable", "v1beta1", "CronTab", "crontabs", "Namespaced", "// +subresource:status\n")
	kind("stable", "v1", "CronTab", "crontabs", "Namespaced", "// +storageversion\n// +subresource:status\n")
	kind("stable", "v2", "CronTab", "crontabs", "Namespaced", "// +subresource:status\n")
	kind("batch", "v1alpha1", "Ox", "oxen", "Cluster", "// +subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas\n")
	for _, b := range []string{"apiserver", "controller-manager"} {
		files["cmd/"+b+"/main.go"] = "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"runtime\"\n)\n\nfunc main() {\n\tfmt.Println(\"" + b + "\", runtime.GOOS+\"/\"+runtime.GOARCH, os.Args[1:])\n}\n"
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// strictDecode reads every object of multi-document YAML with client-go's
// scheme and kube-aggregator's, failing on unknown kinds and fields.
func strictDecode(t *testing.T, content []byte) []runtime.Object {
	t.Helper()
	scheme := runtime.NewScheme()
	clientgoscheme.AddToScheme(scheme)
	apiregistrationv1.AddToScheme(scheme)
	decoder := serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer()
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(content)))
	var out []runtime.Object
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if onlyComments(doc) {
			continue
		}
		obj, _, err := decoder.Decode(doc, nil, nil)
		if err != nil {
			t.Fatalf("%v in:\n%s", err, doc)
		}
		out = append(out, obj)
	}
}

func onlyComments(doc []byte) bool {
	for _, l := range strings.Split(string(doc), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}

func kustomize(t *testing.T, dir string) []runtime.Object {
	t.Helper()
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	out, err := exec.Command(kubectl, "kustomize", dir).Output()
	if err != nil {
		t.Fatalf("kubectl kustomize %s: %v", dir, err)
	}
	return strictDecode(t, out)
}

func TestBuildConfig(t *testing.T) {
	dir := deployProject(t)
	const img = "registry.example.com/crontab:v0.1.0"
	out, err := run(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img, "--metrics-reader", "monitoring/prometheus-k8s")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	config := filepath.Join(dir, "config")
	objs := kustomize(t, config)

	byKind := map[string][]runtime.Object{}
	for _, o := range objs {
		k := o.GetObjectKind().GroupVersionKind().Kind
		byKind[k] = append(byKind[k], o)
	}
	for kind, n := range map[string]int{
		"Namespace": 1, "ServiceAccount": 1, "Secret": 3, "Service": 2, "Deployment": 2, "StatefulSet": 1,
		"ClusterRole": 3, "ClusterRoleBinding": 4, "Role": 1, "RoleBinding": 2, "APIService": 4, "ConfigMap": 1,
	} {
		if len(byKind[kind]) != n {
			t.Errorf("%d %s objects, want %d", len(byKind[kind]), kind, n)
		}
	}

	// Every binding names the ServiceAccount in --namespace, but the
	// metrics reader's, which names the monitoring system's (--metrics-reader).
	var subjects []rbacv1.Subject
	for _, o := range objs {
		switch b := o.(type) {
		case *rbacv1.ClusterRoleBinding:
			if b.Name == "crontab-metrics-reader" {
				if want := []rbacv1.Subject{{Kind: "ServiceAccount", Name: "prometheus-k8s", Namespace: "monitoring"}}; !reflect.DeepEqual(b.Subjects, want) || b.RoleRef.Name != "crontab-metrics-reader" {
					t.Errorf("metrics reader binding: %+v to %s", b.Subjects, b.RoleRef.Name)
				}
				continue
			}
			subjects = append(subjects, b.Subjects...)
		case *rbacv1.RoleBinding:
			subjects = append(subjects, b.Subjects...)
			if b.RoleRef.Name == "extension-apiserver-authentication-reader" && b.Namespace != "kube-system" {
				t.Errorf("the authentication reader RoleBinding is in %q, want kube-system", b.Namespace)
			}
		}
	}
	if len(subjects) != 5 {
		t.Errorf("%d subjects, want 5", len(subjects))
	}
	for _, s := range subjects {
		if s.Kind != "ServiceAccount" || s.Name != "crontab" || s.Namespace != "crontab-system" {
			t.Errorf("subject %+v, want the ServiceAccount crontab in crontab-system", s)
		}
	}
	var roleRefs []string
	for _, o := range byKind["ClusterRoleBinding"] {
		roleRefs = append(roleRefs, o.(*rbacv1.ClusterRoleBinding).RoleRef.Name)
	}
	if !slices.Contains(roleRefs, "system:auth-delegator") {
		t.Errorf("no binding to system:auth-delegator: %v", roleRefs)
	}
	// The controller-manager may use every kind of the project (and status,
	// scale), the built-in kind it has a controller for, and its Lease.
	// The apiserver reads what admission and priority and fairness watch.
	granted := map[string][]string{} // ClusterRole -> resource.group:verbs
	for _, o := range byKind["ClusterRole"] {
		cr := o.(*rbacv1.ClusterRole)
		for _, r := range cr.Rules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					granted[cr.Name] = append(granted[cr.Name], res+"."+g+":"+strings.Join(r.Verbs, ","))
				}
			}
		}
	}
	for role, wants := range map[string][]string{
		"crontab-controller-manager": {"crontabs.stable.example.com:get,list,watch,create", "crontabs/status.stable.example.com:get,update", "oxen.batch.example.com:get", "oxen/scale.batch.example.com:get,update", "deployments.apps:get,list,watch"},
		"crontab-apiserver":          {"namespaces.:get,list,watch", "validatingwebhookconfigurations.admissionregistration.k8s.io:get,list,watch", "flowschemas.flowcontrol.apiserver.k8s.io:list,watch"},
	} {
		for _, want := range wants {
			if !slices.ContainsFunc(granted[role], func(g string) bool { return strings.HasPrefix(g, want) }) {
				t.Errorf("ClusterRole %s lacks %s: %v", role, want, granted[role])
			}
		}
	}
	leases := byKind["Role"][0].(*rbacv1.Role)
	if leases.Namespace != "crontab-system" || leases.Rules[0].Resources[0] != "leases" {
		t.Errorf("leader election Role: %+v", leases)
	}

	// APIServices: one per version, in Kubernetes' priority order, pointing at the Service.
	priority := map[string]int32{}
	var caBundle []byte
	for _, o := range byKind["APIService"] {
		a := o.(*apiregistrationv1.APIService)
		priority[a.Name] = a.Spec.VersionPriority
		if a.Spec.Service.Name != "crontab" || a.Spec.Service.Namespace != "crontab-system" || *a.Spec.Service.Port != 443 || a.Spec.GroupPriorityMinimum <= 0 {
			t.Errorf("%s: %+v", a.Name, a.Spec)
		}
		if a.Name != a.Spec.Version+"."+a.Spec.Group {
			t.Errorf("APIService %s serves %s/%s", a.Name, a.Spec.Group, a.Spec.Version)
		}
		caBundle = a.Spec.CABundle
	}
	if !(priority["v2.stable.example.com"] > priority["v1.stable.example.com"] && priority["v1.stable.example.com"] > priority["v1beta1.stable.example.com"] && priority["v1beta1.stable.example.com"] > 0) || priority["v1alpha1.batch.example.com"] <= 0 {
		t.Errorf("version priorities %v, want v2 > v1 > v1beta1 > 0", priority)
	}

	// The serving certificate verifies against the caBundle for the Service's DNS name.
	secrets := map[string]*corev1.Secret{}
	for _, o := range byKind["Secret"] {
		s := o.(*corev1.Secret)
		secrets[s.Name] = s
		if s.Type != corev1.SecretTypeTLS || s.Namespace != "crontab-system" {
			t.Errorf("Secret %s: type %s in %s", s.Name, s.Type, s.Namespace)
		}
	}
	serving := secrets["crontab-apiserver-tls"]
	if serving == nil {
		t.Fatalf("no serving Secret: %v", secrets)
	}
	verify := func(cert []byte, dnsName string, usage x509.ExtKeyUsage) error {
		roots := x509.NewCertPool()
		if !roots.AppendCertsFromPEM(caBundle) {
			t.Fatal("the caBundle holds no certificate")
		}
		certs, err := certutil.ParseCertsPEM(cert)
		if err != nil {
			t.Fatal(err)
		}
		_, err = certs[0].Verify(x509.VerifyOptions{DNSName: dnsName, Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}})
		return err
	}
	for _, name := range []string{"crontab.crontab-system.svc", "crontab.crontab-system.svc.cluster.local"} {
		if err := verify(serving.Data["tls.crt"], name, x509.ExtKeyUsageServerAuth); err != nil {
			t.Errorf("the serving certificate does not verify for %s: %v", name, err)
		}
	}
	if err := verify(serving.Data["tls.crt"], "crontab.other.svc", x509.ExtKeyUsageServerAuth); err == nil {
		t.Error("the serving certificate verifies for another namespace")
	}
	if err := verify(secrets["crontab-etcd-server-tls"].Data["tls.crt"], "crontab-etcd.crontab-system.svc", x509.ExtKeyUsageServerAuth); err != nil {
		t.Errorf("etcd's serving certificate: %v", err)
	}
	if err := verify(secrets["crontab-etcd-client-tls"].Data["tls.crt"], "", x509.ExtKeyUsageClientAuth); err != nil {
		t.Errorf("the etcd client certificate: %v", err)
	}
	if st, _ := os.Stat(filepath.Join(config, "certificates.yaml")); st == nil || st.Mode().Perm() != 0o600 {
		t.Errorf("certificates.yaml holds private keys: want mode 0600, got %v", st)
	}

	// The Deployments and the etcd StatefulSet.
	deployments := map[string]*appsv1.Deployment{}
	for _, o := range byKind["Deployment"] {
		d := o.(*appsv1.Deployment)
		deployments[d.Name] = d
		if c := d.Spec.Template.Spec.Containers[0]; c.Image != img || d.Spec.Template.Spec.ServiceAccountName != "crontab" {
			t.Errorf("%s runs %s as %s", d.Name, c.Image, d.Spec.Template.Spec.ServiceAccountName)
		}
	}
	api := deployments["crontab-apiserver"].Spec.Template.Spec.Containers[0]
	for _, flag := range []string{"--delegated-auth", "--etcd-servers=https://crontab-etcd-0.crontab-etcd.crontab-system.svc:2379,https://crontab-etcd-1.crontab-etcd.crontab-system.svc:2379,https://crontab-etcd-2.crontab-etcd.crontab-system.svc:2379", "--tls-cert-file=/var/run/apiserver/serving/tls.crt", "--bind-address=0.0.0.0", "--secure-port=9443"} {
		if !slices.Contains(api.Args, flag) {
			t.Errorf("apiserver args %v lack %s", api.Args, flag)
		}
	}
	if api.ReadinessProbe.HTTPGet.Path != "/readyz" || api.LivenessProbe.HTTPGet.Path != "/livez" || api.ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Errorf("apiserver probes: readiness %+v, liveness %+v", api.ReadinessProbe.HTTPGet, api.LivenessProbe.HTTPGet)
	}
	cm := deployments["crontab-controller-manager"].Spec.Template.Spec.Containers[0]
	if !slices.Contains(cm.Args, "--leader-elect=true") || cm.Command[0] != "/controller-manager" {
		t.Errorf("controller-manager: command %v args %v", cm.Command, cm.Args)
	}
	sts := byKind["StatefulSet"][0].(*appsv1.StatefulSet)
	if got := sts.Spec.Template.Spec.Containers[0].Image; got != "gcr.io/etcd-development/etcd:v3.7.0" {
		t.Errorf("etcd image %s, want the tag of go.etcd.io/etcd/server/v3 in go.mod (v3.7.0)", got)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.ServiceName != "crontab-etcd" {
		t.Errorf("etcd StatefulSet: %+v", sts.Spec)
	}
	t.Logf("kubectl apply -k --dry-run=client needs a server (discovery, REST mapping): left to the aggregation test")

	// +versionPriority reorders the versions, in the server's discovery and in the APIServices alike.
	doc := filepath.Join(dir, "pkg", "apis", "stable", "v1beta1", "doc.go")
	os.WriteFile(doc, []byte("// +versionPriority=100\n// +groupName=stable.example.com\npackage v1beta1\n"), 0o644)
	if out, err := run(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	priority = map[string]int32{}
	for _, o := range kustomize(t, config) {
		if a, ok := o.(*apiregistrationv1.APIService); ok {
			priority[a.Name] = a.Spec.VersionPriority
		}
	}
	if !(priority["v1beta1.stable.example.com"] > priority["v2.stable.example.com"] && priority["v2.stable.example.com"] > priority["v1.stable.example.com"]) {
		t.Errorf("with +versionPriority=100 on v1beta1: priorities %v, want v1beta1 > v2 > v1", priority)
	}

	// Again: the certificates are kept, nothing changes.
	before, _ := os.ReadFile(filepath.Join(config, "certificates.yaml"))
	out, err = run(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img)
	if err != nil || !strings.Contains(out, "Kept the certificates") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(filepath.Join(config, "certificates.yaml")); !bytes.Equal(before, after) {
		t.Error("a second run changed certificates.yaml")
	}
	out, err = run(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img, "--force")
	if err != nil || !strings.Contains(out, "Issued a new CA") {
		t.Fatalf("--force: %v\n%s", err, out)
	}
	// Another namespace needs another certificate; an external etcd removes
	// the StatefulSet and its certificates.
	out, err = run(t, dir, "build", "config", "--name", "crontab", "--namespace", "other", "--image", img, "--etcd-servers", "https://etcd.example.com:2379")
	if err != nil || !strings.Contains(out, "did not fit") || !strings.Contains(out, "removed config/etcd.yaml") {
		t.Fatalf("--namespace other --etcd-servers: %v\n%s", err, out)
	}
	objs = kustomize(t, config)
	for _, o := range objs {
		switch o := o.(type) {
		case *appsv1.StatefulSet:
			t.Error("a StatefulSet with --etcd-servers")
		case *appsv1.Deployment:
			if o.Name == "crontab-apiserver" && !slices.Contains(o.Spec.Template.Spec.Containers[0].Args, "--etcd-servers=https://etcd.example.com:2379") {
				t.Errorf("apiserver args %v", o.Spec.Template.Spec.Containers[0].Args)
			}
		case *corev1.Secret:
			if o.Namespace != "other" || o.Name != "crontab-apiserver-tls" {
				t.Errorf("Secret %s/%s", o.Namespace, o.Name)
			}
		case *rbacv1.RoleBinding:
			if o.Subjects[0].Namespace != "other" {
				t.Errorf("RoleBinding %s binds %+v", o.Name, o.Subjects)
			}
		}
	}
}

func TestBuildConfigBadInputWritesNothing(t *testing.T) {
	dir := deployProject(t)
	before := listFiles(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "--image is required"},
		{[]string{"--image", "not an image"}, "--image"},
		{[]string{"--image", "r.example.com/x@sha256:abc"}, "--image"},
		{[]string{"--image", "r.example.com/x:v1", "--name", "Crontab"}, "--name"},
		{[]string{"--image", "r.example.com/x:v1", "--name", strings.Repeat("a", 41)}, "--name"},
		{[]string{"--image", "r.example.com/x:v1", "--namespace", "a_b"}, "--namespace"},
		{[]string{"--image", "r.example.com/x:v1", "--namespace", "kube-system"}, "--namespace"},
		{[]string{"--image", "r.example.com/x:v1", "--etcd-servers", "etcd:2379"}, "--etcd-servers"},
		{[]string{"--image", "r.example.com/x:v1", "--metrics-reader", "prometheus"}, "--metrics-reader \"prometheus\" is not valid"},
		{[]string{"--image", "r.example.com/x:v1", "--replicas", "0"}, "--replicas 0 is not valid"},
		{[]string{"--image", "r.example.com/x:v1", "--etcd-members", "2"}, "--etcd-members 2 is not valid"},
		{[]string{"--image", "r.example.com/x:v1", "--etcd-image", "BAD IMAGE"}, "--etcd-image"},
	} {
		_, err := run(t, dir, append([]string{"build", "config"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: want an error containing %q, got %v", tc.args, tc.want, err)
		}
	}
	// A go.mod without etcd: the image cannot be chosen.
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/crontab\n\ngo 1.26.0\n"), 0o644)
	if _, err := run(t, dir, "build", "config", "--image", "r.example.com/x:v1"); err == nil || !strings.Contains(err.Error(), "--etcd-image") {
		t.Errorf("no etcd in go.mod: want an error naming --etcd-image, got %v", err)
	}
	if after := listFiles(t, dir); len(after) != len(before) {
		t.Errorf("files written on error: %v", after)
	}
}

// TestBuildConfigHA: by default a 3-member etcd (stable names, client and
// peer mutual TLS, members started together, spread over nodes, a budget
// keeping the quorum), two apiserver replicas (budget, spread, readiness
// and liveness, graceful shutdown) and two controller-managers on a Lease;
// --replicas 1 --etcd-members 1 keeps a small setup; the etcd membership of
// an earlier run is not changed by a flag.
func TestBuildConfigHA(t *testing.T) {
	dir := deployProject(t)
	const img = "registry.example.com/crontab:v0.1.0"
	mustRun(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img)
	objs := kustomize(t, filepath.Join(dir, "config"))
	var etcd *appsv1.StatefulSet
	deployments := map[string]*appsv1.Deployment{}
	budgets := map[string]int32{}
	for _, o := range objs {
		switch x := o.(type) {
		case *appsv1.StatefulSet:
			etcd = x
		case *appsv1.Deployment:
			deployments[x.Name] = x
		case *policyv1.PodDisruptionBudget:
			budgets[x.Name] = x.Spec.MinAvailable.IntVal
		}
	}
	if etcd == nil || *etcd.Spec.Replicas != 3 || etcd.Spec.PodManagementPolicy != appsv1.ParallelPodManagement || etcd.Spec.Template.Spec.Affinity == nil {
		t.Fatalf("etcd: %+v", etcd)
	}
	args := strings.Join(etcd.Spec.Template.Spec.Containers[0].Args, " ")
	for _, want := range []string{
		"--name=$(POD_NAME)",
		"--initial-cluster=crontab-etcd-0=https://crontab-etcd-0.crontab-etcd.crontab-system.svc:2380,crontab-etcd-1=https://crontab-etcd-1.crontab-etcd.crontab-system.svc:2380,crontab-etcd-2=https://crontab-etcd-2.crontab-etcd.crontab-system.svc:2380",
		"--initial-advertise-peer-urls=https://$(POD_NAME).crontab-etcd.crontab-system.svc:2380",
		"--client-cert-auth=true", "--peer-client-cert-auth=true", "--peer-trusted-ca-file=",
	} {
		if !strings.Contains(args, want) {
			t.Errorf("etcd args lack %s:\n%s", want, args)
		}
	}
	if budgets["crontab-etcd"] != 2 || budgets["crontab-apiserver"] != 1 {
		t.Errorf("disruption budgets (minAvailable): %v, want etcd 2 and apiserver 1", budgets)
	}
	api, cm := deployments["crontab-apiserver"], deployments["crontab-controller-manager"]
	if *api.Spec.Replicas != 2 || *cm.Spec.Replicas != 2 {
		t.Errorf("replicas: apiserver %d, controller-manager %d; want 2 and 2", *api.Spec.Replicas, *cm.Spec.Replicas)
	}
	pod := api.Spec.Template.Spec
	c := pod.Containers[0]
	if len(pod.TopologySpreadConstraints) == 0 || c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil ||
		c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/livez" || !slices.Contains(c.Args, "--shutdown-delay-duration=10s") ||
		*pod.TerminationGracePeriodSeconds < 15 {
		t.Errorf("apiserver pod: spread %v, lifecycle %+v, probes %s %s, args %v, grace %v", pod.TopologySpreadConstraints, c.Lifecycle,
			c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path, c.Args, pod.TerminationGracePeriodSeconds)
	}
	if !slices.Contains(cm.Spec.Template.Spec.Containers[0].Args, "--leader-elect=true") {
		t.Errorf("controller-manager without leader election: %v", cm.Spec.Template.Spec.Containers[0].Args)
	}
	// The etcd server certificate is also its peer certificate.
	certsYAML, _ := os.ReadFile(filepath.Join(dir, "config", deploy.CertificatesFile))
	if !strings.Contains(string(certsYAML), "crontab-etcd-server-tls") {
		t.Fatalf("no etcd server certificate")
	}

	// Another member count on an existing etcd: refused, nothing written.
	before, _ := os.ReadFile(filepath.Join(dir, "config", deploy.EtcdFile))
	_, err := run(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img, "--etcd-members", "1")
	if err == nil || !strings.Contains(err.Error(), "runs 3 etcd member(s), and --etcd-members is 1") || !strings.Contains(err.Error(), "--etcd-members 3") {
		t.Errorf("changing the etcd membership: %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, "config", deploy.EtcdFile)); string(after) != string(before) {
		t.Errorf("etcd.yaml changed by a refused run")
	}

	// Small: one of each, no budgets.
	mustRun(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img, "--replicas", "1", "--etcd-members", "1", "--output", "small")
	for _, o := range kustomize(t, filepath.Join(dir, "small")) {
		switch x := o.(type) {
		case *policyv1.PodDisruptionBudget:
			t.Errorf("a budget in the small setup: %s", x.Name)
		case *appsv1.StatefulSet:
			if *x.Spec.Replicas != 1 || !strings.Contains(strings.Join(x.Spec.Template.Spec.Containers[0].Args, " "), "--initial-cluster=crontab-etcd-0=https://crontab-etcd-0.crontab-etcd.crontab-system.svc:2380 ") {
				t.Errorf("small etcd: %d members, %v", *x.Spec.Replicas, x.Spec.Template.Spec.Containers[0].Args)
			}
		case *appsv1.Deployment:
			if *x.Spec.Replicas != 1 {
				t.Errorf("small %s: %d replicas", x.Name, *x.Spec.Replicas)
			}
		}
	}
}
