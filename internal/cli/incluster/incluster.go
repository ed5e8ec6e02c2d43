// Package incluster is the end of apiserver-boot run in-cluster, once the
// image is built and the configuration written: kubectl applies the
// configuration, the apiserver's rollout is waited for, then every
// APIService of the project until it is Available, and the command says how
// to use the API.
package incluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sort"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/proc"
)

// poll is how often the APIServices are checked.
const poll = 2 * time.Second

// Deploy applies the configuration in dir (written for d) with k, waits for
// the apiserver's rollout and for d's APIServices to be Available, within
// timeout, then prints them and how to reach the project's resources.
func Deploy(ctx context.Context, k *Kubectl, dir string, d *deploy.Options, timeout time.Duration) error {
	if err := k.run(ctx, "apply", "-k", dir); err != nil {
		return fmt.Errorf("kubectl apply -k %s: %w", files.RelToWd(dir), err)
	}
	deadline := time.Now().Add(timeout)
	if err := k.run(ctx, "rollout", "status", "--namespace", d.Namespace, "deployment/"+deploy.APIServerName(d.Name), "--timeout", timeout.String()); err != nil {
		return fmt.Errorf("the apiserver did not roll out (see kubectl --namespace %s describe pods, kubectl --namespace %s logs deployment/%s): %w",
			d.Namespace, d.Namespace, deploy.APIServerName(d.Name), err)
	}
	names := d.APIServiceNames()
	if err := k.waitAvailable(ctx, names, deadline, poll); err != nil {
		return err
	}
	fmt.Fprintf(k.Out, "Available: %s\n", strings.Join(names, ", "))
	fmt.Fprint(k.Out, usage(d, k))
	return nil
}

// usage says how to reach the project's resources through the cluster.
func usage(d *deploy.Options, k *Kubectl) string {
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

// Kubectl runs kubectl against the chosen cluster, each run a child
// process in its own process group, stopped on Ctrl-C.
type Kubectl struct {
	// Bin is the kubectl binary; Kubeconfig and Context, when set, are passed
	// to it.
	Bin, Kubeconfig, Context string
	// Out and ErrOut take its output.
	Out, ErrOut io.Writer
}

func (k *Kubectl) flags() []string {
	var f []string
	if k.Kubeconfig != "" {
		f = append(f, "--kubeconfig", k.Kubeconfig)
	}
	if k.Context != "" {
		f = append(f, "--context", k.Context)
	}
	return f
}

func (k *Kubectl) command(args ...string) *exec.Cmd {
	c := exec.Command(k.Bin, append(k.flags(), args...)...)
	c.Stdin = nil
	return c
}

// run runs kubectl with its output shown.
func (k *Kubectl) run(ctx context.Context, args ...string) error {
	c := k.command(args...)
	c.Stdout, c.Stderr = k.Out, k.ErrOut
	fmt.Fprintf(k.Out, "$ kubectl %s\n", strings.Join(append(k.flags(), args...), " "))
	return proc.Run(ctx, c)
}

// output runs kubectl and returns what it printed.
func (k *Kubectl) output(ctx context.Context, args ...string) (string, error) {
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
func (k *Kubectl) waitAvailable(ctx context.Context, names []string, deadline time.Time, poll time.Duration) error {
	pending := append([]string(nil), names...)
	last := map[string]string{}
	fmt.Fprintf(k.Out, "Waiting for APIService %s to be Available...\n", strings.Join(names, ", "))
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
