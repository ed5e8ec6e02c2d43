//go:build e2e

package e2e

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/harness"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// TestResourceSemantics drives what makes the generated resources behave
// like built-in Kubernetes APIs (issue: subresources, names, printing,
// OpenAPI validation, apply), with kubectl and, where kubectl has no verb,
// raw HTTP through the kubeconfig's credentials.
func TestResourceSemantics(t *testing.T) {
	// The audit log, as a user turns it on (docs/security.md).
	policy := "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n" +
		"- level: None\n  nonResourceURLs: ['/healthz*', '/livez*', '/readyz*']\n" +
		"- level: RequestResponse\n  verbs: [create, update, patch, delete]\n  resources: [{group: stable.example.com}]\n" +
		"- level: Metadata\n"
	if err := os.WriteFile(filepath.Join(proj, "audit-policy.yaml"), []byte(policy), 0o644); err != nil {
		t.Fatal(err)
	}
	auditLog := filepath.Join(proj, ".apiserver-boot", "audit.log")
	os.Remove(auditLog)
	rl, _ := runLocal(t, "--generate=true", "--controller-manager=false", "--audit-policy-file", "audit-policy.yaml", "--audit-log-path", filepath.Join(".apiserver-boot", "audit.log"))
	defer rl.Stop(t)
	create := func(manifest string) {
		t.Helper()
		if r := kubectlApplyStdin(t, "create", manifest); r.err != nil {
			t.Fatalf("create: %v\n%s", r.err, r.stderr)
		}
	}
	create("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: sem\n  labels: {app: sem}\nspec:\n  replicas: 2\n  image: nginx\n")

	t.Run("names in discovery: short names, singular, categories", func(t *testing.T) {
		for _, args := range [][]string{{"get", "ct", "sem", "-o", "name"}, {"get", "cron", "sem", "-o", "name"}, {"get", "crontab", "sem", "-o", "name"}} {
			if got := mustKubectl(t, args...); got != "crontab.stable.example.com/sem\n" {
				t.Errorf("kubectl %s: %q", strings.Join(args, " "), got)
			}
		}
		create("apiVersion: stable.example.com/v1\nkind: Ox\nmetadata:\n  name: babe\n")
		for _, args := range [][]string{{"get", "oxen", "-o", "name"}, {"get", "ox", "-o", "name"}} {
			if got := mustKubectl(t, args...); got != "ox.stable.example.com/babe\n" {
				t.Errorf("kubectl %s (--resource oxen --singular ox): %q", strings.Join(args, " "), got)
			}
		}
		if got := mustKubectl(t, "get", "all", "-o", "name"); !strings.Contains(got, "crontab.stable.example.com/sem") {
			t.Errorf("kubectl get all (category all): %q", got)
		}
		if got := mustKubectl(t, "get", "batch", "-o", "name"); !strings.Contains(got, "crontab.stable.example.com/sem") {
			t.Errorf("kubectl get batch (category batch): %q", got)
		}
	})

	t.Run("versions: one object through v1 and v2 (a renamed field), v2 preferred", func(t *testing.T) {
		create("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: versioned\nspec:\n  replicas: 2\n  cronSpec: '*/5 * * * *'\n")
		if got := mustKubectl(t, "get", "crontabs.v2.stable.example.com", "versioned", "-o", "jsonpath={.apiVersion} {.spec.replicas} {.spec.schedule}|{.spec.cronSpec}"); got != "stable.example.com/v2 2 */5 * * * *|" {
			t.Errorf("read through v2: %q", got)
		}
		mustKubectl(t, "patch", "crontabs.v2.stable.example.com", "versioned", "--type", "merge", "-p", `{"spec":{"replicas":5,"schedule":"0 3 * * *"}}`)
		if got := mustKubectl(t, "get", "crontabs.v1.stable.example.com", "versioned", "-o", "jsonpath={.apiVersion} {.spec.replicas} {.spec.cronSpec}|{.spec.schedule}"); got != "stable.example.com/v1 5 0 3 * * *|" {
			t.Errorf("read back through v1: %q", got)
		}
		// The printer columns of each version follow its own field names.
		if got := mustKubectl(t, "get", "crontabs.v2.stable.example.com", "versioned", "--no-headers", "-o", "custom-columns=S:.spec.schedule"); got != "0 3 * * *\n" {
			t.Errorf("v2 columns: %q", got)
		}
		if got := mustKubectl(t, "get", "crontabs.v2.stable.example.com", "versioned"); !strings.Contains(got, "0 3 * * *") {
			t.Errorf("v2 printer column Schedule: %q", got)
		}
		if got := mustKubectl(t, "get", "--raw", "/apis/stable.example.com"); !strings.Contains(got, `"preferredVersion":{"groupVersion":"stable.example.com/v2","version":"v2"}`) {
			t.Errorf("v2 should be preferred: %s", got)
		}
	})

	t.Run("create refuses clashing names, writing nothing", func(t *testing.T) {
		before := snapshot(t, proj)
		for args, want := range map[string]string{
			"--kind Cow --short-names ct":   `short name "ct" clashes with the short name of kind CronTab`,
			"--kind Crontabs":               `clashes with the plural of kind CronTab`,
			"--kind Cow --resource oxen":    `plural "oxen" clashes with the plural of kind Ox`,
			"--kind Cow --short-names Bad!": "--short-names",
		} {
			out, err := harness.Sh(proj, cli, append([]string{"create", "group", "version", "resource", "--group", "stable", "--version", "v1"}, strings.Fields(args)...)...)
			if err == nil || !strings.Contains(out, want) {
				t.Errorf("create %s: want an error containing %q, got %v\n%s", args, want, err, out)
			}
		}
		if after := snapshot(t, proj); after != before {
			t.Errorf("a refused create changed files")
		}
	})

	t.Run("defaults and validation from markers", func(t *testing.T) {
		if got := mustKubectl(t, "get", "crontabs.v1.stable.example.com", "sem", "-o", "jsonpath={.spec.cronSpec}"); got != "* * * * *" {
			t.Errorf("+kubebuilder:default not applied: cronSpec = %q", got)
		}
		r := kubectlApplyStdin(t, "create", "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: bad\nspec:\n  replicas: 15\n  image: redis\n  cronSpec: '* *'\n")
		for _, want := range []string{
			// kube-apiserver's own words for a custom resource.
			"spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
			`spec.image: Unsupported value: "redis": supported values: "busybox", "nginx"`,
			`spec.cronSpec: Invalid value: "* *": spec.cronSpec in body should be at least 9 chars long`,
		} {
			if r.err == nil || !strings.Contains(r.stderr, want) {
				t.Errorf("want %q, got err=%v stderr=%s", want, r.err, r.stderr)
			}
		}
		schema := mustKubectl(t, "get", "--raw", "/openapi/v3/apis/stable.example.com/v1")
		for _, want := range []string{`"maximum":10`, `"enum":["busybox","nginx"]`, `"minLength":9`, `"default":"* * * * *"`} {
			if !strings.Contains(schema, want) {
				t.Errorf("published OpenAPI schema lacks %s", want)
			}
		}
		if out := mustKubectl(t, "explain", "crontab.spec.cronSpec", "--api-version", "stable.example.com/v1"); !strings.Contains(out, "the schedule, in cron format") {
			t.Errorf("explain: %s", out)
		}
	})

	t.Run("audit log: a create and a delete with user, verb, resource and response code", func(t *testing.T) {
		create("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: audited\nspec:\n  replicas: 1\n")
		mustKubectl(t, "delete", "crontab", "audited")
		found := map[string]bool{}
		deadline := time.Now().Add(30 * time.Second)
		for len(found) < 2 && time.Now().Before(deadline) {
			b, _ := os.ReadFile(auditLog)
			for _, line := range strings.Split(string(b), "\n") {
				var ev struct {
					Stage     string                    `json:"stage"`
					Verb      string                    `json:"verb"`
					User      struct{ Username string } `json:"user"`
					ObjectRef *struct {
						Resource, Name, APIGroup string
					} `json:"objectRef"`
					ResponseStatus *struct{ Code int } `json:"responseStatus"`
					RequestObject  json.RawMessage     `json:"requestObject"`
				}
				if json.Unmarshal([]byte(line), &ev) != nil || ev.Stage != "ResponseComplete" || ev.ObjectRef == nil || ev.ObjectRef.Name != "audited" {
					continue
				}
				if ev.ObjectRef.Resource != "crontabs" || ev.ObjectRef.APIGroup != "stable.example.com" || ev.User.Username == "" || ev.ResponseStatus == nil {
					t.Errorf("audit event without resource, user or response code: %s", line)
					continue
				}
				switch {
				case ev.Verb == "create" && ev.ResponseStatus.Code == 201 && len(ev.RequestObject) > 0:
					found["create"] = true
				case ev.Verb == "delete" && ev.ResponseStatus.Code == 200:
					found["delete"] = true
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		if !found["create"] || !found["delete"] {
			b, _ := os.ReadFile(auditLog)
			t.Errorf("audit log lacks the create (201, with its request body) or the delete (200) of crontab audited: found %v\n%s", found, b)
		}
		if st, err := os.Stat(auditLog); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("audit log: %v, want mode 0600", err)
		}
	})

	t.Run("printer columns and a table hook", func(t *testing.T) {
		out := mustKubectl(t, "get", "crontabs")
		if !strings.HasPrefix(out, "NAME") || !strings.Contains(out, "SCHEDULE") || !strings.Contains(out, "REPLICAS") || !strings.Contains(out, "AGE") || strings.Contains(out, "IMAGE") {
			t.Errorf("kubectl get: columns NAME SCHEDULE REPLICAS AGE expected:\n%s", out)
		}
		if wide := mustKubectl(t, "get", "crontabs", "-o", "wide"); !strings.Contains(wide, "IMAGE") || !strings.Contains(wide, "nginx") {
			t.Errorf("-o wide should add the priority column IMAGE:\n%s", wide)
		}
		create("apiVersion: stable.example.com/v1\nkind: Calendar\nmetadata:\n  name: sem-calendar\n")
		if out := mustKubectl(t, "get", "calendars"); !strings.Contains(out, "HOLIDAY") {
			t.Errorf("ConvertToTable hook not used:\n%s", out)
		}
	})

	t.Run("scale subresource", func(t *testing.T) {
		mustKubectl(t, "scale", "--replicas=5", "crontabs/sem")
		if got := mustKubectl(t, "get", "ct", "sem", "-o", "jsonpath={.spec.replicas}"); got != "5" {
			t.Errorf("after kubectl scale: replicas = %q", got)
		}
		got := mustKubectl(t, "get", "crontab", "sem", "--subresource=scale", "-o", "jsonpath={.apiVersion} {.kind} {.spec.replicas}")
		if got != "autoscaling/v1 Scale 5" {
			t.Errorf("get --subresource=scale: %q", got)
		}
	})

	t.Run("custom subresource", func(t *testing.T) {
		if got := mustKubectl(t, "get", "--raw", "/apis/stable.example.com/v1"); !strings.Contains(got, `"name":"crontabs/restart"`) {
			t.Errorf("discovery lacks crontabs/restart: %s", got)
		}
		out := kubectlStdin(`{"apiVersion":"stable.example.com/v1","kind":"CronTabRestart"}`,
			"create", "--raw", "/apis/stable.example.com/v1/namespaces/default/crontabs/sem/restart", "-f", "-")
		if out.err != nil || !strings.Contains(out.stdout, `"kind":"CronTab"`) || !strings.Contains(out.stdout, `"name":"sem"`) {
			t.Errorf("POST crontabs/sem/restart should return the CronTab as scaffolded: %v %s %s", out.err, out.stdout, out.stderr)
		}
		if out := kubectlStdin(`{"apiVersion":"stable.example.com/v1","kind":"CronTabRestart"}`,
			"create", "--raw", "/apis/stable.example.com/v1/namespaces/default/crontabs/missing/restart", "-f", "-"); out.err == nil || !strings.Contains(out.stderr, "NotFound") {
			t.Errorf("restart of a missing object should be 404: %v %s", out.err, out.stderr)
		}
	})

	// restart was created before v2 (create version copied it), suspend after,
	// for v1 only: both belong to the kind and are served in every version,
	// answering in the version of the request.
	t.Run("custom subresources in every version", func(t *testing.T) {
		for _, v := range []string{"v1", "v2"} {
			discovery := mustKubectl(t, "get", "--raw", "/apis/stable.example.com/"+v)
			for _, sub := range []string{"restart", "suspend"} {
				if !strings.Contains(discovery, `"name":"crontabs/`+sub+`"`) {
					t.Errorf("%s discovery lacks crontabs/%s: %s", v, sub, discovery)
				}
				request := fmt.Sprintf(`{"apiVersion":"stable.example.com/%s","kind":"CronTab%s"}`, v, strings.ToUpper(sub[:1])+sub[1:])
				out := kubectlStdin(request, "create", "--raw", "/apis/stable.example.com/"+v+"/namespaces/default/crontabs/sem/"+sub, "-f", "-")
				if out.err != nil || !strings.Contains(out.stdout, `"kind":"CronTab"`) || !strings.Contains(out.stdout, `"apiVersion":"stable.example.com/`+v+`"`) || !strings.Contains(out.stdout, `"name":"sem"`) {
					t.Errorf("POST %s crontabs/sem/%s should return the CronTab in %s: %v %s %s", v, sub, v, out.err, out.stdout, out.stderr)
				}
			}
		}
	})

	t.Run("protobuf: client-go, and JSON stays the default", func(t *testing.T) {
		cmd := exec.Command("go", "test", "-count=1", "-v", "-tags", "e2eclient", "-run", "TestProtobufClient", "./pkg/apis/stable/v1/")
		cmd.Dir = proj
		cmd.Env = append(os.Environ(), "E2E_KUBECONFIG="+filepath.Join(proj, "kubeconfig"))
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestProtobufClient") {
			t.Fatalf("client-go over protobuf: %v\n%s", err, out)
		}
		cfg, client := restConfig(t)
		for accept, want := range map[string]string{"application/vnd.kubernetes.protobuf": "k8s\x00", "": "{"} {
			req, _ := http.NewRequest(http.MethodGet, cfg.Host+"/apis/stable.example.com/v1/namespaces/default/crontabs/sem", nil)
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.HasPrefix(string(body), want) {
				t.Errorf("GET with Accept %q: body starts %q, want %q (Content-Type %s)", accept, body[:min(8, len(body))], want, resp.Header.Get("Content-Type"))
			}
		}
	})

	t.Run("field selectors", func(t *testing.T) {
		create("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: sem-busy\nspec:\n  image: busybox\n")
		for sel, want := range map[string]string{
			"spec.image=busybox":      "crontab.stable.example.com/sem-busy\n",
			"metadata.name=sem":       "crontab.stable.example.com/sem\n",
			"metadata.namespace=none": "",
		} {
			if got := mustKubectl(t, "get", "crontabs", "--field-selector", sel, "-o", "name"); got != want {
				t.Errorf("--field-selector %s: %q, want %q", sel, got, want)
			}
		}
		if r := kubectl("get", "crontabs", "--field-selector", "spec.cronSpec=x"); r.err == nil || !strings.Contains(r.stderr, "not supported") {
			t.Errorf("a field not marked selectable should be refused: %v %s", r.err, r.stderr)
		}
	})

	t.Run("patch: json, merge, strategic, server-side and client-side apply", func(t *testing.T) {
		mustKubectl(t, "patch", "ct", "sem", "--type", "json", "-p", `[{"op":"replace","path":"/spec/replicas","value":3}]`)
		mustKubectl(t, "patch", "ct", "sem", "--type", "merge", "-p", `{"metadata":{"labels":{"merge":"yes"}}}`)
		mustKubectl(t, "patch", "ct", "sem", "--type", "strategic", "-p", `{"metadata":{"labels":{"strategic":"yes"}}}`)
		if got := mustKubectl(t, "get", "ct", "sem", "-o", "jsonpath={.spec.replicas} {.metadata.labels.merge} {.metadata.labels.strategic}"); got != "3 yes yes" {
			t.Errorf("after patches: %q", got)
		}
		applied := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: sem-apply\nspec:\n  replicas: 4\n  image: busybox\n"
		if r := kubectlApplyStdinArgs(t, applied, "apply", "--server-side", "--field-manager", "e2e-ssa"); r.err != nil {
			t.Fatalf("apply --server-side: %v %s", r.err, r.stderr)
		}
		if got := mustKubectl(t, "get", "ct", "sem-apply", "-o", "jsonpath={.metadata.managedFields[*].manager}"); !strings.Contains(got, "e2e-ssa") {
			t.Errorf("managed fields after server-side apply: %q", got)
		}
		conflicting := strings.Replace(applied, "replicas: 4", "replicas: 6", 1)
		if r := kubectlApplyStdinArgs(t, conflicting, "apply", "--server-side", "--field-manager", "other"); r.err == nil || !strings.Contains(r.stderr, "conflict") {
			t.Errorf("a second manager changing spec.replicas should conflict: %v %s", r.err, r.stderr)
		}
		clientSide := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: sem-csa\nspec:\n  replicas: 1\n"
		for i := 0; i < 2; i++ {
			if r := kubectlApplyStdinArgs(t, strings.Replace(clientSide, "replicas: 1", fmt.Sprintf("replicas: %d", i+1), 1), "apply"); r.err != nil {
				t.Fatalf("kubectl apply: %v %s", r.err, r.stderr)
			}
		}
		if got := mustKubectl(t, "get", "ct", "sem-csa", "-o", "jsonpath={.spec.replicas}"); got != "2" {
			t.Errorf("client-side apply: replicas = %q", got)
		}
	})

	t.Run("optimistic concurrency: a stale resourceVersion is 409", func(t *testing.T) {
		stale := mustKubectl(t, "get", "crontabs.v1.stable.example.com", "sem", "-o", "json") // PUT below goes to the v1 path
		mustKubectl(t, "label", "ct", "sem", "bump=1")
		r := kubectlApplyStdin(t, "replace", stale)
		if r.err == nil || !strings.Contains(r.stderr, "the object has been modified") {
			t.Errorf("replace with a stale resourceVersion: %v %s", r.err, r.stderr)
		}
		var obj map[string]any
		json.Unmarshal([]byte(stale), &obj)
		if code := rawDo(t, http.MethodPut, "/apis/stable.example.com/v1/namespaces/default/crontabs/sem", stale); code != http.StatusConflict {
			t.Errorf("PUT with a stale resourceVersion: HTTP %d, want 409", code)
		}
	})

	t.Run("finalizers hold deletion", func(t *testing.T) {
		create("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: sem-final\n  finalizers: [example.com/hold]\n")
		mustKubectl(t, "delete", "ct", "sem-final", "--wait=false")
		if got := mustKubectl(t, "get", "ct", "sem-final", "-o", "jsonpath={.metadata.deletionTimestamp}"); got == "" {
			t.Fatalf("object with a finalizer should stay, with a deletionTimestamp")
		}
		mustKubectl(t, "patch", "ct", "sem-final", "--type", "merge", "-p", `{"metadata":{"finalizers":null}}`)
		if !harness.WaitUntil(10*time.Second, func() bool { return kubectl("get", "ct", "sem-final").err != nil }) {
			t.Errorf("object still there after its finalizers were removed")
		}
	})

	t.Run("watch from a resourceVersion, with bookmarks", func(t *testing.T) {
		rv := mustKubectl(t, "get", "crontabs", "-o", "jsonpath={.metadata.resourceVersion}")
		events := make(chan string, 100)
		go watchRaw(t, "/apis/stable.example.com/v1/namespaces/default/crontabs?watch=true&allowWatchBookmarks=true&timeoutSeconds=8&resourceVersion="+rv, events)
		time.Sleep(500 * time.Millisecond)
		create("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: sem-watch\n")
		mustKubectl(t, "label", "ct", "sem-watch", "seen=yes")
		mustKubectl(t, "delete", "ct", "sem-watch")
		var got []string
		for e := range events {
			got = append(got, e)
		}
		joined := strings.Join(got, " ")
		for _, want := range []string{"ADDED sem-watch", "MODIFIED sem-watch", "DELETED sem-watch", "BOOKMARK"} {
			if !strings.Contains(joined, want) {
				t.Errorf("watch events %v lack %q", got, want)
			}
		}
	})
}

func kubectlApplyStdinArgs(t *testing.T, manifest string, args ...string) result {
	t.Helper()
	return kubectlStdin(manifest, append(args, "-f", "-")...)
}

func restConfig(t *testing.T) (*rest.Config, *http.Client) {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", filepath.Join(proj, "kubeconfig"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, client
}

// rawDo sends body with the kubeconfig's credentials and returns the HTTP status.
func rawDo(t *testing.T, method, path, body string) int {
	t.Helper()
	cfg, client := restConfig(t)
	req, _ := http.NewRequest(method, cfg.Host+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// watchRaw streams a watch and sends "<TYPE> <name>" per event until the server ends it.
func watchRaw(t *testing.T, path string, events chan<- string) {
	defer close(events)
	cfg, client := restConfig(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, cfg.Host+path, nil)
	resp, err := client.Do(req)
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(bufio.NewReader(resp.Body))
	for {
		var e struct {
			Type   string `json:"type"`
			Object struct {
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			} `json:"object"`
		}
		if err := dec.Decode(&e); err != nil {
			return
		}
		events <- e.Type + " " + e.Object.Metadata.Name
	}
}

// snapshot hashes every source file of a project (not its local state).
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() && (rel == "bin" || rel == ".apiserver-boot") {
			return filepath.SkipDir
		}
		if d.IsDir() || rel == "kubeconfig" {
			return nil
		}
		b, err := os.ReadFile(p)
		fmt.Fprintf(h, "%s %x\n", rel, sha256.Sum256(b))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}
