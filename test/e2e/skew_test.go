//go:build e2e

package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"

	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

// supportedKubeAPIServers are the kube-apiserver binaries of the support
// policy (docs/upgrading.md) that `make test-tools` builds into .cache/bin:
// kube-apiserver (test/tools, the oldest supported minor) and
// kube-apiserver-1.<minor> (test/tools/newest, the minor of the framework's
// k8s.io/* pins), oldest first. E2E_KUBE_APISERVERS (paths, comma-separated,
// oldest first) runs the walk behind other builds instead, to probe a minor
// outside the policy.
func supportedKubeAPIServers(t *testing.T) []string {
	t.Helper()
	if env := os.Getenv("E2E_KUBE_APISERVERS"); env != "" {
		return strings.Split(env, ",")
	}
	newest, err := filepath.Glob(filepath.Join(repoRoot, ".cache", "bin", "kube-apiserver-1.*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(newest) != 1 {
		t.Fatalf("want one kube-apiserver-1.<minor> in .cache/bin (make test-tools builds it from test/tools/newest), found %v", newest)
	}
	return []string{kubeAPIServerBin, newest[0]}
}

// cborCRD is a CRD shaped like CronTab's spec.replicas: what kube-apiserver
// does with CBOR for a custom resource, beside what our apiserver does.
const cborCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.crd.example.com}
spec:
  group: crd.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer}
