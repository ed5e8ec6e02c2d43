package main

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/apiserver-boot/apiserver-boot/generators/model"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/cmdline"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
	"github.com/apiserver-boot/apiserver-boot/internal/cli/image"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// configOptions are the flags of build config (and run in-cluster).
type configOptions struct {
	name, namespace, image, output string
	etcdServers                    []string
	etcdImage                      string
	datastoreSecret                string
	metricsReader                  string
	replicas, etcdMembers          int32
	force                          bool

	// flags tells which flags were given (conflicts name them).
	flags *pflag.FlagSet
}

func (o *configOptions) addFlags(f *pflag.FlagSet, withImage bool) {
	o.flags = f
	f.StringVar(&o.name, "name", "", "Name of the apiserver's Service, prefix of every object; default the last element of the module path")
	f.StringVar(&o.namespace, "namespace", "", "Namespace of the apiserver, controller-manager and etcd; default <name>-system")
	if withImage {
		f.StringVar(&o.image, "image", "", "Image holding /apiserver and /controller-manager (from build container), e.g. registry.example.com/crontab:v0.1.0 (required)")
	}
	f.StringVar(&o.output, "output", "config", "Folder of the configuration (build config), relative to the project root")
	f.StringSliceVar(&o.etcdServers, "etcd-servers", nil, "URLs of an existing etcd cluster (comma separated): no etcd StatefulSet is written")
	f.StringVar(&o.datastoreSecret, "datastore-endpoint-secret", "", "Secret in --namespace whose key \""+deploy.DatastoreEndpointKey+"\" holds the apiserver's --datastore-endpoint URL (postgres://..., mysql://...): objects are stored in that SQL database through kine, no etcd objects are written (excludes the --etcd-* flags)")
	f.StringVar(&o.etcdImage, "etcd-image", "", "Image of the etcd StatefulSet; default "+deploy.EtcdRepository+":<the go.etcd.io/etcd/server/v3 version in go.mod>")
	f.StringVar(&o.metricsReader, "metrics-reader", "", "ServiceAccount (namespace/name) of the monitoring system, bound to the <name>-metrics-reader ClusterRole (get /metrics), e.g. monitoring/prometheus-k8s; empty binds none")
	f.Int32Var(&o.replicas, "replicas", deploy.DefaultReplicas, "Replicas of the apiserver and of the controller-manager (which lead in turn on a Lease)")
	f.Int32Var(&o.etcdMembers, "etcd-members", deploy.DefaultEtcdMembers, "Members of the etcd StatefulSet: 1, 3, 5 or 7 (a quorum survives the loss of (n-1)/2); ignored with --etcd-servers")
	f.BoolVar(&o.force, "force", false, "Issue new certificates even if those in <output>/"+deploy.CertificatesFile+" are still valid")
}

func newBuildConfigCommand() *cobra.Command {
	o := &configOptions{}
	cmd := &cobra.Command{
		Use:   "config",
		Short: "Write the Kubernetes configuration that runs the project aggregated in a cluster",
		Long: `config writes a kustomize folder (default config/) that runs the apiserver in a
cluster behind kube-apiserver: the Namespace, a ServiceAccount and its RBAC
(delegated authentication and authorization, the controller-manager's rights
on the project's kinds and its leader election Lease), an APIService per
served version, a CA with the serving certificate of <name>.<namespace>.svc
(Secret), the Service, the apiserver and controller-manager Deployments, and
an etcd StatefulSet with a volume (its image matching the etcd version in
go.mod; TLS with client certificates) unless --etcd-servers is given.

With --datastore-endpoint-secret NAME the apiserver stores its objects in a
SQL database through kine instead (--datastore-endpoint): no etcd object is
written, and the URL, password included, comes from the key "endpoint" of
the Secret NAME, which you create in --namespace (docs/deploy.md).

Certificates are kept across runs while they fit --name and --namespace and
have more than 30 days left; --force issues new ones. The folder is rewritten
on every run: customise it with an overlay. certificates.yaml holds private
keys: keep it out of version control (the scaffolded .gitignore does).`,
		Example: `  apiserver-boot build config --name crontab --namespace crontab-system --image registry.example.com/crontab:v0.1.0
  kubectl apply -k config/
  apiserver-boot build config --image registry.example.com/crontab:v0.1.0 --etcd-servers https://etcd.example.com:2379 --output deploy/
  kubectl -n crontab-system create secret generic crontab-datastore --from-literal=endpoint='postgres://crontab:PASSWORD@db.example.com:5432/crontab?sslmode=require'
  apiserver-boot build config --image registry.example.com/crontab:v0.1.0 --datastore-endpoint-secret crontab-datastore`,
		Args: cmdline.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			root, p, api, err := loadProject()
			if err != nil {
				return err
			}
			dir, _, err := o.write(cmd.OutOrStdout(), root, p, api, o.image)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "Apply it with: kubectl apply -k %s\n", files.RelToWd(dir))
			return nil
		},
	}
	o.addFlags(cmd.Flags(), true)
	return cmd
}

// deployOptions checks the flags and resolves their defaults.
func (o *configOptions) deployOptions(root string, p *project.Project, api *model.API, img string) (*deploy.Options, error) {
	ref, err := image.ParseReference("--image", img)
	if err != nil {
		return nil, err
	}
	versions, kinds := deploy.ServedAPI(api)
	d := &deploy.Options{Name: o.name, Namespace: o.namespace, Image: ref.String(), EtcdServers: o.etcdServers, EtcdImage: o.etcdImage,
		DatastoreSecret: o.datastoreSecret, Project: p, Versions: versions, Kinds: kinds}
	if o.datastoreSecret != "" {
		// No etcd at all: a flag about etcd is a mistake, not ignored.
		for _, f := range []string{"etcd-servers", "etcd-image", "etcd-members"} {
			if o.flags != nil && o.flags.Changed(f) {
				return nil, fmt.Errorf("--datastore-endpoint-secret and --%s exclude each other: with a SQL database (kine) the apiserver runs no etcd; drop --%s, or drop --datastore-endpoint-secret to use etcd", f, f)
			}
		}
	}
	if o.replicas < 1 {
		return nil, fmt.Errorf("--replicas %d is not valid: want 1 or more (2 or more for a rolling update without downtime)", o.replicas)
	}
	if o.etcdMembers < 1 || o.etcdMembers > 7 || o.etcdMembers%2 == 0 {
		return nil, fmt.Errorf("--etcd-members %d is not valid: want 1, 3, 5 or 7 (an even number adds no fault tolerance)", o.etcdMembers)
	}
	d.Replicas, d.EtcdMembers = o.replicas, o.etcdMembers
	if d.MetricsReaders, err = deploy.ParseMetricsReader(o.metricsReader); err != nil {
		return nil, err
	}
	return d, d.Complete(root)
}

// write renders the configuration for img and writes it; it returns the
// folder and the options it was written with.
func (o *configOptions) write(out io.Writer, root string, p *project.Project, api *model.API, img string) (string, *deploy.Options, error) {
	d, err := o.deployOptions(root, p, api, img)
	if err != nil {
		return "", nil, err
	}
	dir := o.output
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(root, dir)
	}
	w := deploy.Writer{Out: out, Rel: files.RelToWd, Force: o.force, Now: time.Now()}
	return dir, d, w.Write(dir, d)
}
