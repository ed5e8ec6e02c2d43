package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/freeport"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
)

// Item 8: the edit loop. A field is added to a kind's spec; the time is from
// the write of the types file until `kubectl explain` shows the field: in an
// apiserver-boot project through `run local` (restarted, then --watch), and
// in a kubebuilder-style module through controller-gen and `kubectl apply` of
// the CRD on kube-apiserver.

const (
	editGroup   = "edit.example.com"
	editVersion = "edit.example.com/v1"
	editPlural  = "widgets"
)

// goDuration matches a time.Duration as run local prints it (1.2s, 850ms, 1m3.2s).
const goDuration = `([0-9.]+(?:ms|µs|ns)|(?:[0-9]+h)?(?:[0-9]+m)?[0-9.]+s)`

var reloadedIn = regexp.MustCompile(`Reloaded in ` + goDuration + ` \(generate ` + goDuration + `, build ` + goDuration + `, apiserver ready in ` + goDuration + `\)`)

// addSpecField adds a string field to the spec struct of kind in a types file.
func addSpecField(path, kind, field string) error {
	return editFileErr(path, func(s string) (string, error) {
		i := strings.Index(s, "type "+kind+"Spec struct {")
		if i < 0 {
			return "", fmt.Errorf("%s: no %sSpec struct", path, kind)
		}
		j := strings.Index(s[i:], "\n}\n")
		if j < 0 {
			return "", fmt.Errorf("%s: %sSpec struct not closed", path, kind)
		}
		j += i + 1
		name := strings.ToUpper(field[:1]) + field[1:]
		add := fmt.Sprintf("\t// %s is a field the edit loop added.\n\t// +optional\n\t%s string `json:\"%s,omitempty\"`\n", name, name, field)
		return s[:j] + add + s[j:], nil
	})
}

func editFileErr(path string, edit func(string) (string, error)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s, err := edit(string(b))
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(s), 0o644)
}

// explains runs `kubectl explain <plural>.spec.<field>` with a fresh
// discovery cache and says whether it succeeded.
func (b *bench) explains(kubeconfig, field string) bool {
	cache, err := os.MkdirTemp(b.tmp, "kubectl-cache-")
	if err != nil {
		return false
	}
	defer os.RemoveAll(cache)
	_, err = proc.Command(b.ctx, b.tmp, nil, "kubectl", "--kubeconfig", kubeconfig, "--cache-dir", cache,
		"explain", editPlural+".spec."+field, "--api-version", editVersion)
	return err == nil
}

