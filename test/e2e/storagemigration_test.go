//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	apidiscoveryv2 "k8s.io/api/apidiscovery/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/discovery"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// svmRegistration registers the ops group of the project (Backup, served in
// v1 and v2) with kube-apiserver, as aggregationRegistration does stable.
const svmRegistration = `apiVersion: v1
kind: Service
metadata: {name: crontab-apiserver, namespace: crontab-system}
spec:
  type: ExternalName
  externalName: localhost
  ports: [{port: %[1]d, targetPort: %[1]d}]
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v1.ops.example.com}
spec:
  group: ops.example.com
  version: v1
  groupPriorityMinimum: 1000
  versionPriority: 10
  caBundle: %[2]s
  service: {name: crontab-apiserver, namespace: crontab-system, port: %[1]d}
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata: {name: v2.ops.example.com}
spec:
  group: ops.example.com
  version: v2
  groupPriorityMinimum: 1000
  versionPriority: 20
  caBundle: %[2]s
  service: {name: crontab-apiserver, namespace: crontab-system, port: %[1]d}
`

// svmCRD is a CustomResourceDefinition of the same shape (Backup in v1 and
// v2, stored in v1) in another group, for kube-apiserver's own
// storageVersionHash.
const svmCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: backups.crd.example.com}
spec:
  group: crd.example.com
  names: {kind: Backup, plural: backups, singular: backup, listKind: BackupList}
  scope: Namespaced
  versions:
  - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
  - {name: v2, served: true, storage: false, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`

const svmPrefix = "/svm" // the extension apiserver's etcd prefix in this test

// TestStorageVersionMigrationAggregated moves a kind's storage version the
// way Kubernetes itself does, for an apiserver aggregated behind
// kube-apiserver: Backup (group ops) is stored in v1, objects are written,
// the apiserver is rebuilt with +storageversion on v2 and restarted, and a
// StorageVersionMigration (storagemigration.k8s.io/v1beta1) on kube-apiserver
// has kube-controller-manager's storage-version-migrator-controller rewrite
// every object, which etcd then holds in v2. Discovery tells the move: each
// resource's storageVersionHash, the same in every version of the kind, is
// kube-apiserver's hash of the storage version. For a standalone apiserver,
// `apiserver-boot migrate storage` does the rewrite (TestStorageVersionChange).
func TestStorageVersionMigrationAggregated(t *testing.T) {
	// A copy of the shared project, where Backup gets a v2 (stored in v1),
	// then moves its storage version to v2: two builds of its apiserver.
	dir := filepath.Join(t.TempDir(), "crontab")
	if out, err := harness.Sh(filepath.Dir(dir), "cp", "-a", proj, dir); err != nil {
		t.Fatalf("copying the project: %v\n%s", err, out)
	}
	for _, generated := range []string{"bin", ".apiserver-boot", "kubeconfig"} {
		os.RemoveAll(filepath.Join(dir, generated))
	}
	sh := func(name string, args ...string) {
		t.Helper()
		if out, err := harness.Sh(dir, name, args...); err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "pkg", "apis", "ops", "v2")); err == nil {
		// TestStorageVersionChange gave the shared project's Backup a v2
		// and stores it there: the first build stores it in v1 again.
		setBackupStorageVersion(t, dir, "v2", "v1")
	} else {
		sh(cli, "create", "version", "--group", "ops", "--version", "v2", "--kind", "Backup", "--from", "v1")
	}
	sh(cli, "generate")
	sh("go", "build", "-o", "bin/apiserver-v1", "./cmd/apiserver")
	setBackupStorageVersion(t, dir, "v1", "v2")
	sh(cli, "generate")
	sh("go", "build", "-o", "bin/apiserver-v2", "./cmd/apiserver")

	gate := "--feature-gates=StorageVersionMigrator=true"
	c := startKubeClusterWith(t, clusterOptions{
		kubeAPIServerArgs: []string{gate, "--runtime-config=storagemigration.k8s.io/v1beta1=true"},
		controllers:       []string{"storage-version-migrator-controller"},
		// As clusters run it: each controller with its ServiceAccount's
		// token and the roles kube-apiserver bootstraps for it, which our
		// apiserver checks through SubjectAccessReviews.
		controllerArgs: []string{gate, "--use-service-account-credentials=true", "--v=2"},
	})
	admin := c.kubeconfig(t, "admin", adminToken)
	applyAs(t, admin, aggregationRBAC+"---\n"+apiserverClusterRole(t)+"\n")
	apiserverKubeconfig := c.kubeconfig(t, "apiserver",
		kubectlAs(t, admin, "create", "token", "apiserver", "-n", aggNamespace, "--duration", "2h"))
	svcHost := aggService + "." + aggNamespace + ".svc"
	servingCert, servingKey := signCert(t, c.dir, "crontab-apiserver", c.ca, c.caKey, svcHost, svcHost)
	port := harness.FreePort(t)
	start := func(bin string) {
		t.Helper()
		p := harness.Start(t, t.TempDir(), filepath.Join(dir, "bin", bin),
			"--secure-port", fmt.Sprint(port), "--bind-address", "127.0.0.1",
			"--tls-cert-file", servingCert, "--tls-private-key-file", servingKey,
			"--etcd-servers", c.etcdURL, "--etcd-prefix", svmPrefix,
			"--authentication-kubeconfig", apiserverKubeconfig,
			"--authorization-kubeconfig", apiserverKubeconfig,
			"--kubeconfig", apiserverKubeconfig)
		c.procs["apiserver"] = p
		anonymous := c.tlsClient(svcHost, nil)
		if !harness.WaitUntil(2*time.Minute, func() bool {
			select {
			case <-p.Done():
				t.Fatalf("%s exited: %v", bin, p.Err())
			default:
			}
			code, _ := get(anonymous, fmt.Sprintf("https://127.0.0.1:%d/readyz", port), nil)
			return code == http.StatusOK
		}) {
			t.Fatalf("%s not ready", bin)
		}
	}
	waitAvailable := func() {
		t.Helper()
		for _, v := range []string{"v1", "v2"} {
			available := func() string {
				return kubectlWith(admin, "", "get", "apiservice", v+".ops.example.com",
					"-o", `jsonpath={.status.conditions[?(@.type=="Available")].status} {.status.conditions[?(@.type=="Available")].message}`).stdout
			}
			if !harness.WaitUntil(2*time.Minute, func() bool { return strings.HasPrefix(available(), "True") }) {
				t.Fatalf("APIService %s.ops.example.com not Available: %s", v, available())
			}
		}
	}
	start("apiserver-v1")
	applyAs(t, admin, fmt.Sprintf(svmRegistration, port, base64PEM(t, c.caFile)))
	registered := time.Now()
	waitAvailable()
	kubectlAs(t, admin, "create", "namespace", "e2e-svm")
	kubectlAs(t, admin, "create", "namespace", "e2e-svm-other")

	// storageVersionHash of backups in a discovery document of kube-apiserver.
	hashes := func(url string) map[string]string {
		t.Helper()
		var list metav1.APIResourceList
		if err := json.Unmarshal([]byte(kubectlAs(t, admin, "get", "--raw", url)), &list); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		out := map[string]string{}
		for _, r := range list.APIResources {
			out[r.Name] = r.StorageVersionHash
		}
		return out
	}
	checkHash := func(storage string) {
		t.Helper()
		want := discovery.StorageVersionHash("ops.example.com", storage, "Backup")
		for _, v := range []string{"v1", "v2"} {
			got := hashes("/apis/ops.example.com/" + v)
			if got["backups"] != want {
				t.Errorf("discovery /apis/ops.example.com/%s (Backup stored in %s): storageVersionHash %q, want %q (kube-apiserver's hash of ops.example.com/%s/Backup)", v, storage, got["backups"], want, storage)
			}
			if h, ok := got["backups/status"]; ok && h != "" {
				t.Errorf("backups/status carries a storageVersionHash (%q); kube-apiserver gives none to subresources", h)
			}
		}
	}

	t.Run("storageVersionHash as kube-apiserver computes it", func(t *testing.T) {
		checkHash("v1")
		// kube-apiserver's own answer for a CRD of the same shape.
		applyAs(t, admin, svmCRD)
		var got map[string]string
		want := discovery.StorageVersionHash("crd.example.com", "v1", "Backup")
		if !harness.WaitUntil(time.Minute, func() bool {
			r := kubectlWith(admin, "", "get", "--raw", "/apis/crd.example.com/v2")
			return r.err == nil && json.Unmarshal([]byte(r.stdout), new(metav1.APIResourceList)) == nil && hashes("/apis/crd.example.com/v2")["backups"] != ""
		}) {
			t.Fatalf("the CRD is not served")
		}
		for _, v := range []string{"v1", "v2"} {
			if got = hashes("/apis/crd.example.com/" + v); got["backups"] != want {
				t.Errorf("kube-apiserver's storageVersionHash of a CRD stored in v1, in %s: %q, want %q", v, got["backups"], want)
			}
		}
		// Aggregated discovery (/apis with the apidiscovery.k8s.io/v2
		// Accept header) lists the aggregated group's resources; its
		// format has no storageVersionHash, for any group.
		client := c.tlsClient("127.0.0.1", nil)
		code, body, header := getWithHeader(client, c.url+"/apis", map[string]string{
			"Authorization": "Bearer " + adminToken,
			"Accept":        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
		})
		if code != http.StatusOK || !strings.Contains(header.Get("Content-Type"), "as=APIGroupDiscoveryList") {
			t.Fatalf("aggregated discovery: %d %s\n%.500s", code, header.Get("Content-Type"), body)
		}
		var agg apidiscoveryv2.APIGroupDiscoveryList
		if err := json.Unmarshal([]byte(body), &agg); err != nil {
			t.Fatal(err)
		}
		var versions []string
		for _, g := range agg.Items {
			if g.Name != "ops.example.com" {
				continue
			}
			for _, v := range g.Versions {
				if slices.ContainsFunc(v.Resources, func(r apidiscoveryv2.APIResourceDiscovery) bool { return r.Resource == "backups" }) {
					versions = append(versions, v.Version)
				}
			}
		}
		if slices.Sort(versions); strings.Join(versions, ",") != "v1,v2" {
			t.Errorf("aggregated discovery through kube-apiserver: backups in versions %v, want [v1 v2]", versions)
		}
		if strings.Contains(body, "storageVersionHash") {
			t.Errorf("aggregated discovery carries storageVersionHash, which apidiscovery.k8s.io/v2 does not define: update docs/upgrading-storage.md")
		}
	})

	// Objects written while Backup is stored in v1, in two namespaces.
	etcd := &etcdProcess{url: c.etcdURL}
	key := func(ns, name string) string { return svmPrefix + "/ops.example.com/backups/" + ns + "/" + name }
	var names [][2]string
	for i := range 5 {
		ns := "e2e-svm"
		if i%2 == 1 {
			ns = "e2e-svm-other"
		}
		name := fmt.Sprintf("backup-%d", i)
		applyAs(t, admin, fmt.Sprintf("apiVersion: ops.example.com/v1\nkind: Backup\nmetadata: {name: %s, namespace: %s}\nspec: {replicas: %d}\n", name, ns, i+1))
		names = append(names, [2]string{ns, name})
	}
	for _, n := range names {
		if enc, v := etcd.stored(t, key(n[0], n[1])); v != "ops.example.com/v1" {
			t.Fatalf("%s/%s stored as %s %s before the move, want ops.example.com/v1", n[0], n[1], enc, v)
		}
	}

	// The new build: Backup stored in v2.
	p := c.procs["apiserver"]
	p.Signal(syscall.SIGTERM)
	<-p.Done()
	start("apiserver-v2")
	waitAvailable()
	checkHash("v2")
	applyAs(t, admin, "apiVersion: ops.example.com/v1\nkind: Backup\nmetadata: {name: after-move, namespace: e2e-svm}\nspec: {replicas: 9}\n")
	if _, v := etcd.stored(t, key("e2e-svm", "after-move")); v != "ops.example.com/v2" {
		t.Errorf("written after the move: stored in %s, want ops.example.com/v2", v)
	}
	if _, v := etcd.stored(t, key("e2e-svm", "backup-0")); v != "ops.example.com/v1" {
		t.Fatalf("written before the move, untouched: stored in %s, want ops.example.com/v1", v)
	}
	rvBefore := kubectlAs(t, admin, "get", "backups.ops.example.com", "after-move", "-n", "e2e-svm", "-o", "jsonpath={.metadata.resourceVersion}")

	// kube-controller-manager sees a newly aggregated resource on its
	// periodic discovery resync; the migration gives up if its controllers
	// do not know the resource a minute after it is created, so it is
	// created once the garbage collector (whose caches it reads) watches
	// backups.
	gcSees := func() bool {
		for _, line := range strings.Split(c.procs["kube-controller-manager"].Out.String(), "\n") {
			added, _, _ := strings.Cut(line, "removed:")
			if strings.Contains(line, "syncing garbage collector with updated resources from discovery") && strings.Contains(added, "ops.example.com/v2, Resource=backups") {
				return true
			}
		}
		return false
	}
	if !harness.WaitUntil(5*time.Minute, gcSees) {
		t.Fatalf("kube-controller-manager's garbage collector does not watch ops.example.com/v2 backups %.0f s after the APIServices were registered", time.Since(registered).Seconds())
	}
	t.Logf("kube-controller-manager's garbage collector watches backups %.0f s after the APIServices were registered", time.Since(registered).Seconds())

	// Kubernetes' storage version migration, through kube-apiserver.
	created := time.Now()
	applyAs(t, admin, "apiVersion: storagemigration.k8s.io/v1beta1\nkind: StorageVersionMigration\nmetadata: {name: backups-to-v2}\nspec:\n  resource: {group: ops.example.com, resource: backups}\n")
	conditions := func() string {
		return kubectlWith(admin, "", "get", "storageversionmigration", "backups-to-v2",
			"-o", `jsonpath={range .status.conditions[*]}{.type}={.status} {.message}; {end}`).stdout
	}
	if !harness.WaitUntil(5*time.Minute, func() bool {
		s := conditions()
		return strings.Contains(s, "Succeeded=True") || strings.Contains(s, "Failed=True")
	}) || !strings.Contains(conditions(), "Succeeded=True") {
		t.Fatalf("StorageVersionMigration backups-to-v2 did not succeed: %s\n%s", conditions(),
			kubectlWith(admin, "", "get", "storageversionmigration", "backups-to-v2", "-o", "yaml").stdout)
	}
	t.Logf("StorageVersionMigration backups-to-v2, %.0f s after its creation: %s", time.Since(created).Seconds(), conditions())
	// What the controllers waited for (their retries are logged at --v=2).
	for _, line := range strings.Split(c.procs["kube-controller-manager"].Out.String(), "\n") {
		if strings.Contains(line, "backups-to-v2") || strings.Contains(line, "Resource=backups") {
			t.Logf("kube-controller-manager: %.400s", line)
		}
	}
	for _, n := range names {
		if enc, v := etcd.stored(t, key(n[0], n[1])); v != "ops.example.com/v2" {
			t.Errorf("%s/%s after the StorageVersionMigration: stored as %s %s, want ops.example.com/v2", n[0], n[1], enc, v)
		}
		if got := kubectlAs(t, admin, "get", "backups.v1.ops.example.com", n[1], "-n", n[0], "-o", "jsonpath={.spec.replicas}"); got == "" || got == "0" {
			t.Errorf("%s/%s after the migration, through v1: replicas %q", n[0], n[1], got)
		}
	}
	// An object already in v2 is not written again (an empty apply changes nothing).
	if rv := kubectlAs(t, admin, "get", "backups.ops.example.com", "after-move", "-n", "e2e-svm", "-o", "jsonpath={.metadata.resourceVersion}"); rv != rvBefore {
		t.Errorf("after-move, already stored in v2, was rewritten: resourceVersion %s, was %s", rv, rvBefore)
	}
}

// setBackupStorageVersion moves +storageversion of Backup from version from
// to version to in the project at dir, and its REST hooks with it, as a
// user would.
func setBackupStorageVersion(t *testing.T, dir, from, to string) {
	t.Helper()
	edit := func(version string, f func(string) string) {
		path := filepath.Join(dir, "pkg", "apis", "ops", version, "backup_types.go")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(f(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit(from, func(s string) string { return strings.Replace(s, "// +storageversion\n", "", 1) })
	edit(to, func(s string) string {
		return strings.Replace(s, "// +resource:path=backups", "// +storageversion\n// +resource:path=backups", 1)
	})
	hooks := filepath.Join(dir, "pkg", "apis", "ops", from, "backup_hooks.go")
	b, err := os.ReadFile(hooks)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(hooks); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pkg", "apis", "ops", to, "backup_hooks.go"), []byte(strings.Replace(string(b), "package "+from+"\n", "package "+to+"\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}
