//go:build e2e

// Package e2e drives apiserver-boot the way a user does: the built CLI
// scaffolds a project in a temporary folder, `run local` builds and starts
// it, and the real kubectl talks to it, on an embedded and on an external
// etcd. Run with `make test-e2e` (go test -tags e2e ./test/e2e).
package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apiserver-boot/apiserver-boot/test/fixtures"
	"github.com/apiserver-boot/apiserver-boot/test/harness"
)

var (
	repoRoot string // the apiserver-boot checkout
	cli      string // the apiserver-boot binary under test
	etcdBin  string // etcd built from go.etcd.io/etcd/server/v3
	proj     string // the project every test runs
	timings  []string
	// kube-apiserver and kube-controller-manager from the test tool module
	// (test/tools), for the aggregation test.
	kubeAPIServerBin, kubeControllerManagerBin string
)

func TestMain(m *testing.M) {
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e setup:", err)
		os.Exit(1)
	}
	fmt.Println("Timings:\n  " + strings.Join(timings, "\n  "))
	os.Exit(code)
}

func timed(what string, f func() error) error {
	start := time.Now()
	err := f()
	timings = append(timings, fmt.Sprintf("%-28s %s", what, time.Since(start).Round(time.Millisecond)))
	return err
}

func setup(m *testing.M) (int, error) {
	wd, _ := os.Getwd()
	repoRoot = filepath.Clean(filepath.Join(wd, "..", ".."))
	tmp, err := os.MkdirTemp("", "apiserver-boot-e2e-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(tmp)

	cli = filepath.Join(tmp, "apiserver-boot")
	if _, err := harness.Sh(repoRoot, "go", "build", "-o", cli, "./cmd/apiserver-boot"); err != nil {
		return 0, err
	}
	// etcd at the version k8s.io/apiserver requires, built from the module
	// proxy and kept in the ignored .cache/ between runs.
	etcdBin = filepath.Join(repoRoot, ".cache", "bin", "etcd")
	if _, err := os.Stat(etcdBin); err != nil {
		if err := timed("build etcd", func() error {
			_, err := harness.Sh(repoRoot, "go", "build", "-o", etcdBin, "go.etcd.io/etcd/server/v3")
			return err
		}); err != nil {
			return 0, err
		}
	}

	// kube-apiserver and kube-controller-manager, built by `make test-tools`
	// into .cache/bin; the script skips the build when they are up to date.
	kubeAPIServerBin = filepath.Join(repoRoot, ".cache", "bin", "kube-apiserver")
	kubeControllerManagerBin = filepath.Join(repoRoot, ".cache", "bin", "kube-controller-manager")
	if err := timed("build test tools", func() error {
		out, err := harness.Sh(repoRoot, "bash", "hack/test-tools.sh")
		fmt.Print(out)
		return err
	}); err != nil {
		return 0, err
	}

	proj = filepath.Join(tmp, "crontab")
	os.MkdirAll(proj, 0o755)
	steps := []struct {
		name string
		cmd  []string
	}{
		{"go mod init", []string{"go", "mod", "init", "example.com/crontab"}},
		{"init repo", []string{cli, "init", "repo", "--domain", "example.com"}},
		{"create CronTab", []string{cli, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "CronTab",
			"--short-names", "ct,cron", "--categories", "all,batch", "--with-scale-subresource"}},
		{"create subresource restart", []string{cli, "create", "subresource", "--subresource", "restart", "--group", "stable", "--version", "v1", "--kind", "CronTab"}},
		{"create Ox (--resource, --singular)", []string{cli, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Ox",
			"--resource", "oxen", "--singular", "ox", "--controller=false"}},
		{"create controller (apps/v1 Deployment)", []string{cli, "create", "controller", "--group", "apps", "--version", "v1", "--kind", "Deployment"}},
		{"create Backup (group ops)", []string{cli, "create", "group", "version", "resource", "--group", "ops", "--version", "v1", "--kind", "Backup", "--controller=false"}},
		{"create Calendar (cluster)", []string{cli, "create", "group", "version", "resource", "--group", "stable", "--version", "v1", "--kind", "Calendar", "--non-namespaced", "--controller=false"}},
		// Groups a CRD can have beside <group>.<domain> (TestAnyGroupAndKindInAnyFile).
		{"create group widgets.sh (outside the domain)", []string{cli, "create", "group", "version", "--group", "widgets.sh", "--version", "v1"}},
		{"create Gizmo (group example.com, the domain itself)", []string{cli, "create", "group", "version", "resource", "--group", "example.com", "--version", "v1", "--kind", "Gizmo", "--controller=false"}},
		{"create Issuer (group cert-manager.io, a dash in its first label)", []string{cli, "create", "group", "version", "resource", "--group", "cert-manager.io", "--version", "v1", "--kind", "Issuer", "--controller=false"}},
	}
	for _, s := range steps {
		if err := timed(s.name, func() error { _, err := harness.Sh(proj, s.cmd[0], s.cmd[1:]...); return err }); err != nil {
			return 0, err
		}
	}
	if err := os.WriteFile(filepath.Join(proj, "pkg", "apis", "stable", "v1", "crontab_hooks.go"), []byte(hooks), 0o644); err != nil {
		return 0, err
	}
	if err := editTypes(); err != nil {
		return 0, err
	}
	// A kind declared in a file not named *_types.go.
	if err := os.WriteFile(filepath.Join(proj, "pkg", "apis", "widgets", "v1", "widget.go"), []byte(fixtures.WidgetGo), 0o644); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(proj, "pkg", "apis", "stable", "v1", "protobuf_client_test.go"), []byte(protobufClientTest), 0o644); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(proj, "pkg", "controller", "crontab", "controller.go"), []byte(statusController), 0o644); err != nil {
		return 0, err
	}
	if err := timed("generate (with hooks)", func() error { _, err := harness.Sh(proj, cli, "generate"); return err }); err != nil {
		return 0, err
	}
	if err := timed("create version v2 --from v1", func() error {
		_, err := harness.Sh(proj, cli, "create", "version", "--group", "stable", "--version", "v2", "--kind", "CronTab", "--from", "v1")
		return err
	}); err != nil {
		return 0, err
	}
	// v2 renames spec.cronSpec to spec.schedule: generate writes conversion
	// stubs naming the field, which the user fills in.
	if err := timed("rename a v2 field, generate stubs", renameInV2); err != nil {
		return 0, err
	}
	// A custom subresource created, for one version, after the kind has two:
	// it belongs to the kind, and is served in both (TestResourceSemantics).
	if err := timed("create subresource suspend (v1)", func() error {
		out, err := harness.Sh(proj, cli, "create", "subresource", "--subresource", "suspend", "--group", "stable", "--version", "v1", "--kind", "CronTab")
		if err == nil && unexpectedWarnings(out) != "" {
			return fmt.Errorf("create subresource suspend warns:\n%s", out)
		}
		// The declarative fields that cannot carry their zero value (an
		// omitempty string with MinLength, with Enum) are warned about.
		for _, want := range []string{"spec.cronSpec (field CronTabSpec.CronSpec, string with omitempty) cannot carry", "spec.image (field CronTabSpec.Image, string with omitempty) cannot carry"} {
			if err == nil && !strings.Contains(out, want) {
				return fmt.Errorf("create subresource suspend: no warning %q:\n%s", want, out)
			}
		}
		return err
	}); err != nil {
		return 0, err
	}
	if err := timed("first build", func() error {
		_, err := harness.Sh(proj, "go", "build", "-o", "bin/", "./cmd/apiserver", "./cmd/controller-manager")
		return err
	}); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// editTypes adds fields with markers, printer columns and a selectable field
