package controllers

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/component-base/metrics/legacyregistry"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"  // client-go request metrics
	_ "k8s.io/component-base/metrics/prometheus/workqueue" // work queue depth, latency, retries
	"k8s.io/klog/v2"
)

// managerOptions are the controller-manager's command-line options.
type managerOptions struct {
	Name       string
	Kubeconfig string
	// Workers per controller name (--concurrent-<name>-syncs).
	Workers     map[string]*int
	Resync      time.Duration
	BindAddress string
	LeaderElect bool
	LeaseName   string
	LeaseNS     string
	// LeaseDuration defaults to 15s; renewal and retries scale with it.
	LeaseDuration time.Duration
	// Secure serves the endpoints over TLS to authenticated, authorized
	// clients (--secure-port; off by default).
	Secure *secureServingOptions
	// CacheSyncTimeout bounds the wait for the informers' first sync; the
	// process exits when they do not sync in time (0 waits for ever).
	CacheSyncTimeout time.Duration
}

// serviceAccountNamespace is where an in-cluster pod runs.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// newManagerCommand returns the controller-manager command running controllers.
func newManagerCommand(name string, newInformers NewInformers, controllers []Controller) *cobra.Command {
	o := &managerOptions{
		Name: name, Workers: map[string]*int{}, Resync: 10 * time.Minute, BindAddress: "127.0.0.1:8080", Secure: newSecureServingOptions(),
		CacheSyncTimeout: 2 * time.Minute,
		LeaderElect:      true, LeaseName: name + "-controller-manager", LeaseNS: "default",
	}
	if b, err := os.ReadFile(serviceAccountNamespace); err == nil {
		o.LeaseNS = strings.TrimSpace(string(b))
	}
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: fmt.Sprintf("Run the %s controllers", name),
		Example: `  controller-manager --kubeconfig kubeconfig --leader-elect=false
  controller-manager --concurrent-crontab-syncs 5   # in cluster: leader election on a Lease`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runManager(cmd.Context(), o, newInformers, controllers)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the apiserver to watch; empty means in-cluster configuration.")
	for _, c := range controllers {
		n := 2
		o.Workers[c.Name()] = &n
		f.IntVar(o.Workers[c.Name()], "concurrent-"+c.Name()+"-syncs", n, fmt.Sprintf("Objects the %s controller reconciles in parallel.", c.Name()))
	}
	f.DurationVar(&o.Resync, "resync-period", o.Resync, "How often every object is reconciled again even without changes.")
	f.DurationVar(&o.CacheSyncTimeout, "cache-sync-timeout", o.CacheSyncTimeout, "How long the informers may take to sync at start before the process exits, so that it is restarted (0 waits for ever: run local, whose apiserver serves no built-in kinds, uses it).")
	f.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "Address of the plain-HTTP /healthz, /readyz and /metrics endpoints, without authentication: keep it on loopback (empty turns it off; --secure-port serves them to other hosts).")
	o.Secure.AddFlags(f)
	f.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "Run controllers only while holding a Lease, so that replicas take over from each other; needs a kube-apiserver (off for `apiserver-boot run local`).")
	f.StringVar(&o.LeaseName, "leader-elect-lease", o.LeaseName, "Name of the leader election Lease.")
	f.StringVar(&o.LeaseNS, "leader-elect-namespace", o.LeaseNS, "Namespace of the leader election Lease; default the pod's namespace in cluster.")
	return cmd
}

// runManager serves the health and metrics endpoints and runs the
// controllers (once leader, with leader election) until ctx is done.
func runManager(ctx context.Context, o *managerOptions, newInformers NewInformers, controllers []Controller) error {
	config, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	var ready atomic.Bool
	if o.BindAddress != "" {
		ln, err := net.Listen("tcp", o.BindAddress)
		if err != nil {
			return fmt.Errorf("--bind-address %s: %w", o.BindAddress, err)
		}
		srv := &http.Server{Handler: endpoints(&ready), ReadHeaderTimeout: 10 * time.Second}
		go func() {
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				klog.ErrorS(err, "Health and metrics endpoints stopped")
			}
		}()
		klog.InfoS("Serving /healthz, /readyz and /metrics", "address", ln.Addr().String())
		defer func() {
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = srv.Shutdown(shutdown)
		}()
	}
	if o.Secure != nil && o.Secure.enabled() {
		secureCtx, stop := context.WithCancel(ctx)
		defer stop()
		if err := o.Secure.serve(secureCtx, endpoints(&ready)); err != nil {
			return err
		}
		klog.InfoS("Serving /healthz, /readyz and /metrics over TLS", "port", o.Secure.Serving.BindPort)
	}

	// A controller that cannot start, informers that do not sync, a lost
	// Lease: the process exits non-zero, the kubelet restarts it, and the
	// other replica takes over meanwhile.
	run := func(ctx context.Context) error {
		return runControllers(ctx, o, config, newInformers, controllers, &ready)
	}
	if !o.LeaderElect {
		return run(ctx)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return err
	}
	id, err := os.Hostname()
	if err != nil {
		return err
	}
	return leaderElect(ctx, o, client, fmt.Sprintf("%s_%d", id, os.Getpid()), run)
}

