package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/apiserver-boot/apiserver-boot/generators"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
)

type inClusterOptions struct {
	container  containerOptions
	config     configOptions
	build      bool
	kubectl    string
	kubeconfig string
	context    string
	timeout    time.Duration
	// poll is how often the APIServices are checked.
	poll time.Duration
}

func newRunInClusterCommand() *cobra.Command {
	o := &inClusterOptions{build: true, kubectl: "kubectl", timeout: 5 * time.Minute, poll: 2 * time.Second}
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
		Args: noArgs,
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
		if _, _, _, err := o.container.plan(root); err != nil {
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
		if res.pushed != nil {
			img = res.pushed.String()
		} else {
			fmt.Fprintf(out, "Not pushed (--push=false): the cluster must get %s another way, e.g. kind load image-archive %s\n", res.tag, files.RelToWd(res.output))
		}
	}
	dir, d, err := o.config.write(out, root, p, api, img)
	if err != nil {
		return err
	}

	k := &kubectlRunner{bin: kubectl, kubeconfig: o.kubeconfig, context: o.context, out: out, errOut: cmd.ErrOrStderr()}
	if err := k.run(ctx, "apply", "-k", dir); err != nil {
		return fmt.Errorf("kubectl apply -k %s: %w", files.RelToWd(dir), err)
	}
	deadline := time.Now().Add(o.timeout)
	if err := k.run(ctx, "rollout", "status", "--namespace", d.Namespace, "deployment/"+deploy.APIServerName(d.Name), "--timeout", o.timeout.String()); err != nil {
		return fmt.Errorf("the apiserver did not roll out (see kubectl --namespace %s describe pods, kubectl --namespace %s logs deployment/%s): %w",
			d.Namespace, d.Namespace, deploy.APIServerName(d.Name), err)
	}
	names := d.APIServiceNames()
	if err := k.waitAvailable(ctx, names, deadline, o.poll); err != nil {
		return err
	}
	fmt.Fprintf(out, "Available: %s\n", strings.Join(names, ", "))
	fmt.Fprint(out, usage(d, k))
	return nil
}

// usage says how to reach the project's resources through the cluster.
func usage(d *deploy.Options, k *kubectlRunner) string {
	prefix := "kubectl"
	if f := k.flags(); len(f) > 0 {
		prefix += " " + strings.Join(f, " ")
	}
	var b strings.Builder
	b.WriteString("Try:\n")
	for _, k := range d.Kinds {
		fmt.Fprintf(&b, "  %s get %s.%s\n", prefix, k.Plural, k.FullGroup)
	}
	groups := make([]string, 0, len(d.Versions))
	for g := range d.Versions {
		groups = append(groups, g)
	}
	sort.Strings(groups)
	for _, g := range groups {
		fmt.Fprintf(&b, "  %s api-resources --api-group %s\n", prefix, g)
	}
	return b.String()
}

// kubectlRunner runs kubectl against the chosen cluster, each run a child
// process in its own process group, stopped on Ctrl-C.
type kubectlRunner struct {
	bin, kubeconfig, context string
	out, errOut              io.Writer
}

func (k *kubectlRunner) flags() []string {
	var f []string
	if k.kubeconfig != "" {
		f = append(f, "--kubeconfig", k.kubeconfig)
	}
	if k.context != "" {
		f = append(f, "--context", k.context)
	}
	return f
}

func (k *kubectlRunner) command(args ...string) *exec.Cmd {
	c := exec.Command(k.bin, append(k.flags(), args...)...)
	c.Stdin = nil
	return c
}

// run runs kubectl with its output shown.
func (k *kubectlRunner) run(ctx context.Context, args ...string) error {
	c := k.command(args...)
	c.Stdout, c.Stderr = k.out, k.errOut
	fmt.Fprintf(k.out, "$ kubectl %s\n", strings.Join(append(k.flags(), args...), " "))
	return proc.Run(ctx, c)
}

// output runs kubectl and returns what it printed.
func (k *kubectlRunner) output(ctx context.Context, args ...string) (string, error) {
	c := k.command(args...)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	if err := proc.Run(ctx, c); err != nil {
		return "", fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// availableJSONPath prints an APIService's Available condition as status|reason|message.
const availableJSONPath = `jsonpath={range .status.conditions[?(@.type=="Available")]}{.status}|{.reason}|{.message}{end}`

// waitAvailable polls the APIServices until each is Available, or the deadline.
func (k *kubectlRunner) waitAvailable(ctx context.Context, names []string, deadline time.Time, poll time.Duration) error {
	pending := append([]string(nil), names...)
	last := map[string]string{}
	fmt.Fprintf(k.out, "Waiting for APIService %s to be Available...\n", strings.Join(names, ", "))
	for {
		var still []string
		for _, n := range pending {
			s, err := k.output(ctx, "get", "apiservice", n, "-o", availableJSONPath)
			if errors.Is(err, context.Canceled) || ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				last[n] = err.Error()
				still = append(still, n)
				continue
			}
			status, detail, _ := strings.Cut(strings.TrimSpace(s), "|")
			if status == "True" {
				continue
			}
			last[n] = strings.Trim(strings.ReplaceAll(detail, "|", ": "), ": ")
			if last[n] == "" {
				last[n] = "no Available condition yet"
			}
			still = append(still, n)
		}
		pending = still
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			var why []string
			for _, n := range pending {
				why = append(why, n+": "+last[n])
			}
			return fmt.Errorf("APIServices not Available after --timeout: %s", strings.Join(why, "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
}