// to the scaffolded CronTab, and a field to Backup, as a user would.
func editTypes() error {
	path := filepath.Join(proj, "pkg", "apis", "stable", "v1", "crontab_types.go")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	src := string(b)
	for old, new := range map[string]string{
		"// +subresource:status\n": "// +subresource:status\n" +
			"// +printcolumn:name=Schedule,type=string,JSONPath=.spec.cronSpec\n" +
			"// +printcolumn:name=Replicas,type=integer,JSONPath=.spec.replicas\n" +
			"// +printcolumn:name=Image,type=string,JSONPath=.spec.image,priority=1\n" +
			"// +selectablefield:JSONPath=.spec.image\n",
		"\t// +optional\n\tReplicas int32 `json:\"replicas,omitempty\"`\n}": "\t// +optional\n\t// +kubebuilder:validation:Maximum=10\n\tReplicas int32 `json:\"replicas,omitempty\"`\n" +
			"\t// CronSpec is the schedule, in cron format.\n\t// +kubebuilder:validation:MinLength=9\n\t// +kubebuilder:default=\"* * * * *\"\n\tCronSpec string `json:\"cronSpec,omitempty\"`\n" +
			"\t// Image is the container image to run.\n\t// +kubebuilder:validation:Enum=busybox;nginx\n\tImage string `json:\"image,omitempty\"`\n" +
			// Shapes the generated protobuf and validation code must handle.
			"\t// Limits by name.\n\tLimits map[string]int32 `json:\"limits,omitempty\"`\n" +
			"\t// Steps by name.\n\tSteps map[string]*Step `json:\"steps,omitempty\"`\n" +
			"\t// Tags of the job.\n\t// +kubebuilder:validation:MaxItems=5\n\tTags Tags `json:\"tags,omitempty\"`\n}\n\n" +
			"// Tags are free-form tags.\ntype Tags []string\n\n" +
			"// Step is one step of the job.\ntype Step struct {\n\t// Command to run.\n\t// +kubebuilder:validation:MinLength=1\n\tCommand string `json:\"command\"`\n}",
	} {
		if !strings.Contains(src, old) {
			return fmt.Errorf("scaffolded types changed: %q not found", old)
		}
		src = strings.Replace(src, old, new, 1)
	}
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		return err
	}
	// Backup gets a free-text field, which TestStorageVersionChange limits
	// in v2 with a +k8s: tag.
	path = filepath.Join(proj, "pkg", "apis", "ops", "v1", "backup_types.go")
	if b, err = os.ReadFile(path); err != nil {
		return err
	}
	const replicas = "\t// +optional\n\tReplicas int32 `json:\"replicas,omitempty\"`\n}"
	if !strings.Contains(string(b), replicas) {
		return fmt.Errorf("scaffolded Backup types changed: %q not found", replicas)
	}
	return os.WriteFile(path, []byte(strings.Replace(string(b), replicas, "\t// +optional\n\tReplicas int32 `json:\"replicas,omitempty\"`\n"+
		"\t// Note is free text.\n\t// +optional\n\tNote string `json:\"note,omitempty\"`\n}", 1)), 0o644)
}

