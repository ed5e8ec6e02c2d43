package deploy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.yaml from the rendered configuration")

func datastoreOptions() *Options {
	p := &project.Project{Domain: "example.com", Module: "example.com/crontab", Resources: []*project.Resource{
		{KindDescriptor: project.KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab", Plural: "crontabs"}, Controller: true},
	}}
	return &Options{Name: "crontab", Namespace: "crontab-system", Image: "r.example.com/c:v1", DatastoreSecret: "crontab-datastore",
		Project: p, Versions: map[string][]string{"stable.example.com": {"v1"}}, Kinds: []Kind{{KindDescriptor: project.KindDescriptor{Group: "stable", Plural: "crontabs"}, FullGroup: "stable.example.com", Status: true}}}
}

// TestRenderDatastore: with DatastoreSecret no etcd object, certificate or
// flag is rendered; the apiserver reads --datastore-endpoint from the
// Secret's key mounted as a file (--datastore-endpoint-file: the URL in no
// flag value, environment or ConfigMap), beside the files the URL may name; the
// replicas and budget of today. apiserver.yaml is compared with a golden
// file (go test ./internal/cli/deploy -update rewrites it).
func TestRenderDatastore(t *testing.T) {
	o := datastoreOptions()
	c, err := NewCertificates(o.Name, o.Namespace, o.etcd(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if c.EtcdServer != nil || c.EtcdClient != nil {
		t.Error("etcd certificates issued for a SQL datastore")
	}
	files, err := Render(o, c)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]byte{}
	for _, f := range files {
		byName[f.Name] = f.Content
		// Not a word of etcd anywhere: no StatefulSet, Service, PKI Secret or flag.
		if strings.Contains(strings.ToLower(string(f.Content)), "etcd") {
			t.Errorf("%s mentions etcd with a SQL datastore:\n%s", f.Name, f.Content)
		}
	}
	if _, ok := byName[EtcdFile]; ok {
		t.Errorf("%s written with a SQL datastore", EtcdFile)
	}
	objs, err := Decode(byName[APIServerFile])
	if err != nil {
		t.Fatal(err)
	}
	var api *appsv1.Deployment
	budget := false
	for _, obj := range objs {
		switch x := obj.(type) {
		case *appsv1.Deployment:
			api = x
		case *corev1.ConfigMap:
			for k, v := range x.Data {
				if strings.Contains(v, "datastore") || strings.Contains(v, o.DatastoreSecret) {
					t.Errorf("ConfigMap %s key %s refers to the datastore", x.Name, k)
				}
			}
		default:
			budget = budget || reflect.TypeOf(obj).Elem().Name() == "PodDisruptionBudget"
		}
	}
	if api == nil || *api.Spec.Replicas != DefaultReplicas || !budget {
		t.Fatalf("apiserver Deployment %v, budget %v: want %d replicas and a budget, as with etcd", api, budget, DefaultReplicas)
	}
	ctr := api.Spec.Template.Spec.Containers[0]
	var storage []string
	for _, a := range ctr.Args {
		if strings.HasPrefix(a, "--etcd") || strings.HasPrefix(a, "--datastore") {
			storage = append(storage, a)
		}
	}
	// --datastore-replicas lets the apiserver refuse a sqlite:// URL that
	// two replicas would each hold their own file of.
	if want := []string{"--datastore-endpoint-file=/var/run/apiserver/datastore/endpoint", fmt.Sprintf("--datastore-replicas=%d", DefaultReplicas)}; !reflect.DeepEqual(storage, want) {
		t.Errorf("storage flags %q, want %q", storage, want)
	}
	if len(ctr.Env) > 0 {
		t.Errorf("apiserver env %+v: the URL is read from the mounted Secret, not the environment", ctr.Env)
	}
	mounted := false
	for _, m := range ctr.VolumeMounts {
		for _, v := range api.Spec.Template.Spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == "crontab-datastore" && m.MountPath == DatastoreDir && m.ReadOnly {
				mounted = true
			}
		}
	}
	if !mounted {
		t.Errorf("the Secret is not mounted read-only at %s: %+v", DatastoreDir, api.Spec.Template.Spec.Volumes)
	}
	secrets, err := Decode(byName[CertificatesFile])
	if err != nil {
		t.Fatal(err)
	}
	if len(secrets) != 1 || secrets[0].(*corev1.Secret).Name != ServingSecretName(o.Name) {
		t.Errorf("certificates.yaml holds %d Secrets, want the serving one only", len(secrets))
	}

	golden := filepath.Join("testdata", "apiserver-datastore.golden.yaml")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, byName[APIServerFile], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/cli/deploy -update writes it)", err)
	}
	if !bytes.Equal(want, byName[APIServerFile]) {
		t.Errorf("%s differs from %s (go test ./internal/cli/deploy -update rewrites it):\n%s", APIServerFile, golden, byName[APIServerFile])
	}
}

// TestDatastoreValidate: a bad Secret name, or etcd options beside the
// Secret, are errors naming both flags; no etcd image is needed.
func TestDatastoreValidate(t *testing.T) {
	o := datastoreOptions()
	if err := o.Validate(); err != nil {
		t.Fatalf("no etcd image needed with a datastore: %v", err)
	}
	for _, tc := range []struct {
		change func(*Options)
		want   []string
	}{
		{func(o *Options) { o.DatastoreSecret = "Bad_Name" }, []string{"--datastore-endpoint-secret \"Bad_Name\" is not valid"}},
		{func(o *Options) { o.EtcdServers = []string{"https://etcd:2379"} }, []string{"--datastore-endpoint-secret", "--etcd-servers"}},
		{func(o *Options) { o.EtcdImage = "gcr.io/etcd-development/etcd:v3.7.0" }, []string{"--datastore-endpoint-secret", "--etcd-image"}},
	} {
		o := datastoreOptions()
		tc.change(o)
		err := o.Validate()
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: want an error naming %s, got %v", o, w, err)
			}
		}
	}
}

// TestWriteDatastoreAfterEtcd: switching a folder from etcd to a SQL
// datastore removes etcd.yaml and issues certificates without etcd's; the
// note says the running etcd keeps its data.
func TestWriteDatastoreAfterEtcd(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	w := Writer{Out: &out, Rel: func(p string) string { return filepath.Base(p) }, Now: time.Now()}
	withEtcd := datastoreOptions()
	withEtcd.DatastoreSecret, withEtcd.EtcdImage = "", "gcr.io/etcd-development/etcd:v3.7.0"
	if err := w.Write(dir, withEtcd); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, EtcdFile)); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := w.Write(dir, datastoreOptions()); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"removed " + EtcdFile, "did not fit", `--datastore-endpoint from key "endpoint" of the Secret crontab-system/crontab-datastore`, "etcd StatefulSet of the earlier configuration"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, CertificatesFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "etcd") {
		t.Error("etcd certificates kept with a SQL datastore")
	}
}