`

// TestSupportedKubeAPIServers runs the aggregation walk behind the oldest and
// the newest kube-apiserver of the support policy: APIServices Available,
// aggregated discovery, CRUD through kube-apiserver in both versions,
// delegated authorization. The walk only: TestAggregation covers the rest
// behind the oldest. Behind the newest, CBOR (KEP-4222) is turned on
// (--feature-gates CBORServingAndStorage=true on both servers), behind the
// oldest it is off: a client sending and accepting application/cbor gets
// from our apiserver what kube-apiserver gives it for a CRD.
func TestSupportedKubeAPIServers(t *testing.T) {
	bins := supportedKubeAPIServers(t)
	for i, bin := range bins {
		version, err := harness.Sh(repoRoot, bin, "--version")
		if err != nil {
			t.Fatal(err)
		}
		version = strings.TrimPrefix(strings.TrimSpace(version), "Kubernetes ")
		cbor := i == len(bins)-1
		t.Run(version, func(t *testing.T) {
			start := time.Now()
			gates := fmt.Sprintf("CBORServingAndStorage=%t", cbor)
			c := startKubeClusterWith(t, clusterOptions{kubeAPIServer: bin, featureGates: gates, noControllerManager: true})
			a := aggregate(t, c, "--feature-gates", gates)
			t.Logf("kube-apiserver %s and our apiserver ready, APIServices Available in %s", version, time.Since(start).Round(time.Second))
			admin := a.admin
			if got := kubectlAs(t, admin, "get", "--raw", "/version"); !strings.Contains(got, `"gitVersion": "`+version+`"`) {
				t.Errorf("kube-apiserver /version: %s, want %s", got, version)
			}
			kas := c.tlsClient("localhost", nil)
			adminHeaders := map[string]string{"Authorization": "Bearer " + adminToken}

			t.Run("aggregated discovery", func(t *testing.T) {
				h := map[string]string{"Authorization": "Bearer " + adminToken, "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
				var resources []string
				if !harness.WaitUntil(time.Minute, func() bool {
					code, body := get(kas, c.url+"/apis", h)
					resources = discoveredResources(t, code, body, "stable.example.com")
					return len(resources) > 0
				}) {
					t.Fatalf("stable.example.com is not in kube-apiserver's aggregated discovery")
				}
				for _, want := range []string{"v1/crontabs", "v1/calendars", "v1/oxen", "v2/crontabs"} {
					if !contains(resources, want) {
						t.Errorf("aggregated discovery of stable.example.com lacks %s: %v", want, resources)
					}
				}
				if out := kubectlAs(t, admin, "api-resources", "--api-group", "stable.example.com"); !strings.Contains(out, "ct,cron") {
					t.Errorf("kubectl api-resources: %s", out)
				}
			})

			t.Run("create, get in both versions, list, delete", func(t *testing.T) {
				applyAs(t, admin, "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata: {name: skew, namespace: e2e-agg}\nspec: {replicas: 3}\n")
				if got := kubectlAs(t, admin, "get", "crontabs.v2.stable.example.com", "skew", "-n", "e2e-agg", "-o", "jsonpath={.apiVersion} {.spec.replicas}"); got != "stable.example.com/v2 3" {
					t.Errorf("get v2: %q", got)
				}
				if got := kubectlAs(t, admin, "get", "crontabs", "-n", "e2e-agg", "-o", "name"); got != "crontab.stable.example.com/skew\n" {
					t.Errorf("list: %q", got)
				}
				kubectlAs(t, admin, "delete", "crontab", "skew", "-n", "e2e-agg")
			})

			t.Run("delegated authorization", func(t *testing.T) {
				if r := kubectlWith(a.nobody, "", "get", "crontabs", "-n", "e2e-agg"); r.err == nil || !strings.Contains(r.stderr, "Forbidden") {
					t.Errorf("nobody lists CronTabs: %v %s", r.err, r.stderr)
				}
				code, body := get(a.anonymous, a.direct+"/apis/stable.example.com/v1/namespaces/e2e-agg/crontabs", map[string]string{"Authorization": "Bearer " + nobodyToken})
				if code != http.StatusForbidden || !strings.Contains(body, `User \"nobody\" cannot list resource \"crontabs\"`) {
					t.Errorf("our apiserver asked directly as nobody (TokenReview, SubjectAccessReview): %d %s", code, body)
				}
			})

			t.Run(fmt.Sprintf("CBOR with CBORServingAndStorage=%t, beside a CRD", cbor), func(t *testing.T) {
				applyAs(t, admin, cborCRD)
				kubectlAs(t, admin, "wait", "--for", "condition=Established", "--timeout", "60s", "crd/widgets.crd.example.com")
				kinds := []struct{ name, path, apiVersion, kind string }{
					{"CRD on kube-apiserver", "/apis/crd.example.com/v1/namespaces/e2e-agg/widgets", "crd.example.com/v1", "Widget"},
					{"our apiserver", "/apis/stable.example.com/v1/namespaces/e2e-agg/crontabs", "stable.example.com/v1", "CronTab"},
				}
				for _, k := range kinds {
					obj := map[string]any{"apiVersion": k.apiVersion, "kind": k.kind, "metadata": map[string]any{"name": "cbor"}, "spec": map[string]any{"replicas": int64(2)}}
					body, err := direct.Marshal(obj)
					if err != nil {
						t.Fatal(err)
					}
					var created httpResult
					if !harness.WaitUntil(30*time.Second, func() bool { // the CRD's handler may lag Established
						created = do(t, kas, http.MethodPost, c.url+k.path, "application/cbor", "application/cbor", body, adminHeaders)
						return created.code != http.StatusNotFound
					}) {
						t.Fatalf("%s: POST %s: %d %s", k.name, k.path, created.code, created.body)
					}
					got := do(t, kas, http.MethodGet, c.url+k.path+"/cbor", "", "application/cbor", nil, adminHeaders)
					if cbor {
						for what, r := range map[string]httpResult{"create": created, "get": got} {
							want := map[string]int{"create": http.StatusCreated, "get": http.StatusOK}[what]
							if r.code != want || r.contentType != "application/cbor" {
								t.Errorf("%s: %s over CBOR: %d %s %q, want %d application/cbor", k.name, what, r.code, r.contentType, r.body, want)
								continue
							}
							var m map[string]any
							if err := direct.Unmarshal(r.body, &m); err != nil {
								t.Errorf("%s: %s: the CBOR answer does not decode: %v", k.name, what, err)
								continue
							}
							meta, _ := m["metadata"].(map[string]any)
							spec, _ := m["spec"].(map[string]any)
							if m["kind"] != k.kind || meta["name"] != "cbor" || spec["replicas"] != int64(2) || meta["uid"] == nil {
								t.Errorf("%s: %s over CBOR gave %v", k.name, what, m)
							}
						}
						list := do(t, kas, http.MethodGet, c.url+k.path, "", "application/cbor", nil, adminHeaders)
						if list.code != http.StatusOK || list.contentType != "application/cbor" {
							t.Errorf("%s: list over CBOR: %d %s", k.name, list.code, list.contentType)
						}
						// The object reads back over JSON as it was sent over CBOR.
						if r := kubectlAs(t, admin, "get", strings.ToLower(k.kind)+"."+strings.Split(k.apiVersion, "/")[0], "cbor", "-n", "e2e-agg", "-o", "jsonpath={.spec.replicas}"); r != "2" {
							t.Errorf("%s: created over CBOR, read over JSON: replicas %q", k.name, r)
						}
						continue
					}
					// Gate off: kube-apiserver answers a client accepting only
					// CBOR with 406 and refuses a CBOR body with 415; so do we.
					if created.code != http.StatusNotAcceptable {
						t.Errorf("%s: POST accepting only CBOR, gate off: %d %q, want 406", k.name, created.code, created.body)
					}
					if r := do(t, kas, http.MethodPost, c.url+k.path, "application/cbor", "application/json", body, adminHeaders); r.code != http.StatusUnsupportedMediaType {
						t.Errorf("%s: POST with a CBOR body, gate off: %d %q, want 415", k.name, r.code, r.body)
					}
					jsonBody, _ := json.Marshal(obj)
					if r := do(t, kas, http.MethodPost, c.url+k.path, "application/json", "application/json", jsonBody, adminHeaders); r.code != http.StatusCreated {
						t.Fatalf("%s: POST over JSON: %d %s", k.name, r.code, r.body)
					}
					got = do(t, kas, http.MethodGet, c.url+k.path+"/cbor", "", "application/cbor", nil, adminHeaders)
					if got.code != http.StatusNotAcceptable {
						t.Errorf("%s: GET accepting only CBOR, gate off: %d %s %q, want 406", k.name, got.code, got.contentType, got.body)
					}
					if r := do(t, kas, http.MethodGet, c.url+k.path+"/cbor", "", "application/cbor, application/json", nil, adminHeaders); r.code != http.StatusOK || r.contentType != "application/json" {
						t.Errorf("%s: GET accepting CBOR or JSON, gate off: %d %s, want 200 application/json", k.name, r.code, r.contentType)
					}
				}
			})
		})
	}
}