// v2Conversion is the stub file generate writes for the renamed field, kept
// so TestRoundTripNamesUnconvertedFields can put it back.
var v2Conversion string

// renameInV2 renames CronSpec to Schedule in v2, as a user would, checks that
// generate names the field in the stubs it writes, and fills them in.
func renameInV2() error {
	v2 := filepath.Join(proj, "pkg", "apis", "stable", "v2")
	types := filepath.Join(v2, "crontab_types.go")
	b, err := os.ReadFile(types)
	if err != nil {
		return err
	}
	src := string(b)
	for old, new := range map[string]string{
		"// CronSpec is the schedule, in cron format.\n": "// Schedule is when to run, in cron format.\n",
		"CronSpec string `json:\"cronSpec,omitempty\"`":  "Schedule string `json:\"schedule,omitempty\"`",
		"JSONPath=.spec.cronSpec":                        "JSONPath=.spec.schedule",
	} {
		if !strings.Contains(src, old) {
			return fmt.Errorf("v2 types: %q not found", old)
		}
		src = strings.Replace(src, old, new, 1)
	}
	if err := os.WriteFile(types, []byte(src), 0o644); err != nil {
		return err
	}
	// generate writes the stubs and fails until they are filled in.
	out, err := harness.Sh(proj, cli, "generate")
	if err == nil {
		return fmt.Errorf("generate passed with the renamed field unconverted:\n%s", out)
	}
	for _, want := range []string{
		`wrote Convert_v2_CronTabSpec_To_stable_CronTabSpec for you to fill in: Schedule (json "schedule"): no field of that name in stable.CronTabSpec`,
		`wrote Convert_stable_CronTabSpec_To_v2_CronTabSpec for you to fill in: CronSpec (json "cronSpec"): no field of that name in v2.CronTabSpec`,
		`stable.example.com/v2 CronTab: spec.schedule (field Schedule string of v2.CronTabSpec) is not in the internal type stable.CronTabSpec`,
	} {
		if !strings.Contains(out, want) {
			return fmt.Errorf("generate should name the renamed field: %q missing from\n%s", want, out)
		}
	}
	conv := filepath.Join(v2, "crontab_conversion.go")
	b, err = os.ReadFile(conv)
	if err != nil {
		return err
	}
	v2Conversion = string(b)
	filled := v2Conversion
	for stub, code := range map[string]string{
		`return builders.UnconvertedFields("Convert_v2_CronTabSpec_To_stable_CronTabSpec", "Schedule")`: "out.CronSpec = in.Schedule\n\treturn nil",
		`return builders.UnconvertedFields("Convert_stable_CronTabSpec_To_v2_CronTabSpec", "CronSpec")`: "out.Schedule = in.CronSpec\n\treturn nil",
		"\t\"github.com/apiserver-boot/apiserver-boot/pkg/builders\"\n":                                 "",
	} {
		if !strings.Contains(filled, stub) {
			return fmt.Errorf("conversion stubs: %q not found in\n%s", stub, filled)
		}
		filled = strings.Replace(filled, stub, code, 1)
	}
	if err := os.WriteFile(conv, []byte(filled), 0o644); err != nil {
		return err
	}
	if out, err := harness.Sh(proj, cli, "generate"); err != nil || strings.Contains(out, "stub") {
		return fmt.Errorf("generate after filling the stubs: %v\n%s", err, out)
	}
	return nil
}

