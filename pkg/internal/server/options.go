package server

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	netutils "k8s.io/utils/net"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/private"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/storage"
)

// Options are the command-line options of the server.
type Options struct {
	SecureServing *genericoptions.SecureServingOptionsWithLoopback
	Etcd          *genericoptions.EtcdOptions
	EmbeddedEtcd  storage.EmbeddedEtcd
	// SQL is --datastore-endpoint: SQL through kine instead of etcd.
	SQL      storage.SQL
	Features *genericoptions.FeatureOptions

	// Delegated mode, used when aggregated behind kube-apiserver:
	// authentication (front-proxy request headers, client certificates,
	// TokenReview) and authorization (SubjectAccessReview) by the
	// kube-apiserver, admission with a client of its core API, and priority
	// and fairness from its FlowSchemas.
	Authentication *genericoptions.DelegatingAuthenticationOptions
	Authorization  *genericoptions.DelegatingAuthorizationOptions
	CoreAPI        *genericoptions.CoreAPIOptions
	Admission      *genericoptions.AdmissionOptions
	DelegatedAuth  bool

	// Standalone authentication.
	TokenFile       string
	WriteKubeconfig string

	// ShutdownDelay and ShutdownSendRetryAfter are kube-apiserver's graceful
	// shutdown: on SIGTERM, /readyz fails at once while requests are served
	// for the delay (load balancers and Service endpoints drop the replica
	// meanwhile), then in-flight requests drain; with ShutdownSendRetryAfter,
	// late requests get 429 and Retry-After, which clients retry elsewhere.
	ShutdownDelay          time.Duration
	ShutdownSendRetryAfter bool

	// Audit is k8s.io/apiserver's audit logging (--audit-policy-file,
	// --audit-log-path, the rotation flags, --audit-webhook-config-file), in
	// either mode.
	Audit *genericoptions.AuditOptions
}

// NewOptions returns defaults fit for a developer machine: loopback only,
// state kept under .apiserver-boot/ in the working directory.
func NewOptions() *Options {
	o := &Options{
		SecureServing:  genericoptions.NewSecureServingOptions().WithLoopback(),
		Etcd:           genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry", nil)),
		EmbeddedEtcd:   storage.EmbeddedEtcd{DataDir: filepath.Join(private.StateDir, "etcd")},
		SQL:            storage.NewSQL(),
		Features:       genericoptions.NewFeatureOptions(),
		Authentication: genericoptions.NewDelegatingAuthenticationOptions(),
		Authorization:  genericoptions.NewDelegatingAuthorizationOptions(),
		CoreAPI:        genericoptions.NewCoreAPIOptions(),
		Admission:      genericoptions.NewAdmissionOptions(),
		TokenFile:      filepath.Join(private.StateDir, "token"),
		Audit:          genericoptions.NewAuditOptions(),
	}
	// As k8s.io/apiserver's RecommendedOptions: an aggregated server's client
	// is kube-apiserver's proxy, multiplexing many requests (watches among
	// them) on one HTTP/2 connection.
	o.SecureServing.HTTP2MaxStreamsPerConnection = 1000
	o.SecureServing.BindAddress = netutils.ParseIPSloppy("127.0.0.1")
	o.SecureServing.BindPort = 9443
	o.SecureServing.ServerCert.CertDirectory = filepath.Join(private.StateDir, "certs")
	o.SecureServing.ServerCert.PairName = "apiserver"
	return o
}

// AddFlags registers every option on fs and returns the names of the flags
// that apply only in delegated mode.
func (o *Options) AddFlags(fs *pflag.FlagSet) (delegatedOnly []string) {
	o.SecureServing.AddFlags(fs)
	o.Etcd.AddFlags(fs)
	o.EmbeddedEtcd.AddFlags(fs)
	o.SQL.AddFlags(fs)
	o.Features.AddFlags(fs)
	// --feature-gates: k8s.io/apiserver's gates (CBORServingAndStorage, ...),
	// as kube-apiserver takes them; the server reads the process-wide gate.
	utilfeature.DefaultMutableFeatureGate.AddFlag(fs)
	o.Audit.AddFlags(fs)
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay-duration", o.ShutdownDelay,
		"Time to delay the termination: /readyz fails at once, requests are served normally meanwhile, then graceful termination starts (so that load balancers stop sending traffic first).")
	fs.BoolVar(&o.ShutdownSendRetryAfter, "shutdown-send-retry-after", o.ShutdownSendRetryAfter,
		"During graceful termination, answer new requests with 429 and Retry-After (clients retry another replica) until in-flight requests drained.")

	delegated := pflag.NewFlagSet("delegated", pflag.ContinueOnError)
	o.Authentication.AddFlags(delegated)
	o.Authorization.AddFlags(delegated)
	o.CoreAPI.AddFlags(delegated)
	o.Admission.AddFlags(delegated)
	delegated.VisitAll(func(f *pflag.Flag) {
		if !triggersDelegation[f.Name] {
			delegatedOnly = append(delegatedOnly, f.Name)
		}
	})
	fs.AddFlagSet(delegated)
	delegatedOnly = append(delegatedOnly, "enable-priority-and-fairness")

	fs.BoolVar(&o.DelegatedAuth, "delegated-auth", o.DelegatedAuth,
		"Run as an apiserver aggregated behind kube-apiserver: authenticate and authorize through it (front-proxy headers, TokenReview, SubjectAccessReview), "+
			"admit through its core API (NamespaceLifecycle, admission webhooks and policies) and apply its priority and fairness. "+
			"Implied by --authentication-kubeconfig, --authorization-kubeconfig and --kubeconfig; without them the in-cluster configuration is used.")
	fs.StringVar(&o.TokenFile, "token-file", o.TokenFile,
		"Standalone mode: file holding the bearer token clients must present; a random token is written there if it does not exist.")
	fs.StringVar(&o.WriteKubeconfig, "write-kubeconfig", o.WriteKubeconfig,
		"Standalone mode: once serving, write a kubeconfig for this server (CA and token) to this path.")
	return delegatedOnly
}

