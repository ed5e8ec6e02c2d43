//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	clientv3 "go.etcd.io/etcd/client/v3"
	admissionv1 "k8s.io/api/admission/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
)

const (
	aggNamespace = "crontab-system"    // where the extension apiserver "runs"
	aggService   = "crontab-apiserver" // its Service: ExternalName localhost
	aggPrefix    = "/crontab"          // its etcd prefix, beside kube-apiserver's /registry
)

// aggregationRBAC is what the extension apiserver's identity (a
// ServiceAccount) needs in a cluster: delegated authentication and
// authorization, the authentication ConfigMap, and (apiserverClusterRole)
// reads of what admission and priority and fairness watch. The
// controller-manager gets its group, the built-in kind it watches, and
// Leases in its namespace.
const aggregationRBAC = `apiVersion: v1
kind: Namespace
metadata: {name: crontab-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: apiserver, namespace: crontab-system}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: controller-manager, namespace: crontab-system}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "crontab:system:auth-delegator"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "` + deploy.AuthDelegatorClusterRole + `"}
subjects: [{kind: ServiceAccount, name: apiserver, namespace: crontab-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: "crontab:extension-apiserver-authentication-reader", namespace: kube-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: ` + deploy.AuthenticationReaderRole + `}
subjects: [{kind: ServiceAccount, name: apiserver, namespace: crontab-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "crontab:apiserver"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "crontab:apiserver"}
subjects: [{kind: ServiceAccount, name: apiserver, namespace: crontab-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: "crontab:controller-manager"}
rules:
- apiGroups: [stable.example.com]
  resources: ["*"]
  verbs: ["*"]
- apiGroups: [apps]
  resources: [deployments]
  verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: "crontab:controller-manager"}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: "crontab:controller-manager"}
subjects: [{kind: ServiceAccount, name: controller-manager, namespace: crontab-system}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: "crontab:leader-election", namespace: crontab-system}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, create, update]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: "crontab:leader-election", namespace: crontab-system}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: "crontab:leader-election"}
subjects: [{kind: ServiceAccount, name: controller-manager, namespace: crontab-system}]
`