func endpoints(ready *atomic.Bool) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) {
		if !ready.Load() {
			http.Error(w, "informers not synced (or not the leader)", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/metrics", legacyregistry.Handler())
	return mux
}

// runControllers starts the informers and every controller, and blocks
// until ctx is done. It fails when a controller cannot start, or when the
// informers do not sync within --cache-sync-timeout.
func runControllers(ctx context.Context, o *managerOptions, config *rest.Config, newInformers NewInformers, controllers []Controller, ready *atomic.Bool) error {
	disc, err := discovery.NewDiscoveryClientForConfig(config)
	if err != nil {
		return err
	}
	controllers = runnable(disc, controllers)
	si, err := newInformers(config, o.Resync)
	if err != nil {
		return err
	}
	for _, c := range controllers {
		if err := c.Init(config, si); err != nil {
			return fmt.Errorf("initialising controller %s: %w", c.Name(), err)
		}
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	si.Start(ctx)
	// Each controller waits for its own informer; readiness waits for all.
	var syncErr error
	synced := make(chan struct{})
	go func() {
		defer close(synced)
		syncCtx := ctx
		if o.CacheSyncTimeout > 0 {
			var cancel context.CancelFunc
			syncCtx, cancel = context.WithTimeout(ctx, o.CacheSyncTimeout)
			defer cancel()
		}
		if si.WaitForCacheSync(syncCtx) {
			ready.Store(true)
		} else if ctx.Err() == nil {
			syncErr = fmt.Errorf("the informers did not sync within --cache-sync-timeout=%s", o.CacheSyncTimeout)
			stop()
		}
	}()
	defer ready.Store(false)
	var wg sync.WaitGroup
	for _, c := range controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run(ctx, *o.Workers[c.Name()])
		}()
	}
	klog.InfoS("Controller manager started", "controllers", len(controllers))
	// Until ctx is done, or the informers do not sync in time: with no
	// controller to run, the process still serves its endpoints.
	<-ctx.Done()
	wg.Wait()
	<-synced
	return syncErr
}

// leaderElect runs run while holding the Lease, releasing it on shutdown so
// a replica takes over at once. It returns run's error, and an error when
// the Lease is lost while ctx is not done: another replica leads then, and
// this process must stop its controllers and exit.
func leaderElect(ctx context.Context, o *managerOptions, client kubernetes.Interface, id string, run func(context.Context) error) error {
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, o.LeaseNS, o.LeaseName, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: id})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu     sync.Mutex
		runErr error
		lost   bool
	)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, ReleaseOnCancel: true, Name: o.LeaseName,
		LeaseDuration: o.leaseDuration(), RenewDeadline: o.leaseDuration() * 2 / 3, RetryPeriod: o.leaseDuration() / 7,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				if err := run(ctx); err != nil {
					mu.Lock()
					runErr = err
					mu.Unlock()
					cancel()
				}
			},
			OnStoppedLeading: func() {
				mu.Lock()
				defer mu.Unlock()
				if ctx.Err() == nil {
					lost = true
					cancel()
				}
				klog.InfoS("Stopped leading", "lease", o.LeaseNS+"/"+o.LeaseName)
			},
		},
	})
	if err != nil {
		return err
	}
	elector.Run(ctx)
	mu.Lock()
	defer mu.Unlock()
	if runErr != nil {
		return runErr
	}
	if lost {
		return fmt.Errorf("lost the Lease %s/%s: another replica leads", o.LeaseNS, o.LeaseName)
	}
	return nil
}

// leaseDuration is how long a leader's Lease lasts without renewal.
func (o *managerOptions) leaseDuration() time.Duration {
	if o.LeaseDuration > 0 {
		return o.LeaseDuration
	}
	return 15 * time.Second
}

// Main runs the controller-manager command of the project name with the
// controllers (flags from the command line, until SIGTERM or SIGINT) and
// returns the process exit code.
func Main(name string, newInformers NewInformers, controllers []Controller) int {
	cmd := newManagerCommand(name, newInformers, controllers)
	cmd.SetContext(genericapiserver.SetupSignalContext())
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}
