package controllers

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// ManagerOptions are the controller-manager's command-line options.
type ManagerOptions struct {
	Kubeconfig string
	Workers    int
	Resync     time.Duration
}

// NewManagerCommand returns the controller-manager command running controllers.
func NewManagerCommand(name string, controllers []Controller) *cobra.Command {
	o := &ManagerOptions{Workers: 2, Resync: 10 * time.Minute}
	cmd := &cobra.Command{
		Use:          "controller-manager",
		Short:        fmt.Sprintf("Run the %s controllers", name),
		Example:      "  controller-manager --kubeconfig kubeconfig",
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return RunManager(cmd.Context(), o, controllers)
		},
	}
	cmd.Flags().StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig, "Kubeconfig of the apiserver to watch; empty means in-cluster configuration.")
	cmd.Flags().IntVar(&o.Workers, "concurrent-syncs", o.Workers, "Objects reconciled in parallel, per controller.")
	cmd.Flags().DurationVar(&o.Resync, "resync-period", o.Resync, "How often every object is reconciled again even without changes.")
	return cmd
}

// RunManager runs the controllers until ctx is done.
func RunManager(ctx context.Context, o *ManagerOptions, controllers []Controller) error {
	config, err := clientcmd.BuildConfigFromFlags("", o.Kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	si, err := NewSharedInformers(config, o.Resync)
	if err != nil {
		return err
	}
	for _, c := range controllers {
		if err := c.Init(config, si); err != nil {
			return fmt.Errorf("initialising controller %s: %w", c.Name(), err)
		}
	}
	si.Start(ctx)
	var wg sync.WaitGroup
	for _, c := range controllers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Run(ctx, o.Workers)
		}()
	}
	klog.InfoS("Controller manager started", "controllers", len(controllers))
	wg.Wait()
	return nil
}

// Main runs the controller-manager command and returns the process exit code.
func Main(name string, controllers []Controller) int {
	cmd := NewManagerCommand(name, controllers)
	cmd.SetContext(genericapiserver.SetupSignalContext())
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}