type httpResult struct {
	code        int
	contentType string
	body        []byte
}

// do sends a request with the given Content-Type (when body is not nil) and
// Accept headers.
func do(t *testing.T, client *http.Client, method, url, contentType, accept string, body []byte, headers map[string]string) httpResult {
	t.Helper()
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", accept)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	ct, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return httpResult{resp.StatusCode, ct, b}
}

// discoveredResources lists "<version>/<resource>" of group in an
// APIGroupDiscoveryList (apidiscovery.k8s.io/v2).
func discoveredResources(t *testing.T, code int, body, group string) []string {
	t.Helper()
	if code != http.StatusOK {
		t.Fatalf("aggregated discovery: %d %s", code, body)
	}
	var list struct {
		Kind  string `json:"kind"`
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Versions []struct {
				Version   string `json:"version"`
				Resources []struct {
					Resource string `json:"resource"`
				} `json:"resources"`
			} `json:"versions"`
		} `json:"items"`
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || list.Kind != "APIGroupDiscoveryList" {
		t.Fatalf("aggregated discovery: not an APIGroupDiscoveryList (%v): %.300s", err, body)
	}
	var out []string
	for _, g := range list.Items {
		if g.Metadata.Name != group {
			continue
		}
		for _, v := range g.Versions {
			for _, r := range v.Resources {
				out = append(out, v.Version+"/"+r.Resource)
			}
		}
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
