package deploy

import (
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

func TestEtcdImageFor(t *testing.T) {
	for goMod, want := range map[string]string{
		"module m\n\nrequire go.etcd.io/etcd/server/v3 v3.7.0 // indirect\n": "gcr.io/etcd-development/etcd:v3.7.0",
		"module m\n\nrequire (\n\tgo.etcd.io/etcd/server/v3 v3.7.3\n)\n":     "gcr.io/etcd-development/etcd:v3.7.3",
	} {
		got, err := EtcdImageFor([]byte(goMod))
		if err != nil || got != want {
			t.Errorf("%q: got %s, %v; want %s", goMod, got, err, want)
		}
	}
	for _, goMod := range []string{
		"module m\n",
		"module m\n\nrequire go.etcd.io/etcd/server/v3 v3.7.0-20260101000000-abcdefabcdef\n",
		"module m\n\nrequire go.etcd.io/etcd/server/v3 v3.8.0-alpha.0\n",
	} {
		if _, err := EtcdImageFor([]byte(goMod)); err == nil || !strings.Contains(err.Error(), "--etcd-image") {
			t.Errorf("%q: want an error naming --etcd-image, got %v", goMod, err)
		}
	}
}

func TestCertificatesCheck(t *testing.T) {
	now := time.Now()
	c, err := NewCertificates("crontab", "crontab-system", true, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Check("crontab", "crontab-system", true, now); err != nil {
		t.Fatalf("fresh certificates do not fit: %v", err)
	}
	for what, err := range map[string]error{
		"another namespace": c.Check("crontab", "other", true, now),
		"another name":      c.Check("other", "crontab-system", true, now),
		"external etcd":     c.Check("crontab", "crontab-system", false, now),
		"30 days left":      c.Check("crontab", "crontab-system", true, now.Add(ServingValidity-RenewBefore+time.Hour)),
	} {
		if err == nil {
			t.Errorf("%s: the certificates should not fit", what)
		}
	}
	other, _ := NewCertificates("crontab", "crontab-system", true, now)
	swapped := *c
	swapped.Serving.Key = other.Serving.Key
	if err := swapped.Check("crontab", "crontab-system", true, now); err == nil || !strings.Contains(err.Error(), "key") {
		t.Errorf("a certificate with another key: want an error, got %v", err)
	}
	foreign := *c
	foreign.CA = other.CA
	if err := foreign.Check("crontab", "crontab-system", true, now); err == nil {
		t.Error("certificates of another CA fit")
	}
}

func TestRenderRoundTripAndOptionalParts(t *testing.T) {
	p := &project.Project{Domain: "example.com", Module: "example.com/crontab", Resources: []*project.Resource{
		{KindDescriptor: project.KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab", Plural: "crontabs"}, Controller: false},
	}}
	o := &Options{Name: "crontab", Namespace: "default", Image: "r.example.com/c:v1", EtcdServers: []string{"https://etcd:2379"}, Project: p, Versions: map[string][]string{"stable.example.com": {"v1"}}}
	c, err := NewCertificates(o.Name, o.Namespace, false, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	files, err := Render(o, c)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]File{}
	for _, f := range files {
		names[f.Name] = f
	}
	// No Namespace object for "default" (kubectl delete -k would delete it),
	// no controller-manager without controllers, no etcd with --etcd-servers.
	for _, absent := range []string{NamespaceFile, ControllerManagerFile, EtcdFile} {
		if _, ok := names[absent]; ok {
			t.Errorf("%s written", absent)
		}
	}
	if !names[CertificatesFile].Private {
		t.Error("certificates.yaml is not marked private")
	}
	if strings.Contains(string(names[KustomizationFile].Content), "namespace:") {
		t.Error("kustomization.yaml sets a namespace: it would move the RoleBinding out of kube-system")
	}
	back, err := ReadCertificates(names[CertificatesFile].Content, o.Name)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.Check(o.Name, o.Namespace, false, time.Now()); err != nil {
		t.Errorf("certificates read back do not fit: %v", err)
	}
	for _, f := range files {
		if strings.Contains(string(f.Content), "creationTimestamp") || strings.Contains(string(f.Content), "status:") {
			t.Errorf("%s carries empty fields:\n%s", f.Name, f.Content)
		}
	}
}