// statusController replaces the scaffolded Reconcile with one that writes
// status.replicas = spec.replicas through the generated clientset, only when
// the status is behind: level based, so a restart repeats no write.
const statusController = `package crontab

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"

	v1 "example.com/crontab/pkg/apis/stable/v1"
	"example.com/crontab/pkg/client/clientset/versioned"
	"example.com/crontab/pkg/controller/sharedinformers"
)

type CronTabControllerImpl struct {
	client versioned.Interface
}

func (c *CronTabControllerImpl) Init(config *rest.Config, si *sharedinformers.SharedInformers, queue workqueue.TypedRateLimitingInterface[string]) {
	c.client = versioned.NewForConfigOrDie(config)
}

func (c *CronTabControllerImpl) Reconcile(u *v1.CronTab) error {
	klog.InfoS("Reconciling CronTab", "namespace", u.Namespace, "name", u.Name, "generation", u.Generation)
	if u.Status.ObservedGeneration == u.Generation && u.Status.Replicas == u.Spec.Replicas {
		return nil
	}
	u = u.DeepCopy()
	u.Status.Replicas = u.Spec.Replicas
	u.Status.ObservedGeneration = u.Generation
	_, err := c.client.StableV1().CronTabs(u.Namespace).UpdateStatus(context.TODO(), u, metav1.UpdateOptions{})
	if err == nil {
		klog.InfoS("Wrote CronTab status", "name", u.Name, "replicas", u.Status.Replicas)
	}
	return err
}
`

