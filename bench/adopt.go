package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
)

// Item 11: how long `apiserver-boot adopt` pauses the writes of a live CRD
// while it moves its objects into the generated apiserver.

// adoptNamespace holds the Widgets item 11 moves.
const adoptNamespace = "bench-adopt"

// adoption runs item 11 for 1,000 and 10,000 Widgets, each on a fresh
// kube-apiserver (cluster settings, its own etcd prefix) serving a Widget CRD
// of the generated apiserver's own group, and the generated apiserver in
// delegated mode on another prefix (its own store, as build config deploys
// it), registered only by its Service: the CRD serves the group until adopt
// switches it.
func (b *bench) adoption() error {
	p, err := b.servingProject()
	if err != nil {
		return err
	}
	etcdURL, _, err := b.etcd()
	if err != nil {
		return err
	}
	for _, n := range []int{1000, 10000} {
		if err := b.adoptOnce(p, etcdURL, n); err != nil {
			return fmt.Errorf("%s Widgets: %w", thousands(n), err)
		}
	}
	b.note("11", "each size on a fresh kube-apiserver (cluster settings: RBAC, default admission, priority and fairness, aggregation) and a fresh store of the generated apiserver (delegated mode, the same etcd under another prefix); the Widgets are created through the CRD with 16 workers before the run; `apiserver-boot adopt --kubeconfig <admin> --config <dir>` runs in item 4's project, the pause is what it prints (from the creation of the binding that refuses writes to its deletion: the wait until both servers refuse them, the copy, the switch of the APIService and the CRD, and the check of every object through kube-apiserver). The reference is a LIST of the same objects from the CRD through kube-apiserver, measured just before: the least any move must read")
	return nil
}

// adoptOnce measures one adoption of n Widgets.
func (b *bench) adoptOnce(p *servingProject, etcdURL string, n int) error {
	name := fmt.Sprintf("adopt-%d", n)
	b.logf("item 11: %s Widgets in a CRD, then apiserver-boot adopt", thousands(n))
	k, err := b.kubeAPIServer(b.kas, etcdURL, "/"+name, kasCluster)
	if err != nil {
		return err
	}
	defer k.srv.Stop(15 * time.Second)
	crd, err := newTarget("Widget CRD of bench.example.com", k.srv, k.admin.cfg, widgets, k.dir)
	if err != nil {
		return err
	}
	if err := crd.installCRD(b.ctx, []string{adoptNamespace}); err != nil {
		return err
	}
	if _, err := crd.creates(b.ctx, adoptNamespace, 0, n, 16); err != nil {
		return err
	}
	const ns, svc = "bench-system", "widget-apiserver"
	dir := filepath.Join(b.tmp, name)
	s, port, err := b.startDelegated(p, etcdURL, "/"+name+"-apiserver", k, dir, svc+"."+ns+".svc")
	if err != nil {
		return err
	}
	defer s.Stop(15 * time.Second)
	config, kubeconfig, err := b.adoptConfig(k, dir, ns, svc, port)
	if err != nil {
		return err
	}
	list, _, _, err := crd.list(b.ctx, adoptNamespace, "application/json", "")
	if err != nil {
		return err
	}
	start := time.Now()
	out, err := proc.Command(b.ctx, p.dir, nil, b.cli, "adopt", "--kubeconfig", kubeconfig, "--config", config)
	total := time.Since(start)
	if err != nil {
		return fmt.Errorf("apiserver-boot adopt: %w\n%s", err, out)
	}
	pause, err := pauseOf(out)
	if err != nil {
		return err
	}
	b.add(row{Item: "11", Measure: fmt.Sprintf("adopt: writes paused while %s Widgets move (CRD → generated apiserver)", thousands(n)),
		Value: fmt.Sprintf("%.2f s", pause.Seconds()), Ref: "LIST of them from the CRD: " + ms(list),
		Ratio: fmt.Sprintf("%.0fx", pause.Seconds()/list.Seconds())})
	b.note("11", "%s Widgets: the whole `adopt` run took %.2f s (plan: every object validated by a dry-run create on the generated apiserver; the temporary APIService; the pause); its steps, each with the time since writes were paused: %s", thousands(n), total.Seconds(), strings.Join(pauseSteps(out), "; "))
	return nil
}

// adoptConfig writes what adopt reads from a project deployed by build
// config: <dir>/config/apiservice.yaml (the APIService of the project's
// group version, pointing at its Service), and the administrator's
// kubeconfig; it registers the Service (not the APIService: the CRD serves
// the group version).
func (b *bench) adoptConfig(k *kubeAPI, dir, ns, svc string, port int) (config, kubeconfig string, err error) {
	namespace, service, apiService, err := k.registration(ns, svc, port)
	if err != nil {
		return "", "", err
	}
	if err := b.createAll(k, namespace, service); err != nil {
		return "", "", err
	}
	config = filepath.Join(dir, "config")
	if err := os.MkdirAll(config, 0o755); err != nil {
		return "", "", err
	}
	y, err := yaml.Marshal(apiService)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(filepath.Join(config, "apiservice.yaml"), y, 0o644); err != nil {
		return "", "", err
	}
	kubeconfig = filepath.Join(dir, "admin.kubeconfig")
	return config, kubeconfig, writeKubeconfig(kubeconfig, k.admin.cfg)
}

var pausedFor = regexp.MustCompile(`writes paused for (\S+)`)

// pauseOf reads the pause adopt reports on its last line.
func pauseOf(out string) (time.Duration, error) {
	m := pausedFor.FindAllStringSubmatch(out, -1)
	if m == nil {
		return 0, fmt.Errorf("apiserver-boot adopt printed no %q:\n%s", "writes paused for", out)
	}
	return time.ParseDuration(strings.TrimRight(m[len(m)-1][1], ".,;"))
}

// pauseSteps are the lines adopt prints while writes are paused.
func pauseSteps(out string) []string {
	var steps []string
	for _, l := range strings.Split(out, "\n") {
		for _, p := range []string{"writes paused:", "copied ", "switched ", "verified "} {
			if strings.HasPrefix(l, p) {
				steps = append(steps, "`"+l+"`")
			}
		}
	}
	return steps
}