// apiserverClusterRole is the ClusterRole of the rules internal/cli/deploy
// grants in the cluster configuration, as a manifest.
func apiserverClusterRole(t *testing.T) string {
	t.Helper()
	b, err := json.Marshal(rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: "crontab:apiserver"},
		Rules:      deploy.ClusterRoleRules(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// aggregationService is the extension apiserver's Service: ExternalName
// localhost (with its routing off, the aggregator dials
// https://localhost:<port>).
const aggregationService = `apiVersion: v1
kind: Service
metadata: {name: crontab-apiserver, namespace: crontab-system}
spec:
  type: ExternalName
  externalName: localhost
  ports: [{port: %[1]d, targetPort: %[1]d}]
`

// aggregationRegistration points kube-apiserver at the extension apiserver:
// a Service of type ExternalName localhost (with aggregator routing off the
// aggregator dials https://localhost:<port>, verifying the serving
// certificate for <service>.<namespace>.svc) and an APIService per version.
const aggregationRegistration = aggregationService + `---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.stable.example.com}
spec:
  group: stable.example.com
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 10
  caBundle: %[2]s
  service: {name: crontab-apiserver, namespace: crontab-system, port: %[1]d}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v2.stable.example.com}
spec:
  group: stable.example.com
  version: v2
  groupPriorityMinimum: 1000
  versionPriority: 20
  caBundle: %[2]s
  service: {name: crontab-apiserver, namespace: crontab-system, port: %[1]d}
`

// admissionConfig registers a mutating and a validating webhook (served by
// the test) and a ValidatingAdmissionPolicy for CronTabs in the namespace
// e2e-admission. kube-apiserver does not admit requests it proxies: these
// run in the extension apiserver.
const admissionConfig = `apiVersion: v1
kind: Namespace
metadata: {name: e2e-admission, labels: {admission: e2e}}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: crontabs.e2e.example.com}
webhooks:
- name: crontabs.e2e.example.com
  clientConfig: {url: "%[1]s/mutate", caBundle: %[2]s}
  rules: [{apiGroups: [stable.example.com], apiVersions: ["*"], resources: [crontabs], operations: [CREATE]}]
  namespaceSelector: {matchLabels: {admission: e2e}}
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: crontabs.e2e.example.com}
webhooks:
- name: crontabs.e2e.example.com
  clientConfig: {url: "%[1]s/validate", caBundle: %[2]s}
  rules: [{apiGroups: [stable.example.com], apiVersions: ["*"], resources: [crontabs], operations: [CREATE]}]
  namespaceSelector: {matchLabels: {admission: e2e}}
  sideEffects: None
  admissionReviewVersions: [v1]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: crontab-replicas}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules: [{apiGroups: [stable.example.com], apiVersions: ["*"], resources: [crontabs], operations: [CREATE, UPDATE]}]
  validations:
  - expression: "object.spec.replicas <= 8"
    message: replicas must be at most 8 in e2e-admission
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: crontab-replicas}
spec:
  policyName: crontab-replicas
  validationActions: [Deny]
  matchResources:
    namespaceSelector: {matchLabels: {admission: e2e}}
`

// startAdmissionWebhook serves a mutating webhook (labels CronTabs
// mutated-by=webhook) and a validating one (refuses names starting with
// denied-by-webhook) over TLS on loopback, and returns its URL.
func startAdmissionWebhook(t *testing.T, c *kubeCluster) string {
	t.Helper()
	certFile, keyFile := signCert(t, c.dir, "webhook", c.ca, c.caKey, "webhook", "127.0.0.1")
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	review := func(w http.ResponseWriter, r *http.Request, decide func(obj map[string]any, resp *admissionv1.AdmissionResponse)) {
		var in admissionv1.AdmissionReview
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Request == nil {
			http.Error(w, fmt.Sprintf("bad AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		var obj map[string]any
		_ = json.Unmarshal(in.Request.Object.Raw, &obj)
		resp := &admissionv1.AdmissionResponse{UID: in.Request.UID, Allowed: true}
		decide(obj, resp)
		out := admissionv1.AdmissionReview{TypeMeta: in.TypeMeta, Response: resp}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(out)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/mutate", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(obj map[string]any, resp *admissionv1.AdmissionResponse) {
			patch := `[{"op":"add","path":"/metadata/labels","value":{"mutated-by":"webhook"}}]`
			if meta, _ := obj["metadata"].(map[string]any); meta["labels"] != nil {
				patch = `[{"op":"add","path":"/metadata/labels/mutated-by","value":"webhook"}]`
			}
			pt := admissionv1.PatchTypeJSONPatch
			resp.Patch, resp.PatchType = []byte(patch), &pt
		})
	})
	mux.HandleFunc("/validate", func(w http.ResponseWriter, r *http.Request) {
		review(w, r, func(obj map[string]any, resp *admissionv1.AdmissionResponse) {
			meta, _ := obj["metadata"].(map[string]any)
			if name, _ := meta["name"].(string); strings.HasPrefix(name, "denied-by-webhook") {
				resp.Allowed = false
				resp.Result = &metav1.Status{Message: "names starting with denied-by-webhook are refused", Code: http.StatusForbidden}
			}
		})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	t.Cleanup(func() { _ = srv.Close() })
	return "https://" + ln.Addr().String()
}

// aggregatedServer is the project's apiserver aggregated behind a
// kubeCluster's kube-apiserver, with the kubeconfigs of the cluster's users
// and of the apiserver's and controller-manager's ServiceAccounts.
type aggregatedServer struct {
	admin, dev, nobody                string // kubeconfigs of the cluster's users
	apiserverKubeconfig, cmKubeconfig string // ServiceAccount tokens, as pods would have
	svcHost                           string // the name its serving certificate is for
	direct                            string // https://127.0.0.1:<port>, bypassing kube-apiserver
	anonymous                         *http.Client
}

// aggregate starts the project's apiserver in delegated mode (with flags
// added), registers its APIServices with the cluster, waits until they are
// Available and creates the namespace e2e-agg.
func aggregate(t *testing.T, c *kubeCluster, flags ...string) *aggregatedServer {
	t.Helper()
	admin := c.kubeconfig(t, "admin", adminToken)
	dev := c.kubeconfig(t, "dev", devToken)
	nobody := c.kubeconfig(t, "nobody", nobodyToken)

	// Identities: ServiceAccount tokens, as pods would have.
	applyAs(t, admin, aggregationRBAC+"---\n"+apiserverClusterRole(t)+"\n")
	apiserverKubeconfig := c.kubeconfig(t, "apiserver",
		kubectlAs(t, admin, "create", "token", "apiserver", "-n", aggNamespace, "--duration", "2h"))
	cmKubeconfig := c.kubeconfig(t, "controller-manager",
		kubectlAs(t, admin, "create", "token", "controller-manager", "-n", aggNamespace, "--duration", "2h"))

	// The extension apiserver, in delegated mode, with a serving certificate
	// for its Service name only.
	svcHost := aggService + "." + aggNamespace + ".svc"
	servingCert, servingKey := signCert(t, c.dir, "crontab-apiserver", c.ca, c.caKey, svcHost, svcHost)
	port := harness.FreePort(t)
	apiserverDir := t.TempDir()
	c.procs["apiserver"] = harness.Start(t, apiserverDir, filepath.Join(proj, "bin", "apiserver"), append([]string{
		"--secure-port", fmt.Sprint(port), "--bind-address", "127.0.0.1",
		"--tls-cert-file", servingCert, "--tls-private-key-file", servingKey,
		"--etcd-servers", c.etcdURL, "--etcd-prefix", aggPrefix,
		"--authentication-kubeconfig", apiserverKubeconfig,
		"--authorization-kubeconfig", apiserverKubeconfig,
		"--kubeconfig", apiserverKubeconfig}, flags...)...)
	direct := fmt.Sprintf("https://127.0.0.1:%d", port)
	anonymous := c.tlsClient(svcHost, nil)
	if !harness.WaitUntil(2*time.Minute, func() bool {
		select {
		case <-c.procs["apiserver"].Done():
			t.Fatalf("apiserver exited: %v", c.procs["apiserver"].Err())
		default:
		}
		code, _ := get(anonymous, direct+"/readyz", nil)
		return code == http.StatusOK
	}) {
		code, body := get(anonymous, direct+"/readyz?verbose", nil)
		t.Fatalf("apiserver not ready: %d %s", code, body)
	}
	if entries, _ := os.ReadDir(apiserverDir); len(entries) > 0 {
		t.Errorf("delegated mode wrote standalone state (token, certificates, embedded etcd): %v", entries)
	}

	caBundle := base64PEM(t, c.caFile)
	applyAs(t, admin, fmt.Sprintf(aggregationRegistration, port, caBundle))
	for _, v := range []string{"v1", "v2"} {
		available := func() string {
			return kubectlWith(admin, "", "get", "apiservice", v+".stable.example.com",
				"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].message}`).stdout
		}
		if !harness.WaitUntil(2*time.Minute, func() bool { return strings.HasPrefix(available(), "True") }) {
			t.Fatalf("APIService %s.stable.example.com not Available: %s", v, available())
		}
	}
	kubectlAs(t, admin, "create", "namespace", "e2e-agg")
	return &aggregatedServer{admin: admin, dev: dev, nobody: nobody, apiserverKubeconfig: apiserverKubeconfig, cmKubeconfig: cmKubeconfig,
		svcHost: svcHost, direct: direct, anonymous: anonymous}
}

// TestAggregation runs the project's apiserver aggregated behind a real
// kube-apiserver, in delegated mode, and drives it with kubectl through
// kube-apiserver: discovery, CRUD, RBAC through SubjectAccessReview,
// priority and fairness, admission (NamespaceLifecycle, webhooks, policies),
// namespace deletion and garbage collection by kube-controller-manager, and
// leader election of two controller-managers.
func TestAggregation(t *testing.T) {
	c := startKubeCluster(t)
	a := aggregate(t, c)
	admin, dev, nobody := a.admin, a.dev, a.nobody
	apiserverKubeconfig, cmKubeconfig := a.apiserverKubeconfig, a.cmKubeconfig
	svcHost, direct, anonymous := a.svcHost, a.direct, a.anonymous

	t.Run("discovery: api-resources and explain through kube-apiserver", func(t *testing.T) {
		out := kubectlAs(t, admin, "api-resources", "--api-group", "stable.example.com", "-o", "wide")
		for _, want := range []string{"crontabs", "calendars", "oxen", "ct,cron", "stable.example.com/v2"} {
			if !strings.Contains(out, want) {
				t.Errorf("api-resources lacks %q:\n%s", want, out)
			}
		}
		// kube-apiserver fetches the aggregated OpenAPI in the background, after the APIService is available.
		var explain result
		if !harness.WaitUntil(time.Minute, func() bool {
			explain = kubectlWith(admin, "", "explain", "crontab.spec.replicas")
			return strings.Contains(explain.stdout, "desired number of instances")
		}) {
			t.Errorf("explain through the aggregated OpenAPI: %v\n%s%s\n%s", explain.err, explain.stdout, explain.stderr,
				kubectlWith(admin, "", "get", "--raw", "/openapi/v3").stdout)
		}
	})

	t.Run("create, get, list, patch, delete through kube-apiserver", func(t *testing.T) {
		applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: first, namespace: e2e-agg}\nspec: {replicas: 3}\n")
		applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: second, namespace: e2e-agg}\nspec: {replicas: 2}\n")
		applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: Calendar\nmetadata: {name: holidays}\n")
		if got := kubectlAs(t, admin, "get", "crontabs", "-n", "e2e-agg", "-o", "name"); got != "crontab.stable.example.com/first\ncrontab.stable.example.com/second\n" {
			t.Errorf("list: %q", got)
		}
		// The same object through the other version, and the defaulted field.
		if got := kubectlAs(t, admin, "get", "crontabs.v1.stable.example.com", "first", "-n", "e2e-agg", "-o", "jsonpath={.apiVersion} {.spec.replicas} {.spec.cronSpec}"); got != "stable.example.com/v1 3 * * * * *" {
			t.Errorf("get v1: %q", got)
		}
		if got := kubectlAs(t, admin, "get", "crontabs.v2.stable.example.com", "first", "-n", "e2e-agg", "-o", "jsonpath={.apiVersion} {.spec.replicas}"); got != "stable.example.com/v2 3" {
			t.Errorf("get v2: %q", got)
		}
		kubectlAs(t, admin, "patch", "crontab", "first", "-n", "e2e-agg", "--type", "merge", "-p", `{"spec":{"replicas":5}}`)
		if got := kubectlAs(t, admin, "get", "ct", "first", "-n", "e2e-agg", "-o", "jsonpath={.metadata.generation} {.spec.replicas}"); got != "2 5" {
			t.Errorf("after patch: %q", got)
		}
		// The project's Validate hook answers through the aggregator.
		if r := kubectlWith(admin, "", "patch", "crontab", "first", "-n", "e2e-agg", "--type", "merge", "-p", `{"spec":{"replicas":7}}`); r.err == nil || !strings.Contains(r.stderr, "must not be 7") {
			t.Errorf("invalid patch: %v %s", r.err, r.stderr)
		}
		kubectlAs(t, admin, "delete", "crontab", "second", "-n", "e2e-agg")
		if r := kubectlWith(admin, "", "get", "crontab", "second", "-n", "e2e-agg"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
			t.Errorf("deleted object still readable: %v %s", r.err, r.stderr)
		}
		// Stored under the apiserver's own prefix in the shared etcd.
		if got := etcdKeys(t, c.etcdURL, aggPrefix+"/stable.example.com/crontabs/e2e-agg/"); strings.Join(got, ",") != aggPrefix+"/stable.example.com/crontabs/e2e-agg/first" {
			t.Errorf("etcd keys: %v", got)
		}
	})

	t.Run("authorization: SubjectAccessReview", func(t *testing.T) {
		applyAs(t, admin, `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: crontab-reader, namespace: e2e-agg}
rules: [{apiGroups: [stable.example.com], resources: [crontabs], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: devs-read-crontabs, namespace: e2e-agg}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: crontab-reader}
subjects: [{apiGroup: rbac.authorization.k8s.io, kind: Group, name: devs}]
`)
		flowSchemas := kubectlAs(t, admin, "get", "flowschemas", "-o", "jsonpath={.items[*].metadata.uid}")
		// Through kube-apiserver, as users see it.
		if got := kubectlAs(t, dev, "get", "crontabs", "-n", "e2e-agg", "-o", "name"); got != "crontab.stable.example.com/first\n" {
			t.Errorf("dev list: %q", got)
		}
		for _, tc := range []struct {
			kubeconfig string
			args       []string
		}{
			{nobody, []string{"get", "crontabs", "-n", "e2e-agg"}},
			{dev, []string{"get", "crontabs", "-n", "default"}},
			{dev, []string{"delete", "crontab", "first", "-n", "e2e-agg"}},
		} {
			r := kubectlWith(tc.kubeconfig, "", tc.args...)
			if r.err == nil || !strings.Contains(r.stderr, "Forbidden") {
				t.Errorf("kubectl %s as %s: want Forbidden, got %v %s", strings.Join(tc.args, " "), filepath.Base(tc.kubeconfig), r.err, r.stderr)
			}
		}

		// kube-apiserver authorizes before it proxies; the extension apiserver
		// decides again on its own, asked directly as kube-apiserver's proxy
		// does (front-proxy client certificate and user headers) and with a
		// bearer token (TokenReview). Its own answers, from SubjectAccessReviews:
		list := direct + "/apis/stable.example.com/v1/namespaces/e2e-agg/crontabs"
		proxy := c.tlsClient(svcHost, c.frontProxy)
		for _, tc := range []struct {
			what    string
			client  *http.Client
			url     string
			headers map[string]string
			code    int
			body    string
		}{
			{"front-proxy user dev in devs", proxy, list, map[string]string{"X-Remote-User": "dev", "X-Remote-Group": "devs"}, 200, `"name":"first"`},
			{"front-proxy user nobody", proxy, list, map[string]string{"X-Remote-User": "nobody"}, 403, `User \"nobody\" cannot list resource \"crontabs\"`},
			{"front-proxy user dev in another namespace", proxy, direct + "/apis/stable.example.com/v1/namespaces/default/crontabs", map[string]string{"X-Remote-User": "dev", "X-Remote-Group": "devs"}, 403, `User \"dev\" cannot list resource \"crontabs\"`},
			{"bearer token of dev", anonymous, list, map[string]string{"Authorization": "Bearer " + devToken}, 200, `"name":"first"`},
			{"bearer token of nobody", anonymous, list, map[string]string{"Authorization": "Bearer " + nobodyToken}, 403, `User \"nobody\" cannot list resource \"crontabs\"`},
			// Without the front-proxy certificate the user headers are not trusted.
			{"user headers without the proxy certificate", anonymous, list, map[string]string{"X-Remote-User": "dev", "X-Remote-Group": "devs"}, 403, `User \"system:anonymous\" cannot list`},
			{"bad bearer token", anonymous, list, map[string]string{"Authorization": "Bearer wrong"}, 401, "Unauthorized"},
		} {
			code, body, header := getWithHeader(tc.client, tc.url, tc.headers)
			if code != tc.code || !strings.Contains(body, tc.body) {
				t.Errorf("%s: HTTP %d %s, want %d with %s", tc.what, code, body, tc.code, tc.body)
			}
			// Priority and fairness classified the request with the cluster's FlowSchemas.
			if uid := header.Get("X-Kubernetes-PF-FlowSchema-UID"); code != 401 && (uid == "" || !strings.Contains(flowSchemas, uid)) {
				t.Errorf("%s: X-Kubernetes-PF-FlowSchema-UID %q is none of the cluster's FlowSchemas (%s)", tc.what, uid, flowSchemas)
			}
		}
	})

	t.Run("admission: webhooks and policies of the cluster apply to our resources", func(t *testing.T) {
		webhook := startAdmissionWebhook(t, c)
		applyAs(t, admin, fmt.Sprintf(admissionConfig, webhook, base64PEM(t, c.caFile)))
		// Our apiserver reads the configurations through informers: server-side dry runs
		// (admission runs, nothing is stored) until all three have taken effect.
		dryRun := func(name string, replicas int) result {
			return kubectlWith(admin, fmt.Sprintf("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: %s, namespace: e2e-admission}\nspec: {replicas: %d}\n", name, replicas),
				"create", "--dry-run=server", "-o", "jsonpath={.metadata.labels.mutated-by}", "-f", "-")
		}
		for _, tc := range []struct {
			what, name string
			replicas   int
			stdout     string
			stderr     string
		}{
			{"MutatingAdmissionWebhook", "plain", 1, "webhook", ""},
			{"ValidatingAdmissionWebhook", "denied-by-webhook", 1, "", `admission webhook "crontabs.e2e.example.com" denied the request: names starting with denied-by-webhook are refused`},
			{"ValidatingAdmissionPolicy", "many", 9, "", "replicas must be at most 8 in e2e-admission"},
		} {
			var r result
			if !harness.WaitUntil(time.Minute, func() bool {
				r = dryRun(tc.name, tc.replicas)
				return r.stdout == tc.stdout && strings.Contains(r.stderr, tc.stderr) && (tc.stderr == "") == (r.err == nil)
			}) {
				t.Errorf("%s: %v stdout %q stderr %q, want stdout %q stderr with %q", tc.what, r.err, r.stdout, r.stderr, tc.stdout, tc.stderr)
			}
		}
		kubectlAs(t, admin, "delete", "validatingwebhookconfiguration,mutatingwebhookconfiguration", "crontabs.e2e.example.com")
	})

	t.Run("admission: NamespaceLifecycle through the core API", func(t *testing.T) {
		r := kubectlWith(admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: orphan, namespace: no-such-namespace}\n", "create", "-f", "-")
		if r.err == nil || !strings.Contains(r.stderr, `namespaces "no-such-namespace" not found`) {
			t.Errorf("create in a missing namespace: %v %s", r.err, r.stderr)
		}
	})

	t.Run("namespace deletion removes the aggregated objects in it", func(t *testing.T) {
		kubectlAs(t, admin, "create", "namespace", "e2e-gone")
		applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: plain, namespace: e2e-gone}\n")
		// A finalizer holds the namespace in Terminating until the test removes it.
		applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: held, namespace: e2e-gone, finalizers: [example.com/hold]}\n")
		kubectlAs(t, admin, "delete", "namespace", "e2e-gone", "--wait=false")

		deleting := func() string {
			return kubectlWith(admin, "", "get", "crontab", "held", "-n", "e2e-gone", "-o", "jsonpath={.metadata.deletionTimestamp}").stdout
		}
		if !harness.WaitUntil(2*time.Minute, func() bool { return deleting() != "" }) {
			t.Fatalf("the namespace controller did not delete the CronTabs: held has no deletionTimestamp\n%s",
				kubectlWith(admin, "", "get", "namespace", "e2e-gone", "-o", "yaml").stdout)
		}
		if r := kubectlWith(admin, "", "get", "crontab", "plain", "-n", "e2e-gone"); !strings.Contains(r.stderr, "NotFound") {
			t.Errorf("plain still there: %v %s%s", r.err, r.stdout, r.stderr)
		}
		// NamespaceLifecycle refuses creates in a terminating namespace (as
		// soon as the apiserver's namespace informer has seen it terminating;
		// server-side dry runs store nothing).
		var r result
		if !harness.WaitUntil(30*time.Second, func() bool {
			r = kubectlWith(admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: late, namespace: e2e-gone}\n", "create", "--dry-run=server", "-f", "-")
			return r.err != nil && strings.Contains(r.stderr, "because it is being terminated")
		}) {
			t.Errorf("create in a terminating namespace: %v %s", r.err, r.stderr)
		}
		kubectlAs(t, admin, "patch", "crontab", "held", "-n", "e2e-gone", "--type", "json", "-p", `[{"op":"remove","path":"/metadata/finalizers"}]`)
		if !harness.WaitUntil(2*time.Minute, func() bool {
			return strings.Contains(kubectlWith(admin, "", "get", "namespace", "e2e-gone").stderr, "NotFound")
		}) {
			t.Fatalf("namespace e2e-gone not removed:\n%s", kubectlWith(admin, "", "get", "namespace", "e2e-gone", "-o", "yaml").stdout)
		}
		if got := etcdKeys(t, c.etcdURL, aggPrefix+"/stable.example.com/crontabs/e2e-gone/"); len(got) > 0 {
			t.Errorf("objects of the deleted namespace left in etcd: %v", got)
		}
	})

	t.Run("garbage collection of an owned object", func(t *testing.T) {
		kubectlAs(t, admin, "create", "configmap", "owner", "-n", "e2e-agg")
		uid := kubectlAs(t, admin, "get", "configmap", "owner", "-n", "e2e-agg", "-o", "jsonpath={.metadata.uid}")
		applyAs(t, admin, fmt.Sprintf("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: owned\n  namespace: e2e-agg\n  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: owner, uid: %s}]\n", uid))
		kubectlAs(t, admin, "delete", "configmap", "owner", "-n", "e2e-agg")
		if !harness.WaitUntil(2*time.Minute, func() bool {
			return strings.Contains(kubectlWith(admin, "", "get", "crontab", "owned", "-n", "e2e-agg").stderr, "NotFound")
		}) {
			t.Errorf("the garbage collector did not delete the CronTab owned by a deleted ConfigMap")
		}
	})

	t.Run("controller-manager: /metrics over TLS for clients kube-apiserver authorizes, health for all", func(t *testing.T) {
		// As build config runs it: the secure port with delegated
		// authentication and authorization (the apiserver's ServiceAccount
		// has the rights to review tokens and access), the plain port off;
		// the metrics reader ClusterRole bound to dev.
		applyAs(t, admin, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: e2e-metrics-reader}\nrules: [{nonResourceURLs: [/metrics], verbs: [get]}]\n---\n"+
			"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: e2e-metrics-reader}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: e2e-metrics-reader}\nsubjects: [{kind: User, name: dev}]\n")
		port := harness.FreePort(t)
		p := harness.Start(t, t.TempDir(), filepath.Join(proj, "bin", "controller-manager"),
			"--kubeconfig", cmKubeconfig, "--leader-elect=false", "--bind-address=",
			"--secure-port", fmt.Sprint(port), "--secure-bind-address", "127.0.0.1",
			"--authentication-kubeconfig", apiserverKubeconfig, "--authorization-kubeconfig", apiserverKubeconfig)
		defer func() { p.Signal(syscall.SIGTERM); <-p.Done() }()
		insecure := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
		base := fmt.Sprintf("https://127.0.0.1:%d", port)
		if !harness.WaitUntil(time.Minute, func() bool { code, _ := get(insecure, base+"/healthz", nil); return code == 200 }) {
			code, body := get(insecure, base+"/healthz", nil)
			t.Fatalf("secure /healthz: %d %s\n%s", code, body, p.Out.String())
		}
		for _, tc := range []struct {
			name, token string
			want        int
		}{
			{"anonymous", "", http.StatusForbidden},
			{"a bad token", "wrong", http.StatusUnauthorized},
			{"nobody", nobodyToken, http.StatusForbidden},
			{"dev, a metrics reader", devToken, http.StatusOK},
		} {
			headers := map[string]string{}
			if tc.token != "" {
				headers["Authorization"] = "Bearer " + tc.token
			}
			code, body := get(insecure, base+"/metrics", headers)
			if code != tc.want || tc.want == 200 && !strings.Contains(body, "rest_client_requests_total") {
				t.Errorf("/metrics as %s: %d, want %d\n%.300s", tc.name, code, tc.want, body)
			}
		}
		// Nothing listens on the default plain port of this process.
		if out := p.Out.String(); strings.Contains(out, "Serving /healthz, /readyz and /metrics\"") {
			t.Errorf("the plain port serves although --bind-address is empty:\n%s", out)
		}
	})

	t.Run("controller-manager: leader election on a Lease, reconciling through the aggregator", func(t *testing.T) {
		hostname, err := os.Hostname()
		if err != nil {
			t.Fatal(err)
		}
		managers := map[string]*harness.Process{}
		addrs := map[string]string{}
		for i := range 2 {
			addr := fmt.Sprintf("127.0.0.1:%d", harness.FreePort(t))
			p := harness.Start(t, t.TempDir(), filepath.Join(proj, "bin", "controller-manager"),
				"--kubeconfig", cmKubeconfig, "--leader-elect=true", "--leader-elect-namespace", aggNamespace,
				"--bind-address", addr)
			id := fmt.Sprintf("%s_%d", hostname, p.Pid())
			managers[id], addrs[id] = p, addr
			c.procs[fmt.Sprintf("controller-manager-%d", i)] = p
		}
		holder := func() string {
			return kubectlWith(admin, "", "get", "lease", "crontab-controller-manager", "-n", aggNamespace, "-o", "jsonpath={.spec.holderIdentity}").stdout
		}
		var leader string
		if !harness.WaitUntil(time.Minute, func() bool { leader = holder(); return managers[leader] != nil }) {
			t.Fatalf("no controller-manager holds the Lease: holder %q, managers %v", leader, keys(managers))
		}
		var follower string
		for id := range managers {
			if id != leader {
				follower = id
			}
		}
		// The leader reconciles (status written through the aggregated API)
		// and is ready; the follower runs no controller.
		applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: reconciled, namespace: e2e-agg}\nspec: {replicas: 4}\n")
		status := func(name string) string {
			return kubectlWith(admin, "", "get", "ct", name, "-n", "e2e-agg", "-o", "jsonpath={.status.replicas}").stdout
		}
		if !harness.WaitUntil(time.Minute, func() bool { return status("reconciled") == "4" }) {
			t.Fatalf("status not written by the leader: %q", status("reconciled"))
		}
		if !harness.WaitUntil(30*time.Second, func() bool {
			code, _ := get(http.DefaultClient, "http://"+addrs[leader]+"/readyz", nil)
			return code == 200
		}) {
			t.Errorf("leader not ready (every informer synced through kube-apiserver)")
		}
		if code, _ := get(http.DefaultClient, "http://"+addrs[follower]+"/readyz", nil); code != http.StatusServiceUnavailable {
			t.Errorf("follower /readyz: %d, want 503", code)
		}
		if out := managers[follower].Out.String(); strings.Contains(out, "Controller manager started") || strings.Contains(out, "Reconciling CronTab") {
			t.Errorf("the follower runs controllers:\n%s", out)
		}

		// Killed without releasing the Lease: the follower takes over when it
		// expires, 15 s after the renewal the follower last saw. client-go's
		// retries are jittered (up to 2.2 retry periods of 15/7 s apart), so
		// the follower may see the last renewal one retry late and try again
		// one retry after expiry: at most 15 s + 2 × 4.7 s, and a second.
		killed := time.Now()
		managers[leader].Signal(syscall.SIGKILL)
		<-managers[leader].Done()
		if !harness.WaitUntil(2*time.Minute, func() bool { return holder() == follower }) {
			t.Fatalf("the follower %s did not take over the Lease: holder %q", follower, holder())
		}
		takeover := time.Since(killed)
		t.Logf("the follower took over the Lease %.1f s after the leader was killed (lease duration 15 s)", takeover.Seconds())
		if bound := 15*time.Second + 2*(22*15*time.Second/70) + time.Second; takeover > bound {
			t.Errorf("the follower took over after %s: more than the lease duration and two jittered retry periods (%s)", takeover, bound)
		}
		applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: after-failover, namespace: e2e-agg}\nspec: {replicas: 2}\n")
		if !harness.WaitUntil(time.Minute, func() bool { return status("after-failover") == "2" }) {
			t.Fatalf("status not written by the new leader: %q", status("after-failover"))
		}
		// Stopped cleanly, the new leader releases the Lease.
		managers[follower].Signal(syscall.SIGTERM)
		<-managers[follower].Done()
		if got := holder(); got != "" {
			t.Errorf("Lease still held by %q after SIGTERM", got)
		}
	})
}

// get requests url with headers and returns the status code and body.
func get(client *http.Client, url string, headers map[string]string) (int, string) {
	code, body, _ := getWithHeader(client, url, headers)
	return code, body
}

// getWithHeader is get, also returning the response headers.
func getWithHeader(client *http.Client, url string, headers map[string]string) (int, string, http.Header) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error(), nil
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err.Error(), nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// etcdKeys lists the keys under prefix.
func etcdKeys(t *testing.T, url, prefix string) []string {
	t.Helper()
	cli := etcdClient(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cli.Get(ctx, prefix, clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, kv := range resp.Kvs {
		out = append(out, string(kv.Key))
	}
	return out
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
