package adopt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
)

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, l := range lines {
		if !strings.Contains(out, l) {
			t.Errorf("the output lacks %q:\n%s", l, out)
		}
	}
}

// checkAdopted: the project serves every object with its identity, the CRD
// serves nothing (and keeps its objects), no pause, no temporary APIService.
func (f *fakeCluster) checkAdopted(want ...string) {
	t := f.t
	t.Helper()
	if !f.routed() || f.crdServed() || f.pauseExists() || f.tempExists() || !f.sealed {
		t.Errorf("routed %v, CRD served %v, paused %v, temporary APIService %v, sealed %v: want true, false, false, false, true", f.routed(), f.crdServed(), f.pauseExists(), f.tempExists(), f.sealed)
	}
	crd := f.crdObjects()
	if len(f.project) != len(want) || len(crd) != len(want) {
		t.Errorf("the project holds %d objects, the CRD %d: want %d each", len(f.project), len(crd), len(want))
	}
	for _, k := range want {
		p, c := f.project[k], crd[k]
		if p == nil || c == nil {
			t.Errorf("%s: in the project %v, in the CRD %v", k, p != nil, c != nil)
			continue
		}
		if problems, _ := Compare(resource, []*unstructured.Unstructured{c}, []*unstructured.Unstructured{p}); len(problems) > 0 {
			t.Errorf("%s was not moved with its identity: %v", k, problems)
		}
	}
}

func TestAdopt(t *testing.T) {
	f := newFakeCluster(t, crontab("a"), crontab("b"))
	out, err := f.run(Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "crontabs.stable.example.com: CRD serves v1 (stores v1); the project serves v1 (stores v1); 2 objects",
		"adopted crontabs.stable.example.com: 2 objects; writes paused for ")
	f.checkAdopted("default/a", "default/b")
	_, d, _ := strings.Cut(out, "writes paused for ")
	if _, err := time.ParseDuration(strings.TrimSpace(d)); err != nil {
		t.Errorf("the pause's length is no Go duration: %v", err)
	}
	if len(f.writes) > 0 {
		t.Errorf("the CRD's objects were written: %v", f.writes)
	}
	out, err = f.run(Options{})
	if err != nil || !strings.Contains(out, "nothing to do: crontabs.stable.example.com are served by the project's apiserver") {
		t.Errorf("a second run: %v\n%s", err, out)
	}
}