// pollExplain polls explains until it succeeds and returns when it did.
func (b *bench) pollExplain(kubeconfig, field string, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		if b.explains(kubeconfig, field) {
			return time.Now(), nil
		}
		if err := b.ctx.Err(); err != nil {
			return time.Time{}, err
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("kubectl explain %s.spec.%s: not shown after %s", editPlural, field, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logWatch records when lines containing each marker first appear in a log
// (read every 50 ms), counting only text after offset.
type logWatch struct {
	mu     sync.Mutex
	seen   map[string]time.Time
	text   string
	stopCh chan struct{}
	done   chan struct{}
}

func watchLog(path string, offset int, markers ...string) *logWatch {
	w := &logWatch{seen: map[string]time.Time{}, stopCh: make(chan struct{}), done: make(chan struct{})}
	read := func() {
		b, _ := os.ReadFile(path)
		now := time.Now()
		w.mu.Lock()
		defer w.mu.Unlock()
		if len(b) > offset {
			w.text = string(b[offset:])
			for _, m := range markers {
				if _, ok := w.seen[m]; !ok && strings.Contains(w.text, m) {
					w.seen[m] = now
				}
			}
		}
	}
	go func() {
		defer close(w.done)
		for {
			read()
			select {
			case <-w.stopCh:
				read() // lines written since the last read, at the time of the stop
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

func (w *logWatch) stop() (map[string]time.Time, string) {
	close(w.stopCh)
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.seen, w.text
}

// since is t-t0 as read from a log watched every 50 ms.
func since(t0, t time.Time) string {
	if t0.IsZero() || t.IsZero() {
		return "?"
	}
	if d := t.Sub(t0); d >= 50*time.Millisecond {
		return secs(d)
	}
	return "under 50 ms (the log is read every 50 ms)"
}

// readyToExplain says how explain's success relates to a line of run local.
func readyToExplain(line string, ready, done time.Time) string {
	if ready.After(done) {
		return fmt.Sprintf("explain showed the field %s before the %s (run local polls /readyz every 200 ms)", since(done, ready), line)
	}
	return fmt.Sprintf("%s to explain showing the field %s", line, since(ready, done))
}

func fileSize(path string) int {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return int(fi.Size())
}

// editLoop is item 8.
func (b *bench) editLoop() error {
	// The apiserver-boot project: one kind, the scaffolded spec and status.
	dir := filepath.Join(b.tmp, "editloop")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b.logf("scaffolding the edit-loop project (edit/v1 Widget)")
	for _, args := range [][]string{
		{"init", "repo", "--domain", "example.com", "--module", "example.com/editloop"},
		{"create", "group", "version", "resource", "--group", "edit", "--version", "v1", "--kind", "Widget"},
	} {
		if _, err := proc.Command(b.ctx, dir, nil, b.cli, args...); err != nil {
			return err
		}
	}
	types := filepath.Join(dir, "pkg", "apis", "edit", "v1", "widget_types.go")
	kubeconfig := filepath.Join(dir, "kubeconfig")
	port, err := freeport.Port()
	if err != nil {
		return err
	}
	runArgs := []string{"run", "local", "--secure-port", fmt.Sprint(port), "--controller-manager=false"}
	startRunLocal := func(name string, extra ...string) (*proc.Server, error) {
		return proc.StartServer(dir, b.tmp, name, b.cli, nil, append(append([]string{}, runArgs...), extra...)...)
	}
	waitLog := func(s *proc.Server, marker string, timeout time.Duration) error {
		return waitFor(b.ctx, s, timeout, func() bool {
			out, _ := os.ReadFile(s.Log)
			return strings.Contains(string(out), marker)
		})
	}
	// The first run local builds the project (untimed: it warms the build cache).
	b.logf("first run local of the edit-loop project (builds it; not timed)")
	first := time.Now()
	rl, err := startRunLocal("editloop-first")
	if err != nil {
		return err
	}
	defer func() { rl.Stop(20 * time.Second) }()
	if err := waitLog(rl, "\nReady.", 15*time.Minute); err != nil {
		return err
	}
	firstBuild := time.Since(first)
	if _, err := b.pollExplain(kubeconfig, "replicas", time.Minute); err != nil {
		return err
	}

	// The CRD module, controller-gen and kube-apiserver.
	crd, err := b.crdLoopSetup(dir)
	if err != nil {
		return err
	}
	defer crd.kas.srv.Stop(15 * time.Second)

	n := 0
	nextField := func() string { n++; return fmt.Sprintf("extra%d", n) }
	var restarts, crds1, watches, crds2 []time.Duration
	var restartNotes, crdNotes1, watchNotes, crdNotes2 []string

	// Phase 1: restart of run local, alternating with the CRD loop.
	for i := 0; i < b.runs; i++ {
		field := nextField()
		b.logf("run %d/%d: edit, restart of run local, kubectl explain .spec.%s", i+1, b.runs, field)
		t0 := time.Now()
		if err := addSpecField(types, "Widget", field); err != nil {
			return err
		}
		rl.Stop(20 * time.Second)
		stopped := time.Now()
		next, err := startRunLocal(fmt.Sprintf("editloop-restart-%d", i))
		if err != nil {
			return err
		}
		rl = next
		lw := watchLog(rl.Log, 0, "Building bin/", "Built in", "\nReady.")
		// kubectl polls once run local says it is ready, as the CRD loop
		// polls once kubectl apply returned: polls during the build would
		// take CPU from it.
		err = waitLog(rl, "\nReady.", 10*time.Minute)
		var done time.Time
		if err == nil {
			done, err = b.pollExplain(kubeconfig, field, 2*time.Minute)
		}
		seen, log := lw.stop()
		if err != nil {
			return fmt.Errorf("%w\n%s", err, rl.LogTail())
		}
		d := done.Sub(t0)
		restarts = append(restarts, d)
		detail := fmt.Sprintf("%s (stop %s", secs(d), secs(stopped.Sub(t0)))
		detail += fmt.Sprintf("; generate and CLI start, to the Building line ≈ %s", since(stopped, seen["Building bin/"]))
		if m := builtIn.FindStringSubmatch(log); m != nil {
			detail += ", build " + m[1]
		}
		if m := serverReady.FindStringSubmatch(log); m != nil {
			detail += ", apiserver start to ready " + m[1]
		}
		detail += ", " + readyToExplain("Ready line", seen["\nReady."], done) + ")"
		restartNotes = append(restartNotes, detail)

		d, detail, err = crd.iteration(b, nextField())
		if err != nil {
			return err
		}
		crds1 = append(crds1, d)
		crdNotes1 = append(crdNotes1, detail)
	}

	// Phase 2: run local --watch, alternating with the CRD loop.
	rl.Stop(20 * time.Second)
	b.logf("starting run local --watch (not timed)")
	next, err := startRunLocal("editloop-watch", "--watch")
	if err != nil {
		return err
	}
	rl = next
	if err := waitLog(rl, "Watching pkg/apis", 10*time.Minute); err != nil {
		return err
	}
	for i := 0; i < b.runs; i++ {
		field := nextField()
		b.logf("run %d/%d: edit under run local --watch, kubectl explain .spec.%s", i+1, b.runs, field)
		offset := fileSize(rl.Log)
		lw := watchLog(rl.Log, offset, "Changed:", "Reloaded in", "Reload failed")
		t0 := time.Now()
		if err := addSpecField(types, "Widget", field); err != nil {
			lw.stop()
			return err
		}
		// As in the restarts: kubectl polls once run local says it reloaded.
		err := waitFor(b.ctx, rl, 10*time.Minute, func() bool {
			out, _ := os.ReadFile(rl.Log)
			return len(out) > offset && (strings.Contains(string(out[offset:]), "Reloaded in") || strings.Contains(string(out[offset:]), "Reload failed"))
		})
		if out, _ := os.ReadFile(rl.Log); err == nil && len(out) > offset && strings.Contains(string(out[offset:]), "Reload failed") {
			err = fmt.Errorf("run local --watch: %s", proc.Tail(string(out[offset:]), 20))
		}
		var done time.Time
		if err == nil {
			done, err = b.pollExplain(kubeconfig, field, 2*time.Minute)
		}
		seen, log := lw.stop()
		if err != nil {
			return fmt.Errorf("%w\n%s", err, rl.LogTail())
		}
		d := done.Sub(t0)
		watches = append(watches, d)
		detail := fmt.Sprintf("%s (change seen, after the %s debounce, %s", secs(d), "200 ms", since(t0, seen["Changed:"]))
		if m := reloadedIn.FindStringSubmatch(log); m != nil {
			detail += fmt.Sprintf("; reload %s: generate %s, build %s, apiserver restart to ready %s", m[1], m[2], m[3], m[4])
			var parts [4]time.Duration
			for k := range parts {
				parts[k], _ = time.ParseDuration(m[k+1])
			}
			detail += fmt.Sprintf(", the rest (stopping the old apiserver) %s", secs(parts[0]-parts[1]-parts[2]-parts[3]))
		}
		detail += "; " + readyToExplain("Reloaded line", seen["Reloaded in"], done) + ")"
		watchNotes = append(watchNotes, detail)

		d, detail, err = crd.iteration(b, nextField())
		if err != nil {
			return err
		}
		crds2 = append(crds2, d)
		crdNotes2 = append(crdNotes2, detail)
	}

	const refText = " (controller-gen + kubectl apply, CRD on kube-apiserver)"
	for _, r := range []struct {
		measure string
		ours    []time.Duration
		ref     []time.Duration
	}{
		{"edit to `kubectl explain`, restart of run local", restarts, crds1},
		{"edit to `kubectl explain`, run local --watch", watches, crds2},
	} {
		m, ref := median(r.ours), median(r.ref)
		b.add(row{Item: "8", Measure: r.measure, Value: secs(m), Ref: secs(ref) + refText,
			Ratio: fmt.Sprintf("%.2fx", ratio(m, ref)), Target: "≤1x CRD loop", Met: yesNo(m <= ref)})
	}
	b.note("8", "restart of run local (`--controller-manager=false`, embedded etcd), edit to explain: %s.", strings.Join(restartNotes, "; "))
	b.note("8", "CRD loop alternating with those: %s.", strings.Join(crdNotes1, "; "))
	b.note("8", "run local --watch (`--controller-manager=false`, embedded etcd), edit to explain: %s.", strings.Join(watchNotes, "; "))
	b.note("8", "CRD loop alternating with those: %s.", strings.Join(crdNotes2, "; "))
	b.note("8", "Not timed: the project's first run local, which built it (%s to Ready); controller-gen's build (%s); kube-apiserver's start and the first apply of the CRD.",
		secs(firstBuild), crd.genBuild)
	return nil
}

// crdLoop is the CRD side of item 8: a kubebuilder-style module whose CRD
// controller-gen writes, applied with kubectl to kube-apiserver.
type crdLoop struct {
	dir, types, kubeconfig, controllerGen, crdFile string
	kas                                            *target
	genBuild                                       string
}

const crdGroupVersionInfo = `// Package v1 contains API Schema definitions for the edit v1 API group.
// +kubebuilder:object:generate=true
// +groupName=edit.example.com
package v1

import "k8s.io/apimachinery/pkg/runtime/schema"

// GroupVersion is group version used to register these objects.
var GroupVersion = schema.GroupVersion{Group: "edit.example.com", Version: "v1"}
`

// crdWidgetTypes is the scaffolded Widget of the apiserver-boot project, with
// kubebuilder's markers.
const crdWidgetTypes = `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Replicas is the desired number of instances.
	// +optional
	Replicas int32 ` + "`json:\"replicas,omitempty\"`" + `
}

// WidgetStatus is the observed state of a Widget, written by its controller.
type WidgetStatus struct {
	// Replicas is the observed number of instances.
	// +optional
	Replicas int32 ` + "`json:\"replicas,omitempty\"`" + `
	// ObservedGeneration is the metadata.generation the status describes.
	// +optional
	ObservedGeneration int64 ` + "`json:\"observedGeneration,omitempty\"`" + `
	// Conditions are the latest observations of the object's state.
	// +optional
	Conditions []metav1.Condition ` + "`json:\"conditions,omitempty\"`" + `
}

// Widget is the Schema for the widgets API.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec   WidgetSpec   ` + "`json:\"spec,omitempty\"`" + `
	Status WidgetStatus ` + "`json:\"status,omitempty\"`" + `
}

// WidgetList is a list of Widget objects.
//
// +kubebuilder:object:root=true
type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items           []Widget ` + "`json:\"items\"`" + `
}
`

// crdLoopSetup writes the module (go.mod and go.sum of the apiserver-boot
// project of the item, whose modules are in the module cache), builds
// controller-gen, starts kube-apiserver and applies the CRD once.
func (b *bench) crdLoopSetup(project string) (_ *crdLoop, err error) {
	c := &crdLoop{dir: filepath.Join(b.tmp, "editloop-crd")}
	v1 := filepath.Join(c.dir, "api", "v1")
	if err := os.MkdirAll(v1, 0o755); err != nil {
		return nil, err
	}
	gomod, err := os.ReadFile(filepath.Join(project, "go.mod"))
	if err != nil {
		return nil, err
	}
	gosum, err := os.ReadFile(filepath.Join(project, "go.sum"))
	if err != nil {
		return nil, err
	}
	c.types = filepath.Join(v1, "widget_types.go")
	for path, content := range map[string][]byte{
		filepath.Join(c.dir, "go.mod"):            []byte(strings.Replace(string(gomod), "module example.com/editloop\n", "module example.com/editloopcrd\n", 1)),
		filepath.Join(c.dir, "go.sum"):            gosum,
		filepath.Join(v1, "groupversion_info.go"): []byte(crdGroupVersionInfo),
		c.types: []byte(crdWidgetTypes),
	} {
		if err := os.WriteFile(path, content, 0o644); err != nil {
			return nil, err
		}
	}

	// controller-gen at the version go.mod pins, kept in .cache/bin.
	c.controllerGen = filepath.Join(b.repo, ".cache", "bin", "controller-gen")
	c.genBuild = "already in .cache/bin"
	if _, err := os.Stat(c.controllerGen); err != nil {
		version, err := proc.Command(b.ctx, b.repo, nil, "go", "list", "-m", "-f", "{{.Version}}", "sigs.k8s.io/controller-tools")
		if err != nil {
			return nil, err
		}
		b.logf("installing controller-gen %s into .cache/bin", strings.TrimSpace(version))
		d, _, err := proc.TimedCommand(b.ctx, b.tmp, []string{"GOBIN=" + filepath.Dir(c.controllerGen)}, "go", "install",
			"sigs.k8s.io/controller-tools/cmd/controller-gen@"+strings.TrimSpace(version))
		if err != nil {
			return nil, err
		}
		c.genBuild = secs(d)
	}

	etcdURL, _, err := b.etcd()
	if err != nil {
		return nil, err
	}
	b.logf("starting kube-apiserver for the CRD loop")
	// As clusters run it (the edit loop's CRD is served like any other).
	kas, err := b.kubeAPIServer(b.kas, etcdURL, "/kube-apiserver-editloop", kasCluster)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil { // stopped again unless the loop can run
			kas.srv.Stop(15 * time.Second)
		}
	}()
	c.kas = kas.admin // it applies CRDs
	c.kubeconfig = c.kas.kubeconfig
	c.crdFile = filepath.Join(c.dir, "config", "crd", editGroup+"_"+editPlural+".yaml")
	if _, err := c.generateAndApply(b); err != nil {
		return nil, err
	}
	if _, err := b.pollExplain(c.kubeconfig, "replicas", 2*time.Minute); err != nil {
		return nil, err
	}
	return c, nil
}

// generateAndApply runs controller-gen and kubectl apply, returning how long each took.
func (c *crdLoop) generateAndApply(b *bench) ([2]time.Duration, error) {
	var ds [2]time.Duration
	var err error
	if ds[0], _, err = proc.TimedCommand(b.ctx, c.dir, nil, c.controllerGen, "crd", "paths=./api/...", "output:crd:dir=config/crd"); err != nil {
		return ds, err
	}
	cache, err := os.MkdirTemp(b.tmp, "kubectl-cache-")
	if err != nil {
		return ds, err
	}
	defer os.RemoveAll(cache)
	ds[1], _, err = proc.TimedCommand(b.ctx, c.dir, nil, "kubectl", "--kubeconfig", c.kubeconfig, "--cache-dir", cache, "apply", "-f", c.crdFile)
	return ds, err
}

// iteration adds field to the CRD module's types, and times the edit to
// kubectl explain showing it.
func (c *crdLoop) iteration(b *bench, field string) (time.Duration, string, error) {
	b.logf("  CRD loop: edit, controller-gen, kubectl apply, kubectl explain .spec.%s", field)
	t0 := time.Now()
	if err := addSpecField(c.types, "Widget", field); err != nil {
		return 0, "", err
	}
	ds, err := c.generateAndApply(b)
	if err != nil {
		return 0, "", err
	}
	applied := time.Now()
	done, err := b.pollExplain(c.kubeconfig, field, 5*time.Minute)
	if err != nil {
		return 0, "", err
	}
	d := done.Sub(t0)
	return d, fmt.Sprintf("%s (controller-gen %s, apply %s, apply to explain showing the field %s)", secs(d), secs(ds[0]), secs(ds[1]), secs(done.Sub(applied))), nil
}
