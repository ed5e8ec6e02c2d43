package adopt

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func TestCompare(t *testing.T) {
	// d is a pending deletion, whose grace period is kept with its deletionTimestamp.
	read := []*unstructured.Unstructured{crontab("a"), crontab("b"), crontab("c"), crontab("d")}
	grace := int64(30)
	read[3].SetDeletionGracePeriodSeconds(&grace)
	a, b := crontab("a"), crontab("b")
	a.SetResourceVersion("17") // another store: not compared
	b.SetUID("other")
	b.SetOwnerReferences(nil)
	must(t, unstructured.SetNestedField(b.Object, "0 * * * *", "spec", "schedule"))
	extra := crontab("x")
	problems, warnings := Compare(resource, read, []*unstructured.Unstructured{a, b, crontab("d"), extra})
	got := strings.Join(problems, "\n")
	for _, want := range []string{"default/b: metadata.uid is other, was uid-b", "default/b: metadata.ownerReferences", "default/c: missing",
		"default/d: metadata.deletionGracePeriodSeconds is <nil>, was 30", "default/x: an object that was not moved"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "default/a") || len(problems) != 5 {
		t.Errorf("want 5 problems, none of a:\n%s", got)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "default/b: spec") {
		t.Errorf("spec warnings: %v", warnings)
	}
}

// TestVerifyFailure: a store that does not keep what it was given fails the
// adoption, which routes back to the CRD and resumes writes.
func TestVerifyFailure(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	f.corrupt = true
	out, err := f.run(Options{})
	if err == nil || !strings.Contains(err.Error(), "crontabs.stable.example.com default/a: metadata.finalizers") || !strings.Contains(err.Error(), "the CRDs serve crontabs.stable.example.com, as before") {
		t.Errorf("want a verification failure naming the field, got %v\n%s", err, out)
	}
	if f.routed() || !f.crdServed() || f.pauseExists() || f.tempExists() {
		t.Errorf("after a failed verification: routed %v, CRD served %v, paused %v, temporary APIService %v", f.routed(), f.crdServed(), f.pauseExists(), f.tempExists())
	}
}

func TestDiff(t *testing.T) {
	same, changed, renewed, created := crontab("a"), crontab("b"), crontab("c"), crontab("d")
	crdB, crdC, crdE := crontab("b"), crontab("c"), crontab("e")
	changed.SetFinalizers(nil)
	crdB.SetResourceVersion("99") // the CRD's own resourceVersion: no difference
	crdB.SetFinalizers([]string{"example.com/keep"})
	crdC.SetUID("new-c") // created again by an earlier rollback
	crdSame := crontab("a")
	crdSame.SetResourceVersion("5")
	crdSame.SetManagedFields(nil)
	changes := Diff([]*unstructured.Unstructured{same, changed, renewed, created}, []*unstructured.Unstructured{crdSame, crdB, crdC, crdE})
	var got []string
	for _, c := range changes {
		switch {
		case c.Have == nil:
			got = append(got, "create "+c.key())
		case c.Want == nil:
			got = append(got, "delete "+c.key())
		default:
			got = append(got, "update "+c.key())
		}
	}
	if want := "update default/b,update default/c,create default/d,delete default/e"; strings.Join(got, ",") != want {
		t.Errorf("Diff: %v, want %s", got, want)
	}
}

// TestCopyFailure: an object the store refuses fails the adoption before the
// switch: named, routed back (nothing was switched), writes resumed.
func TestCopyFailure(t *testing.T) {
	f := newFakeCluster(t, crontab("a"), crontab("b"))
	f.storeFails = "b"
	out, err := f.run(Options{})
	if err == nil || !strings.Contains(err.Error(), "crontabs.stable.example.com default/b: etcdserver: request is too large") {
		t.Errorf("want the refused object named, got %v\n%s", err, out)
	}
	if f.routed() || !f.crdServed() || f.pauseExists() || f.tempExists() {
		t.Errorf("after a failed copy: routed %v, CRD served %v, paused %v, temporary APIService %v", f.routed(), f.crdServed(), f.pauseExists(), f.tempExists())
	}
}

// TestPauseNotEnforced: a project's apiserver that does not enforce the
// pause stops the adoption before the copy; writes resume.
func TestPauseNotEnforced(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	f.ignorePause = true
	out, err := f.run(Options{})
	if err == nil || !strings.Contains(err.Error(), "the pause of crontabs.stable.example.com to be enforced: not after 2s (the project's apiserver: a dry-run create was accepted)") {
		t.Errorf("want the pause named, got %v\n%s", err, out)
	}
	if f.routed() || !f.crdServed() || f.pauseExists() || f.tempExists() || len(f.project) > 0 {
		t.Errorf("after the pause failed: routed %v, CRD served %v, paused %v, temporary APIService %v, %d stored", f.routed(), f.crdServed(), f.pauseExists(), f.tempExists(), len(f.project))
	}
}

// TestChangedSince: a changed resourceVersion, a new uid, an object only
// one read holds all count; equal reads count none.
func TestChangedSince(t *testing.T) {
	obj := func(name, uid, rv string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("default")
		u.SetName(name)
		u.SetUID(types.UID(uid))
		u.SetResourceVersion(rv)
		return u
	}
	before := []*unstructured.Unstructured{obj("a", "1", "10"), obj("b", "2", "11"), obj("c", "3", "12")}
	if n := changedSince(before, before); n != 0 {
		t.Errorf("the same read: %d changed, want 0", n)
	}
	after := []*unstructured.Unstructured{obj("a", "1", "13"), obj("b", "9", "11"), obj("d", "4", "14")}
	if n := changedSince(before, after); n != 4 {
		t.Errorf("a updated, b re-created, c deleted, d created: %d changed, want 4", n)
	}
}

// TestApplyServed: served flags and annotations are written onto the CRD as
// read, by version name, and a field the vendored types lack is kept.
func TestApplyServed(t *testing.T) {
	u, err := fromCRD(crd(true))
	must(t, err)
	versions, _, _ := unstructured.NestedSlice(u.Object, "spec", "versions")
	versions[0].(map[string]any)["fieldOfANewerRelease"] = "kept"
	must(t, unstructured.SetNestedSlice(u.Object, versions, "spec", "versions"))
	c, err := toCRD(u)
	must(t, err)
	c.Spec.Versions[0].Served = false
	c.Annotations = map[string]string{servedAnnotation: "v1"}
	must(t, applyServed(u, c))
	versions, _, _ = unstructured.NestedSlice(u.Object, "spec", "versions")
	v := versions[0].(map[string]any)
	if v["served"] != false || v["fieldOfANewerRelease"] != "kept" || u.GetAnnotations()[servedAnnotation] != "v1" {
		t.Errorf("after applyServed: version %v, annotations %v", v, u.GetAnnotations())
	}
}
