package controllers

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
)

// TestLeaderElection runs two controller-managers on one Lease (client-go's
// fake clientset stores Leases): only one runs controllers at a time, and the
// other takes over once the first stops and releases the Lease.
func TestLeaderElection(t *testing.T) {
	client := fake.NewSimpleClientset()
	o := &ManagerOptions{LeaseName: "crontab-controller-manager", LeaseNS: "crontab-system", LeaseDuration: 2 * time.Second}
	var running, maxRunning int32
	leaders := make(chan string, 2)
	start := func(id string) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		go leaderElect(ctx, o, client, id, func(ctx context.Context) {
			n := atomic.AddInt32(&running, 1)
			for m := atomic.LoadInt32(&maxRunning); n > m && !atomic.CompareAndSwapInt32(&maxRunning, m, n); m = atomic.LoadInt32(&maxRunning) {
			}
			leaders <- id
			<-ctx.Done()
			atomic.AddInt32(&running, -1)
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
