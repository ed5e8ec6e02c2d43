package adopt

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// setup is a run against the fake, loaded, to put the cluster in a state.
func (f *fakeCluster) setup() *run {
	cfg, err := LoadConfig(f.dir)
	if err != nil {
		f.t.Fatal(err)
	}
	r := &run{c: f.clients(), cfg: cfg, o: Options{Timeout: 2 * time.Second, Poll: 10 * time.Millisecond, Settle: time.Millisecond}}
	if err := r.load(context.Background()); err != nil {
		f.t.Fatal(err)
	}
	return r
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The states a run can stop in, made with the run's own steps.
var states = map[string]func(*testing.T, *fakeCluster, *run){
	"fresh": func(*testing.T, *fakeCluster, *run) {},
	"paused": func(t *testing.T, f *fakeCluster, r *run) {
		must(t, r.pause(context.Background(), opAdopt, ""))
	},
	"paused, APIService switched": func(t *testing.T, f *fakeCluster, r *run) {
		must(t, r.pause(context.Background(), opAdopt, ""))
		must(t, r.pointAtProject(context.Background(), r.cfg.APIServices[0]))
	},
	"paused, switched": func(t *testing.T, f *fakeCluster, r *run) {
		must(t, r.pause(context.Background(), opAdopt, ""))
		must(t, r.switchAll(context.Background(), false))
	},
	"switched": func(t *testing.T, f *fakeCluster, r *run) {
		must(t, r.switchAll(context.Background(), false))
	},
	"partly switched": func(t *testing.T, f *fakeCluster, r *run) {
		must(t, r.pointAtProject(context.Background(), r.cfg.APIServices[0]))
	},
	"rollback paused": func(t *testing.T, f *fakeCluster, r *run) {
		must(t, r.pause(context.Background(), opRollback, testUser))
	},
	// Stopped between the policy and its binding: no pause yet.
	"policy only": func(t *testing.T, f *fakeCluster, r *run) {
		_, err := f.kube.AdmissionregistrationV1().ValidatingAdmissionPolicies().Create(context.Background(), r.policy(group, opAdopt, ""), metav1.CreateOptions{})
		must(t, err)
	},
	// Stopped while unpausing after a verified switch: users may write
	// through the groups unpaused already.
	"unpausing": func(t *testing.T, f *fakeCluster, r *run) {
		must(t, r.pause(context.Background(), opAdopt, ""))
		must(t, r.switchAll(context.Background(), false))
		must(t, r.markDone(context.Background()))
	},
}

func TestDetect(t *testing.T) {
	for name, want := range map[string]struct {
		pause string
		phase Phase
	}{
		"fresh": {"", Fresh}, "paused": {opAdopt, Fresh}, "paused, APIService switched": {opAdopt, Partial},
		"paused, switched": {opAdopt, Switched}, "switched": {"", Switched}, "partly switched": {"", Partial},
		"rollback paused": {opRollback, Fresh}, "policy only": {"", Fresh}, "unpausing": {opAdopt, Switched},
	} {
		f := newFakeCluster(t, crontab("a"))
		r := f.setup()
		states[name](t, f, r)
		pause, phase, _, err := f.setup().detect(context.Background())
		if err != nil || pause != want.pause || phase != want.phase {
			t.Errorf("%s: detected pause %q, %s (%v); want %q, %s", name, pause, phase, err, want.pause, want.phase)
		}
	}
}

// TestResume: a rerun after a stop in each state finishes the adoption
// (the project's store then holds exactly the CRD's objects), reports
// nothing to do, or refuses what it cannot finish safely.
func TestResume(t *testing.T) {
	for name, want := range map[string]string{
		"paused":                      "adopted crontabs.stable.example.com: 2 objects",
		"paused, APIService switched": "adopted crontabs.stable.example.com: 2 objects",
		"paused, switched":            "adopted crontabs.stable.example.com: 2 objects",
		"switched":                    "nothing to do: ",
		"partly switched":             "refused: crontabs.stable.example.com are partly switched and no adoption pause holds their writes",
		"rollback paused":             "a rollback of crontabs.stable.example.com is under way",
		"policy only":                 "adopted crontabs.stable.example.com: 2 objects",
		"unpausing":                   "finished the unpause of an earlier adopt run: writes to crontabs.stable.example.com resumed\nnothing to do: ",
	} {
		f := newFakeCluster(t, crontab("a"), crontab("b"))
		states[name](t, f, f.setup())
		// A copy that stopped part-way (it had sealed first): one object,
		// and a stale one.
		f.project["default/a"], f.project["default/z"] = crontab("a"), crontab("z")
		f.floor = "1"
		out, err := f.run(Options{})
		if err != nil {
			out += err.Error()
		}
		if !strings.Contains(out, want) {
			t.Errorf("%s: want %q in:\n%s", name, want, out)
		}
		if strings.HasPrefix(want, "adopted") {
			f.checkAdopted("default/a", "default/b")
		}
		if name == "unpausing" && (f.pauseExists() || f.project["default/z"] == nil || !f.routed()) {
			t.Errorf("finishing an unpause: paused %v, routed %v; the store was copied again: %v", f.pauseExists(), f.routed(), f.project["default/z"] == nil)
		}
	}
}

// TestRollback: the changes made on the project's apiserver since the
// switch (an update with status, a deletion, a creation) are written to the
// CRD, which serves again; adopting again then works.
func TestRollback(t *testing.T) {
	f := newFakeCluster(t, crontab("a"), crontab("b"))
	if out, err := f.run(Options{}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	a := f.project["default/a"]
	a.SetLabels(map[string]string{"app": "changed"})
	must(t, unstructured.SetNestedField(a.Object, int64(7), "status", "active"))
	delete(f.project, "default/b")
	f.project["default/c"] = crontab("c")

	out, err := f.run(Options{Rollback: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "new uid: crontabs.stable.example.com default/c (was uid-c, now new-c)",
		"rolled back crontabs.stable.example.com: 2 objects (1 created, 1 updated, 1 deleted); writes paused for ")
	crd := f.crdObjects()
	if len(crd) != 2 || crd["default/b"] != nil || crd["default/c"] == nil {
		t.Errorf("the CRD holds %v: want a and c", sortedKeys(crd))
	}
	if a := crd["default/a"]; a == nil || a.GetLabels()["app"] != "changed" || a.GetUID() != "uid-a" {
		t.Errorf("a on the CRD: %v", a)
	} else if n, _, _ := unstructured.NestedInt64(a.Object, "status", "active"); n != 7 {
		t.Errorf("a's status on the CRD: active %d, want 7", n)
	}
	if f.routed() || !f.crdServed() || f.pauseExists() || f.tempExists() {
		t.Errorf("after the rollback: routed %v, CRD served %v, paused %v, temporary APIService %v", f.routed(), f.crdServed(), f.pauseExists(), f.tempExists())
	}
	if out, err := f.run(Options{Rollback: true}); err != nil || !strings.Contains(out, "nothing to do: ") {
		t.Errorf("a second rollback: %v\n%s", err, out)
	}
	// Adopting again replaces the project's copies (c has a new uid now).
	f.sealed = false
	if out, err := f.run(Options{}); err != nil {
		t.Fatalf("adopting again: %v\n%s", err, out)
	}
	f.checkAdopted("default/a", "default/c")
}

// TestRollbackResume: a rollback that stopped after switching back (its
// exemption in place) is finished by a rerun; an adoption that stopped is
// abandoned by --rollback without writing to the CRD.
func TestRollbackResume(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	if out, err := f.run(Options{}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f.project["default/c"] = crontab("c")
	r := f.setup()
	must(t, r.pause(context.Background(), opRollback, testUser))
	must(t, r.switchAll(context.Background(), true))
	out, err := f.run(Options{Rollback: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	wantLines(t, out, "resuming: ", "new uid: crontabs.stable.example.com default/c", "rolled back ")
	if len(f.crdObjects()) != 2 || f.routed() || f.pauseExists() {
		t.Errorf("the CRD holds %v, routed %v, paused %v", sortedKeys(f.crdObjects()), f.routed(), f.pauseExists())
	}

	f = newFakeCluster(t, crontab("a"))
	states["paused, switched"](t, f, f.setup())
	out, err = f.run(Options{Rollback: true})
	if err != nil || !strings.Contains(out, "the adoption had not finished") {
		t.Errorf("abandoning an adoption: %v\n%s", err, out)
	}
	if f.routed() || !f.crdServed() || f.pauseExists() || len(f.writes) > 0 {
		t.Errorf("after abandoning: routed %v, CRD served %v, paused %v, writes to the CRD %v", f.routed(), f.crdServed(), f.pauseExists(), f.writes)
	}
	if _, err := f.run(Options{DryRun: true, Rollback: true}); err == nil {
		t.Error("--dry-run --rollback was accepted")
	}
	_ = errors.New
}

// TestNarrow: a run acts on the groups not yet where it takes them (a group
// adopted earlier is left as it is), or, under a pause, on the groups it holds.
func TestNarrow(t *testing.T) {
	newRun := func(phases map[string]Phase, paused ...string) (*run, *strings.Builder) {
		out := &strings.Builder{}
		r := &run{o: Options{Out: out}, groups: []string{"a.example.com", "b.example.com"}, phases: phases, pausedGroups: paused,
			targets: []*target{{group: "a.example.com", plural: "xs"}, {group: "b.example.com", plural: "ys"}}}
		return r, out
	}
	r, out := newRun(map[string]Phase{"a.example.com": Switched, "b.example.com": Fresh})
	if phase := r.narrow("", Switched); phase != Fresh || len(r.groups) != 1 || r.names() != "ys.b.example.com" {
		t.Errorf("adopting beside an adopted group: %s, groups %v", phase, r.groups)
	}
	if want := "left as they are: xs.a.example.com (served by the project's apiserver)"; !strings.Contains(out.String(), want) {
		t.Errorf("want %q, got %q", want, out)
	}
	r, _ = newRun(map[string]Phase{"a.example.com": Switched, "b.example.com": Fresh})
	if phase := r.narrow("", Fresh); phase != Switched || r.names() != "xs.a.example.com" {
		t.Errorf("rolling back beside a group never adopted: %s, %s", phase, r.names())
	}
	r, _ = newRun(map[string]Phase{"a.example.com": Partial, "b.example.com": Switched})
	if phase := r.narrow("", Switched); phase != Partial {
		t.Errorf("a partly switched group without a pause: %s, want Partial", phase)
	}
	r, _ = newRun(map[string]Phase{"a.example.com": Switched, "b.example.com": Fresh}, "b.example.com")
	if phase := r.narrow(opAdopt, Switched); phase != Fresh || r.names() != "ys.b.example.com" {
		t.Errorf("under a pause of b: %s, %s", phase, r.names())
	}
	// A run stopped before it paused a: a is said to be as it is (the CRD
	// serves it), not adopted.
	r, out = newRun(map[string]Phase{"a.example.com": Fresh, "b.example.com": Fresh}, "b.example.com")
	r.narrow(opAdopt, Switched)
	if want := "left as they are: xs.a.example.com (served by the CRDs, not held by the pause under way: run adopt again afterwards)"; !strings.Contains(out.String(), want) {
		t.Errorf("want %q, got %q", want, out)
	}
	r, _ = newRun(map[string]Phase{"a.example.com": Switched, "b.example.com": Switched})
	if phase := r.narrow("", Switched); phase != Switched || len(r.groups) != 2 {
		t.Errorf("everything adopted: %s, %v", phase, r.groups)
	}
}

// TestRollbackNotPaused: when the project's apiserver does not enforce the
// pause, --rollback writes nothing, ends its pause and leaves the resources
// adopted.
func TestRollbackNotPaused(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	if out, err := f.run(Options{}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	f.ignorePause = true
	out, err := f.run(Options{Rollback: true})
	if err == nil || !strings.Contains(err.Error(), "the pause of crontabs.stable.example.com to be enforced") || !strings.Contains(err.Error(), "serves crontabs.stable.example.com, as before the rollback") {
		t.Errorf("want the pause named, got %v\n%s", err, out)
	}
	if !f.routed() || f.crdServed() || f.pauseExists() || f.tempExists() || len(f.writes) > 0 {
		t.Errorf("after a failed rollback: routed %v, CRD served %v, paused %v, temporary APIService %v, CRD writes %v", f.routed(), f.crdServed(), f.pauseExists(), f.tempExists(), f.writes)
	}
}

// TestRollbackRemovesCreatedAPIServices: the APIService of a version the
// project serves and the CRD did not is created by adopt (marked so) and
// deleted by --rollback, which leaves the group as it was.
func TestRollbackRemovesCreatedAPIServices(t *testing.T) {
	f := newFakeCluster(t, crontab("a"))
	f.projVers = []string{"v1", "v2"}
	v2 := "---\napiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v2.stable.example.com}\n" +
		"spec: {group: stable.example.com, version: v2, service: {namespace: crontab-system, name: crontab-apiserver, port: 443}, caBundle: Y2E=, groupPriorityMinimum: 2000, versionPriority: 200}\n"
	path := filepath.Join(f.dir, "apiservice.yaml")
	b, err := os.ReadFile(path)
	must(t, err)
	must(t, os.WriteFile(path, append(b, v2...), 0o644))
	if out, err := f.run(Options{}); err != nil {
		t.Fatalf("adopt: %v\n%s", err, out)
	}
	apis := f.agg.ApiregistrationV1().APIServices()
	if as, err := apis.Get(context.Background(), "v2.stable.example.com", metav1.GetOptions{}); err != nil || as.Annotations[createdAnnotation] != "true" {
		t.Fatalf("after adopt, v2.stable.example.com: %v %v, want created and marked", err, as)
	}
	if out, err := f.run(Options{Rollback: true}); err != nil {
		t.Fatalf("rollback: %v\n%s", err, out)
	}
	if _, err := apis.Get(context.Background(), "v2.stable.example.com", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after the rollback, v2.stable.example.com: %v, want deleted", err)
	}
}
