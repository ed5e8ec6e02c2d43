package controllers

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	k8stesting "k8s.io/client-go/testing"
)

// TestLeaderElection runs two controller-managers on one Lease (client-go's
// fake clientset stores Leases): only one runs controllers at a time, and the
// other takes over once the first stops and releases the Lease.
func TestLeaderElection(t *testing.T) {
	client := fake.NewSimpleClientset()
	o := &managerOptions{LeaseName: "crontab-controller-manager", LeaseNS: "crontab-system", LeaseDuration: 2 * time.Second}
	var running, maxRunning int32
	leaders := make(chan string, 2)
	start := func(id string) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		go leaderElect(ctx, o, client, id, func(ctx context.Context) error {
			n := atomic.AddInt32(&running, 1)
			for m := atomic.LoadInt32(&maxRunning); n > m && !atomic.CompareAndSwapInt32(&maxRunning, m, n); m = atomic.LoadInt32(&maxRunning) {
			}
			leaders <- id
			<-ctx.Done()
			atomic.AddInt32(&running, -1)
			return nil
		})
		return cancel
	}
	stopA := start("a")
	if got := <-leaders; got != "a" {
		t.Fatalf("first leader %s, want a", got)
	}
	stopB := start("b")
	defer stopB()
	select {
	case got := <-leaders:
		t.Fatalf("%s leads while a holds the Lease", got)
	case <-time.After(3 * time.Second):
	}
	lease, err := client.CoordinationV1().Leases("crontab-system").Get(context.Background(), "crontab-controller-manager", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity != "a" {
		t.Fatalf("Lease holder: %v %v", lease, err)
	}
	stopA() // releases the Lease on the way out
	select {
	case got := <-leaders:
		if got != "b" {
			t.Fatalf("took over: %s, want b", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b did not take over after a stopped")
	}
	if m := atomic.LoadInt32(&maxRunning); m != 1 {
		t.Errorf("%d managers ran controllers at once", m)
	}
}

// TestLostLeadershipIsAnError: a leader whose Lease another holder takes
// stops its controllers and returns an error (the process exits non-zero
// and is restarted); a controller failure while leading is returned too.
func TestLostLeadershipIsAnError(t *testing.T) {
	client := fake.NewSimpleClientset()
	o := &managerOptions{LeaseName: "crontab-controller-manager", LeaseNS: "crontab-system", LeaseDuration: 2 * time.Second}
	leading := make(chan struct{})
	stopped := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- leaderElect(context.Background(), o, client, "a", func(ctx context.Context) error {
			close(leading)
			<-ctx.Done()
			close(stopped)
			return nil
		})
	}()
	<-leading
	// The apiserver stops taking a's renewals (a partition): its Lease runs
	// out, and another replica may take it.
	client.PrependReactor("update", "leases", func(action k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("the apiserver is unreachable")
	})
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "lost the Lease crontab-system/crontab-controller-manager") {
			t.Errorf("want the lost Lease as an error, got %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the leader kept running after losing its Lease")
	}
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Error("the controllers were not stopped")
	}

	// A controller failure while leading.
	client = fake.NewSimpleClientset()
	failing := errors.New("controller crontab: boom")
	o.LeaseName = "other"
	if err := leaderElect(context.Background(), o, client, "c", func(ctx context.Context) error { return failing }); !errors.Is(err, failing) {
		t.Errorf("want the controllers' error, got %v", err)
	}
	// Shutting down is not an error.
	ctx, cancel := context.WithCancel(context.Background())
	o.LeaseName = "third"
	go func() { time.Sleep(time.Second); cancel() }()
	if err := leaderElect(ctx, o, client, "d", func(ctx context.Context) error { <-ctx.Done(); return nil }); err != nil {
		t.Errorf("shutdown: %v", err)
	}
}

type failingInit struct{ fakeController }

func (failingInit) Init(*rest.Config, Informers) error { return errors.New("no such resource") }

// neverSynced are informers whose caches never sync (a kind the apiserver
// does not serve, an apiserver that does not answer).
type neverSynced struct{}

func (neverSynced) Start(context.Context) {}
func (neverSynced) WaitForCacheSync(ctx context.Context) bool {
	<-ctx.Done()
	return false
}

// TestControllersFailLoudly: a controller that cannot start, and informers
// that do not sync within --cache-sync-timeout, end runControllers with an
// error (the manager then exits non-zero); with the timeout off, it waits.
func TestControllersFailLoudly(t *testing.T) {
	newInformers := func(*rest.Config, time.Duration) (Informers, error) { return neverSynced{}, nil }
	workers := 1
	o := &managerOptions{Workers: map[string]*int{"crontab": &workers}, CacheSyncTimeout: 200 * time.Millisecond}
	var ready atomic.Bool

	err := runControllers(context.Background(), o, &rest.Config{}, newInformers, []Controller{failingInit{fakeController{"crontab"}}}, &ready)
	if err == nil || !strings.Contains(err.Error(), "initialising controller crontab: no such resource") {
		t.Errorf("a controller that cannot start: %v", err)
	}

	running := blockingController{fakeController{"crontab"}}
	err = runControllers(context.Background(), o, &rest.Config{}, newInformers, []Controller{running}, &ready)
	if err == nil || !strings.Contains(err.Error(), "the informers did not sync within --cache-sync-timeout=200ms") {
		t.Errorf("informers that never sync: %v", err)
	}

	o.CacheSyncTimeout = 0
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := runControllers(ctx, o, &rest.Config{}, newInformers, []Controller{running}, &ready); err != nil {
		t.Errorf("without a timeout, until shutdown: %v", err)
	}
}

// blockingController runs until its context is done, as a controller does.
type blockingController struct{ fakeController }

func (blockingController) Run(ctx context.Context, workers int) { <-ctx.Done() }