// triggersDelegation are the flags that switch to delegated mode by being set.
var triggersDelegation = map[string]bool{"authentication-kubeconfig": true, "authorization-kubeconfig": true, "kubeconfig": true}

func (o *Options) delegated() bool {
	return o.DelegatedAuth || o.Authentication.RemoteKubeConfigFile != "" || o.Authorization.RemoteKubeConfigFile != "" || o.CoreAPI.CoreAPIKubeconfigPath != ""
}

// Complete fills in what the flags leave implied. In delegated mode one
// kubeconfig serves every client of the kube-apiserver: --kubeconfig stands
// in for the authentication and authorization kubeconfigs, and the
// authentication kubeconfig for the core API client. With none of them,
// every client uses the in-cluster configuration.
func (o *Options) Complete() {
	if o.Authentication.RemoteKubeConfigFile == "" {
		o.Authentication.RemoteKubeConfigFile = o.CoreAPI.CoreAPIKubeconfigPath
	}
	if o.Authorization.RemoteKubeConfigFile == "" {
		o.Authorization.RemoteKubeConfigFile = o.CoreAPI.CoreAPIKubeconfigPath
	}
	if o.CoreAPI.CoreAPIKubeconfigPath == "" {
		o.CoreAPI.CoreAPIKubeconfigPath = o.Authentication.RemoteKubeConfigFile
	}
}

// Validate checks the options before anything is started.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	errs = append(errs, o.Features.Validate()...)
	errs = append(errs, o.Audit.Validate()...)
	if err := o.SQL.Validate(); err != nil {
		errs = append(errs, err)
	} else if o.SQL.Endpoint != "" && len(o.Etcd.StorageConfig.Transport.ServerList) > 0 {
		errs = append(errs, datastore.ErrBothStores(o.SQL.Endpoint))
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, errors.New("--shutdown-delay-duration may not be negative"))
	}
	if o.delegated() {
		errs = append(errs, o.Authentication.Validate()...)
		errs = append(errs, o.Authorization.Validate()...)
		errs = append(errs, o.CoreAPI.Validate()...)
		errs = append(errs, o.Admission.Validate()...)
	} else if o.TokenFile == "" {
		errs = append(errs, errors.New("--token-file must be set unless --delegated-auth is used"))
	}
	return utilerrors.NewAggregate(errs)
}

// validateFlags refuses flags of one mode given in the other, where they
// would be silently ignored.
func (o *Options) validateFlags(fs *pflag.FlagSet, delegatedOnly []string) error {
	if err := o.SQL.ReadEndpointFile(fs); err != nil {
		return err
	}
	if o.SQL.Endpoint != "" {
		for _, name := range []string{"embedded-etcd-data-dir", "embedded-etcd-client-port", "embedded-etcd-peer-port"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies to the embedded etcd, which does not run with --datastore-endpoint", name)
			}
		}
		// kine's socket is private and plain: TLS to an etcd would fail
		// later with a timeout that names nothing.
		for _, name := range []string{"etcd-cafile", "etcd-certfile", "etcd-keyfile", "etcd-servers-overrides"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies to an etcd given by --etcd-servers, not to --datastore-endpoint (kine in this process, on a private socket): drop it", name)
			}
		}
	}
	if o.delegated() {
		for _, name := range []string{"token-file", "write-kubeconfig"} {
			if fs.Changed(name) {
				return fmt.Errorf("--%s applies only in standalone mode, not with --delegated-auth, --authentication-kubeconfig, --authorization-kubeconfig or --kubeconfig", name)
			}
		}
		return nil
	}
	for _, name := range delegatedOnly {
		if fs.Changed(name) {
			return fmt.Errorf("--%s applies only in delegated mode (--delegated-auth, --authentication-kubeconfig, --authorization-kubeconfig or --kubeconfig)", name)
		}
	}
	return nil
}
