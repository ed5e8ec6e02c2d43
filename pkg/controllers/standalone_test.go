package controllers

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// fakeDiscovery serves the resource lists of some group versions; others are 404.
type fakeDiscovery struct {
	lists map[string][]string
	err   error
}

func (f fakeDiscovery) ServerResourcesForGroupVersion(gv string) (*metav1.APIResourceList, error) {
	if f.err != nil {
		return nil, f.err
	}
	names, ok := f.lists[gv]
	if !ok {
		return nil, apierrors.NewNotFound(schema.GroupResource{}, "")
	}
	list := &metav1.APIResourceList{GroupVersion: gv}
	for _, n := range names {
		list.APIResources = append(list.APIResources, metav1.APIResource{Name: n})
	}
	return list, nil
}

type noInformers struct{}

func watching(name string, gvr schema.GroupVersionResource, kind string) Controller {
	return New[*corev1.Pod, noInformersPtr](name, nil, func(noInformersPtr) (cache.SharedIndexInformer, func(string, string) (*corev1.Pod, error)) {
		return nil, nil
	}, Watches(gvr, kind))
}

type noInformersPtr = *noInformers

func (*noInformers) Start(context.Context)                 {}
func (*noInformers) WaitForCacheSync(context.Context) bool { return true }

func names(cs []Controller) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Name())
	}
	return out
}

// TestRunnable: against the standalone apiserver of run local (no pods in
// v1), a controller of a built-in kind it does not serve is left out, once,
// with a message naming it; the project's controllers run. Against a
// kube-apiserver, or when discovery fails, every controller runs.
func TestRunnable(t *testing.T) {
	var logs bytes.Buffer
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	_ = fs.Set("logtostderr", "false")
	_ = fs.Set("alsologtostderr", "false")
	// Each line goes to its severity's writer and those below: INFO's has all.
	klog.SetOutput(io.Discard)
	klog.SetOutputBySeverity("INFO", &logs)
	defer func() { _ = fs.Set("logtostderr", "true"); klog.SetOutput(os.Stderr) }()

	deployment := watching("deployment", schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, "Deployment")
	crontab := watching("crontab", schema.GroupVersionResource{Group: "stable.example.com", Version: "v1", Resource: "crontabs"}, "CronTab")
	unknown := fakeController{"legacy"} // says nothing of its kind
	all := []Controller{deployment, crontab, unknown}

	standalone := fakeDiscovery{lists: map[string][]string{"v1": {"namespaces"}, "stable.example.com/v1": {"crontabs", "crontabs/status"}}}
	if got := names(runnable(standalone, all)); strings.Join(got, ",") != "crontab,legacy" {
		t.Errorf("standalone: runs %v, want crontab and legacy", got)
	}
	klog.Flush()
	want := "controller deployment for apps/v1 Deployment cannot run against the standalone apiserver of run local: it serves only the project's kinds (and namespaces); it runs when aggregated in a cluster"
	if n := strings.Count(logs.String(), want); n != 1 {
		t.Errorf("said %d times %q:\n%s", n, want, logs.String())
	}

	cluster := fakeDiscovery{lists: map[string][]string{"v1": {"namespaces", "pods"}, "apps/v1": {"deployments"}}}
	if got := names(runnable(cluster, all)); len(got) != 3 {
		t.Errorf("against a kube-apiserver (stable.example.com not yet available): runs %v, want all", got)
	}
	if got := names(runnable(fakeDiscovery{err: errors.New("connection refused")}, all)); len(got) != 3 {
		t.Errorf("discovery failing: runs %v, want all", got)
	}
}

// TestNoControllerLeftRuns: when every controller is left out (a project
// whose only controller is of a built-in kind, under run local), the
// manager keeps running, ready, until it is stopped, rather than exiting.
func TestNoControllerLeftRuns(t *testing.T) {
	newInformers := func(*rest.Config, time.Duration) (Informers, error) { return &noInformers{}, nil }
	o := &managerOptions{Workers: map[string]*int{}}
	var ready atomic.Bool
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := runControllers(ctx, o, &rest.Config{Host: "http://127.0.0.1:1"}, newInformers, nil, &ready); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Errorf("with no controller, the manager returned after %s, before it was stopped", d)
	}
}
