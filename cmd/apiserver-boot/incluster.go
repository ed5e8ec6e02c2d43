package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/image"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/incluster"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

type inClusterOptions struct {
	container  containerOptions
	config     configOptions
	build      bool
	kubectl    string
	kubeconfig string
	context    string
	timeout    time.Duration
}

func newRunInClusterCommand() *cobra.Command {
	o := &inClusterOptions{build: true, kubectl: "kubectl", timeout: 5 * time.Minute}
	cmd := &cobra.Command{
		Use:   "in-cluster",
		Short: "Build and push the image, write the configuration, apply it and wait until the APIs are served",
		Long: `in-cluster runs, in order: build container (and --push, on by default),
build config (with the pushed image's digest, so that every change rolls out),
kubectl apply -k <output>, kubectl rollout status of the apiserver, and waits
until every APIService of the project is Available. It then prints how to use
the API. kubectl runs with --kubeconfig and --context when given, else with
its own defaults ($KUBECONFIG, ~/.kube/config).

With --push=false the image is written to bin/image.tar and the cluster must
get it another way (kind load image-archive bin/image.tar); with --build=false
--image is deployed as it is.`,
		Example: `  apiserver-boot run in-cluster --name crontab --namespace crontab-system --image registry.example.com/crontab:v0.1.0
  kubectl get crontabs
  apiserver-boot run in-cluster --image localhost:5001/crontab:dev --kubeconfig kind.kubeconfig --etcd-servers https://etcd.example.com:2379`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	o.container.addFlags(f, true)
	o.config.addFlags(f, false)
	f.BoolVar(&o.build, "build", o.build, "Build the image; --build=false deploys --image as it is")
	f.StringVar(&o.kubectl, "kubectl", o.kubectl, "The kubectl binary to run")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "Kubeconfig of the cluster, passed to kubectl; default kubectl's ($KUBECONFIG, ~/.kube/config)")
	f.StringVar(&o.context, "context", "", "Context of the kubeconfig, passed to kubectl")
	f.DurationVar(&o.timeout, "timeout", o.timeout, "How long to wait for the rollout and for the APIServices to become Available")
	return cmd
}

func (o *inClusterOptions) run(cmd *cobra.Command) error {
	root, p, api, err := loadProject()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	// Every flag is checked before anything is built or applied.
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout %s is not valid: want a positive duration, such as 5m", o.timeout)
	}
	if o.build {
		if _, _, _, err := image.Plan(root, o.container.image, o.container.platforms, o.container.output, o.container.push); err != nil {
			return err
		}
	}
	if _, err := o.config.deployOptions(root, p, api, o.container.image); err != nil {
		return err
	}
	kubectl, err := exec.LookPath(o.kubectl)
	if err != nil {
		return fmt.Errorf("--kubectl %s: %w", o.kubectl, err)
	}
	ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	img := o.container.image
	if o.build {
		res, err := o.container.run(ctx, root, newConsole(cmd), generators.GenerateOptions{Project: p, API: api})
		if err != nil {
			return err
		}
		if res.Pushed != nil {
			img = res.Pushed.String()
		} else {
			fmt.Fprintf(out, "Not pushed (--push=false): the cluster must get %s another way, e.g. kind load image-archive %s\n", res.Tag, files.RelToWd(res.Output))
		}
	}
	dir, d, err := o.config.write(out, root, p, api, img)
	if err != nil {
		return err
	}

	k := &incluster.Kubectl{Bin: kubectl, Kubeconfig: o.kubeconfig, Context: o.context, Out: out, ErrOut: cmd.ErrOrStderr()}
	return incluster.Deploy(ctx, k, dir, d, o.timeout)
}