// protobufClientTest is a test of the project, run against the running
// server by TestResourceSemantics: client-go speaking protobuf.
const protobufClientTest = `//go:build e2eclient

package v1_test

import (
	"context"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	v1 "example.com/crontab/pkg/apis/stable/v1"
)

func TestProtobufClient(t *testing.T) {
	cfg, err := clientcmd.BuildConfigFromFlags("", os.Getenv("E2E_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	if err := v1.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	cfg.GroupVersion = &v1.SchemeGroupVersion
	cfg.APIPath = "/apis"
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf
	cfg.NegotiatedSerializer = serializer.NewCodecFactory(scheme).WithoutConversion()
	client, err := rest.RESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	w, err := client.Get().Namespace("default").Resource("crontabs").
		VersionedParams(&metav1.ListOptions{Watch: true, FieldSelector: "metadata.name=proto"}, metav1.ParameterCodec).Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	in := &v1.CronTab{ObjectMeta: metav1.ObjectMeta{Name: "proto", Labels: map[string]string{"via": "protobuf"}}, Spec: v1.CronTabSpec{Replicas: 3, Image: "nginx"}}
	created := &v1.CronTab{}
	if err := client.Post().Namespace("default").Resource("crontabs").Body(in).Do(ctx).Into(created); err != nil {
		t.Fatal(err)
	}
	if created.Spec.Replicas != 3 || created.Spec.CronSpec != "* * * * *" || created.Generation != 1 || created.Labels["via"] != "protobuf" {
		t.Errorf("created over protobuf: %+v", created)
	}
	list := &v1.CronTabList{}
	if err := client.Get().Namespace("default").Resource("crontabs").Do(ctx).Into(list); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, item := range list.Items {
		found = found || item.Name == "proto"
	}
	if !found {
		t.Errorf("list over protobuf lacks proto: %d items", len(list.Items))
	}
	select {
	case e := <-w.ResultChan():
		if ct, ok := e.Object.(*v1.CronTab); !ok || e.Type != "ADDED" || ct.Name != "proto" {
			t.Errorf("watch over protobuf: %s %#v", e.Type, e.Object)
		}
	case <-ctx.Done():
		t.Fatal("no watch event over protobuf")
	}
	if err := client.Delete().Namespace("default").Resource("crontabs").Name("proto").Do(ctx).Error(); err != nil {
		t.Fatal(err)
	}
}
`

// hooks overrides DefaultingFunction, Validate and ValidateUpdate, as a user would.
const hooks = `package v1

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"example.com/crontab/pkg/apis/stable"
)

func (CronTabSchemeFns) DefaultingFunction(o interface{}) {
	obj := o.(*CronTab)
	if obj.Spec.Replicas == 0 {
		obj.Spec.Replicas = 1
	}
}

func (*CronTabStrategy) Validate(ctx context.Context, obj *stable.CronTab) field.ErrorList {
	switch {
	case obj.Spec.Replicas < 0:
		return field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), obj.Spec.Replicas, "must be greater than or equal to 0")}
	case obj.Spec.Replicas == 7:
		return field.ErrorList{field.Invalid(field.NewPath("spec", "replicas"), obj.Spec.Replicas, "must not be 7")}
	}
	return nil
}

// ConvertToTable replaces the printer columns of calendars entirely.
func (*CalendarStrategy) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "Name of the calendar"},
		{Name: "Holiday", Type: "string", Description: "Whether it is a holiday"},
	}}
	add := func(c *stable.Calendar) {
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []interface{}{c.Name, "yes"}, Object: runtime.RawExtension{Object: c}})
	}
	switch o := obj.(type) {
	case *stable.Calendar:
		add(o)
	case *stable.CalendarList:
		table.ListMeta = o.ListMeta
		for i := range o.Items {
			add(&o.Items[i])
		}
	}
	return table, nil
}

func (s *CronTabStrategy) ValidateUpdate(ctx context.Context, obj, old *stable.CronTab) field.ErrorList {
	return s.Validate(ctx, obj)
}
`

// unexpectedWarnings are generate's warnings in out other than those about
// fields that cannot carry their zero value, which the shared project's
// declarative fields are meant to have.
func unexpectedWarnings(out string) string {
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "warning:") && !strings.Contains(l, " cannot carry ") {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
