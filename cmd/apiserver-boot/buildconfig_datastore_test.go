package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// TestBuildConfigDatastore: --datastore-endpoint-secret writes no etcd
// object (no StatefulSet, no etcd Service, no etcd certificate Secrets)
// and needs no etcd in go.mod; the apiserver reads --datastore-endpoint
// from the Secret's key mounted as a file, with today's replicas;
// the kustomized folder decodes strictly.
func TestBuildConfigDatastore(t *testing.T) {
	dir := deployProject(t)
	// No etcd in go.mod: nothing asks for an etcd image.
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/crontab\n\ngo 1.26.0\n"), 0o644)
	const img = "registry.example.com/crontab:v0.1.0"
	out := mustRun(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img, "--datastore-endpoint-secret", "crontab-datastore")
	if !strings.Contains(out, "--datastore-endpoint from key \"endpoint\" of the Secret crontab-system/crontab-datastore") {
		t.Errorf("output does not say where the URL comes from:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "config", "etcd.yaml")); err == nil {
		t.Error("etcd.yaml written")
	}
	objs := kustomize(t, filepath.Join(dir, "config"))
	kinds := map[string]int{}
	var api *appsv1.Deployment
	var budgets []string
	for _, o := range objs {
		kinds[o.GetObjectKind().GroupVersionKind().Kind]++
		switch x := o.(type) {
		case *appsv1.Deployment:
			if x.Name == "crontab-apiserver" {
				api = x
			}
			if *x.Spec.Replicas != 2 {
				t.Errorf("%s: %d replicas, want 2 as with etcd", x.Name, *x.Spec.Replicas)
			}
		case *policyv1.PodDisruptionBudget:
			budgets = append(budgets, x.Name)
		case *corev1.Secret:
			if x.Name != "crontab-apiserver-tls" {
				t.Errorf("Secret %s written: want the serving certificate only", x.Name)
			}
		case *corev1.Service:
			if x.Name != "crontab" {
				t.Errorf("Service %s written: want the apiserver's only", x.Name)
			}
		case *corev1.ConfigMap:
			for k, v := range x.Data {
				if strings.Contains(v, "DATASTORE") || strings.Contains(v, "crontab-datastore") {
					t.Errorf("ConfigMap %s key %s refers to the datastore", x.Name, k)
				}
			}
		}
		if name := objName(o); strings.Contains(name, "etcd") {
			t.Errorf("%T %s written with a SQL datastore", o, name)
		}
	}
	if kinds["StatefulSet"] != 0 || kinds["Secret"] != 1 || kinds["Service"] != 1 || kinds["Deployment"] != 2 {
		t.Errorf("objects by kind %v: want no StatefulSet, 1 Secret, 1 Service, 2 Deployments", kinds)
	}
	if !slices.Equal(budgets, []string{"crontab-apiserver"}) {
		t.Errorf("disruption budgets %v, want the apiserver's only", budgets)
	}
	if api == nil {
		t.Fatal("no apiserver Deployment")
	}
	c := api.Spec.Template.Spec.Containers[0]
	if want := "--datastore-endpoint-file=/var/run/apiserver/datastore/endpoint"; !slices.Contains(c.Args, want) || slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "--etcd") }) {
		t.Errorf("apiserver args %v: want %s and no --etcd flag", c.Args, want)
	}
	if len(c.Env) != 0 {
		t.Errorf("apiserver env %+v: the URL is read from the mounted Secret, not the environment", c.Env)
	}
	for _, f := range listFiles(t, filepath.Join(dir, "config")) {
		b, _ := os.ReadFile(filepath.Join(dir, "config", f))
		if strings.Contains(strings.ToLower(string(b)), "etcd") {
			t.Errorf("config/%s mentions etcd", f)
		}
	}

	// From etcd to SQL in one folder: etcd.yaml and etcd's certificates go.
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/crontab\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 v3.7.0 // indirect\n"), 0o644)
	mustRun(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img, "--output", "moved")
	out = mustRun(t, dir, "build", "config", "--name", "crontab", "--namespace", "crontab-system", "--image", img, "--output", "moved", "--datastore-endpoint-secret", "crontab-datastore")
	if !strings.Contains(out, "removed moved/etcd.yaml") || !strings.Contains(out, "etcd StatefulSet of the earlier configuration") {
		t.Errorf("switching to a datastore:\n%s", out)
	}
	for _, o := range kustomize(t, filepath.Join(dir, "moved")) {
		if strings.Contains(objName(o), "etcd") {
			t.Errorf("%T %s left after switching to a datastore", o, objName(o))
		}
	}
}

func objName(o runtime.Object) string {
	if m, ok := o.(interface{ GetName() string }); ok {
		return m.GetName()
	}
	return ""
}

// TestBuildConfigDatastoreConflicts: an etcd flag beside
// --datastore-endpoint-secret, or a bad Secret name, is an error naming
// both flags; nothing is written.
func TestBuildConfigDatastoreConflicts(t *testing.T) {
	dir := deployProject(t)
	before := listFiles(t, dir)
	base := []string{"build", "config", "--image", "r.example.com/x:v1", "--datastore-endpoint-secret", "crontab-datastore"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--etcd-servers", "https://etcd.example.com:2379"}, []string{"--datastore-endpoint-secret and --etcd-servers exclude each other"}},
		{[]string{"--etcd-image", "gcr.io/etcd-development/etcd:v3.7.0"}, []string{"--datastore-endpoint-secret and --etcd-image exclude each other"}},
		{[]string{"--etcd-members", "3"}, []string{"--datastore-endpoint-secret and --etcd-members exclude each other"}},
	} {
		_, err := run(t, dir, append(slices.Clone(base), tc.args...)...)
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: want an error containing %q, got %v", tc.args, w, err)
			}
		}
	}
	_, err := run(t, dir, "build", "config", "--image", "r.example.com/x:v1", "--datastore-endpoint-secret", "Not_A_Name")
	if err == nil || !strings.Contains(err.Error(), `--datastore-endpoint-secret "Not_A_Name" is not valid`) {
		t.Errorf("a bad Secret name: %v", err)
	}
	if after := listFiles(t, dir); len(after) != len(before) {
		t.Errorf("files written on error: %v", after)
	}
}