func TestDryRun(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	out, err := f.run(Options{DryRun: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "; 1 objects", "dry run: the adoption can go ahead")
	if f.routed() || !f.crdServed() || f.pauseExists() || f.tempExists() || len(f.project) > 0 {
		t.Errorf("the dry run changed something: routed %v, CRD served %v, paused %v, temporary APIService %v, %d stored", f.routed(), f.crdServed(), f.pauseExists(), f.tempExists(), len(f.project))
	}
}

// TestPlanRefusals: an object the project refuses and a version it does not
// serve stop the adoption before anything changes, each named.
func TestPlanRefusals(t *testing.T) {
	for _, dry := range []bool{true, false} {
		f := newFakeCluster(t, crontab("a"), crontab("b"))
		f.refuse["b"] = "spec.schedule: must be a cron expression"
		f.projVers = []string{"v1", "v2"}
		out, err := f.run(Options{DryRun: dry})
		if !errors.Is(err, ErrRefused) {
			t.Errorf("dry run %v: want a refusal, got %v\n%s", dry, err, out)
		}
		wantLines(t, out, "crontabs.stable.example.com default/b: spec.schedule: must be a cron expression")
		if strings.Contains(out, "default/a:") {
			t.Errorf("an accepted object is listed as refused:\n%s", out)
		}
		if dry {
			wantLines(t, out, "dry run: the adoption would be refused")
		}
		if f.routed() || !f.crdServed() || f.pauseExists() || f.tempExists() || len(f.project) > 0 {
			t.Errorf("a refused run changed something:\n%s", out)
		}
	}
	f := newFakeCluster(t, crontab("a"))
	f.projVers = []string{"v2"}
	out, err := f.run(Options{DryRun: true})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("want a refusal, got %v", err)
	}
	wantLines(t, out, "crontabs.stable.example.com: the CRD serves v1, which the project's apiserver does not serve", "dry run: the adoption would be refused")

	f = newFakeCluster(t, crontab("a"))
	f.noResource = true
	out, err = f.run(Options{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(out, "crontabs.stable.example.com: the project's apiserver has no resource crontabs") {
		t.Errorf("a CRD the project has no resource for: %v\n%s", err, out)
	}

	// Objects created in the project's own store (never sealed by an
	// adoption) are not stale copies: the copy must not replace or remove them.
	f = newFakeCluster(t, crontab("a"))
	f.project["default/x"] = crontab("x")
	out, err = f.run(Options{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(out, "the project's store already holds objects that no adoption put there (default/x)") || f.project["default/x"] == nil {
		t.Errorf("an object born in the project: %v, kept %v\n%s", err, f.project["default/x"] != nil, out)
	}
}

// TestPermissionRefusal: every missing permission is named before anything
// changes, the project's adopt verb included.
func TestPermissionRefusal(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	f.denied["update apiextensions.k8s.io customresourcedefinitions"] = true
	f.denied["create admissionregistration.k8s.io validatingadmissionpolicies"] = true
	out, err := f.run(Options{DryRun: true})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("want a refusal, got %v", err)
	}
	wantLines(t, out, "dry run: the adoption would be refused", `missing permission: verb "update" on "customresourcedefinitions" in API group "apiextensions.k8s.io"`,
		`missing permission: verb "create" on "validatingadmissionpolicies" in API group "admissionregistration.k8s.io"`)
	if f.tempExists() {
		t.Error("the temporary APIService was created before the permissions were checked")
	}

	f = newFakeCluster(t, crontab("a"))
	f.denied["update stable.example.com crontabs/status"] = true
	if out, err := f.run(Options{Rollback: true}); !errors.Is(err, ErrRefused) || !strings.Contains(out, `missing permission: verb "update" on "crontabs/status" in API group "stable.example.com"`) {
		t.Errorf("--rollback writes status: want its permission asked for, got %v\n%s", err, out)
	}
	f.denied["list stable.example.com crontabs"] = true
	out, _ = f.run(Options{})
	wantLines(t, out, `missing permission: verb "list" on "crontabs" in API group "stable.example.com"`)

	f = newFakeCluster(t, crontab("a"))
	f.forbidAdopt = true
	out, err = f.run(Options{})
	if !errors.Is(err, ErrRefused) {
		t.Errorf("want a refusal, got %v", err)
	}
	wantLines(t, out, `missing permission: verb "adopt" on "crontabs" in API group "stable.example.com" (the project's apiserver)`)
	if f.tempExists() || f.pauseExists() || f.routed() {
		t.Error("a refused run left something behind")
	}
}

// TestNoObjects: with no object to copy, the pause is checked with the
// project's sample of the kind; without one the run says where it looked.
func TestNoObjects(t *testing.T) {
	f := newFakeCluster(t)
	out, err := f.run(Options{})
	if err == nil || !strings.Contains(err.Error(), "crontabs.stable.example.com has no object and") || !strings.Contains(err.Error(), "has no sample of CronTab stable.example.com/v1") {
		t.Errorf("want the missing sample named, got %v\n%s", err, out)
	}
	if f.pauseExists() || f.routed() {
		t.Error("the failed run left writes paused or routed")
	}
	must(t, os.MkdirAll(filepath.Join(f.dir, "samples"), 0o755))
	sample := "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: crontab-sample\nspec: {}\n"
	must(t, os.WriteFile(filepath.Join(f.dir, "samples", "stable_v1_crontab.yaml"), []byte(sample), 0o644))
	out, err = f.run(Options{})
	if err != nil || !strings.Contains(out, "adopted crontabs.stable.example.com: 0 objects; writes paused for ") {
		t.Errorf("%v\n%s", err, out)
	}
	f.checkAdopted()
}

// TestAnotherAdoption: a temporary APIService at another Service is another
// project's adoption under way: refused, and left as it is.
func TestAnotherAdoption(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	other := &apiregv1.APIService{ObjectMeta: metav1.ObjectMeta{Name: TempAPIService}, Spec: apiregv1.APIServiceSpec{
		Group: adoption.Group, Version: adoption.Version, Service: &apiregv1.ServiceReference{Namespace: "other", Name: "other-apiserver"},
	}}
	_, err := f.agg.ApiregistrationV1().APIServices().Create(context.Background(), other, metav1.CreateOptions{})
	must(t, err)
	out, err := f.run(Options{})
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "another adoption is under way: the APIService v1alpha1.adoption.apiserver-boot.io points at the Service other/other-apiserver") {
		t.Errorf("want a refusal naming the other Service, got %v\n%s", err, out)
	}
	if !f.tempExists() || f.pauseExists() {
		t.Errorf("the other adoption's APIService was removed (%v), or writes paused (%v)", !f.tempExists(), f.pauseExists())
	}
}

// TestLateWriteValidated: an object written on the CRD between the plan
// and the pause is validated by the project before anything is copied; a
// refusal names it and undoes the run (the CRD serves, writes resume).
func TestLateWriteValidated(t *testing.T) {
	f := newFakeCluster(t, crontab("a"), crontab("b"))
	f.kube.PrependReactor("create", "validatingadmissionpolicybindings", func(k8stesting.Action) (bool, runtime.Object, error) {
		b := f.crdObjects()["default/b"]
		b.SetResourceVersion("1999")
		if err := f.dyn.Tracker().Update(crontabs, b, "default"); err != nil {
			t.Error(err)
		}
		f.refuse["b"] = "spec.schedule: must be a cron expression"
		return false, nil, nil
	})
	out, err := f.run(Options{})
	if err == nil || !strings.Contains(err.Error(), "written since the plan") || !strings.Contains(err.Error(), "default/b: spec.schedule: must be a cron expression") {
		t.Errorf("want the late write refused by name, got %v\n%s", err, out)
	}
	if f.routed() || !f.crdServed() || f.pauseExists() || len(f.project) > 0 {
		t.Errorf("after the refusal: routed %v, CRD served %v, paused %v, %d objects in the project's store", f.routed(), f.crdServed(), f.pauseExists(), len(f.project))
	}
}
