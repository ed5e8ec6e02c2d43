// Package apiserver starts the extension apiserver of a generated project:
// k8s.io/apiserver's generic server, storing in etcd (embedded unless
// --etcd-servers is given), secured either standalone (self-signed TLS and a
// bearer token, for `apiserver-boot run local`) or by delegating
// authentication and authorization to a kube-apiserver when aggregated.
package apiserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	basecompatibility "k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	netutils "k8s.io/utils/net"

	"github.com/apiserver-boot/apiserver-boot/internal/private"
	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// Config is what a generated cmd/apiserver/main.go hands to NewCommand.
type Config struct {
	// Name names the server in logs, OpenAPI and the kubeconfig it writes.
	Name string
	// Groups are the API groups to serve (generated: apis.Groups()).
	Groups []*builders.APIGroup
	// OpenAPIDefinitions are the generated OpenAPI definitions.
	OpenAPIDefinitions openapicommon.GetOpenAPIDefinitions
}

// Options are the command-line options of the server.
type Options struct {
	SecureServing *genericoptions.SecureServingOptionsWithLoopback
	Etcd          *genericoptions.EtcdOptions
	EmbeddedEtcd  EmbeddedEtcdOptions
	Features      *genericoptions.FeatureOptions

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
		EmbeddedEtcd:   EmbeddedEtcdOptions{DataDir: filepath.Join(private.StateDir, "etcd")},
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
	o.Features.AddFlags(fs)
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

// completeDelegated lets one kubeconfig serve every client of the
// kube-apiserver: --kubeconfig stands in for the authentication and
// authorization kubeconfigs, and the authentication kubeconfig for the core
// API client. With none of them, every client uses the in-cluster configuration.
func (o *Options) completeDelegated() {
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

// NewCommand returns the apiserver command of a generated project.
func NewCommand(cfg Config) *cobra.Command {
	o := NewOptions()
	var delegatedOnly []string
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: fmt.Sprintf("Serve the %s API", cfg.Name),
		Example: `  # standalone on an embedded etcd, writing a kubeconfig for kubectl
  apiserver --write-kubeconfig kubeconfig
  # on an external etcd
  apiserver --etcd-servers http://127.0.0.1:2379
  # aggregated behind a kube-apiserver (in a cluster: --delegated-auth, in-cluster configuration)
  apiserver --etcd-servers https://etcd:2379 --tls-cert-file tls.crt --tls-private-key-file tls.key \
    --kubeconfig kubeconfig`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validateFlags(cmd.Flags(), delegatedOnly); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), cfg, o)
		},
	}
	delegatedOnly = o.AddFlags(cmd.Flags())
	return cmd
}

// NewScheme registers every group in a new scheme, with the meta types every server needs.
func NewScheme(groups []*builders.APIGroup) (*runtime.Scheme, error) {
	scheme := runtime.NewScheme()
	metav1.AddToGroupVersion(scheme, schema.GroupVersion{Version: "v1"})
	unversioned := schema.GroupVersion{Group: "", Version: "v1"}
	scheme.AddUnversionedTypes(unversioned, &metav1.Status{}, &metav1.APIVersions{}, &metav1.APIGroupList{}, &metav1.APIGroup{}, &metav1.APIResourceList{})
	for _, g := range groups {
		if err := g.AddToScheme(scheme); err != nil {
			return nil, fmt.Errorf("registering %s: %w", g.Name, err)
		}
		if err := scheme.SetVersionPriority(g.PrioritizedVersions()...); err != nil {
			return nil, err
		}
		for _, r := range g.Resources {
			if r.Scale != nil {
				addScaleToScheme(scheme)
			}
		}
	}
	return scheme, nil
}

// selfSignedCerts makes, without --tls-cert-file, a self-signed serving
// certificate in --cert-dir (0700), and refuses its key when group or
// others may read it.
func (o *Options) selfSignedCerts() error {
	if o.SecureServing.ServerCert.CertKey.CertFile != "" {
		return nil // the user's certificate (in cluster, a mounted Secret)
	}
	if dir := o.SecureServing.ServerCert.CertDirectory; dir != "" {
		if err := private.Dir(dir); err != nil {
			return fmt.Errorf("--cert-dir: %w", err)
		}
	}
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return fmt.Errorf("creating self-signed certificates in --cert-dir: %w", err)
	}
	return private.Check("--cert-dir", o.SecureServing.ServerCert.CertKey.KeyFile)
}

// portInUse tells whether err is a failed listen on a taken port.
func portInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE)
}

// Run serves until ctx is done.
func Run(ctx context.Context, cfg Config, o *Options) error {
	scheme, err := NewScheme(cfg.Groups)
	if err != nil {
		return err
	}
	standalone := !o.delegated()
	if standalone {
		// kube-apiserver serves namespaces in delegated mode; standalone, this server does.
		if err := addNamespacesToScheme(scheme); err != nil {
			return err
		}
	}
	codecs := serializer.NewCodecFactory(scheme)

	var storageVersions []schema.GroupVersion
	for _, g := range cfg.Groups {
		storageVersions = append(storageVersions, schema.GroupVersion{Group: g.Name, Version: g.StorageVersion})
	}
	// Each resource gets a codec for its own storage version (newStorage's
	// options); this one serves what is not a resource's.
	o.Etcd.StorageConfig.Codec = StorageCodec(codecs, schema.GroupVersions(storageVersions))

	if len(o.Etcd.StorageConfig.Transport.ServerList) == 0 {
		// The embedded etcd's certificates go beside the serving ones.
		certDir := o.SecureServing.ServerCert.CertDirectory
		if certDir == "" {
			certDir = o.EmbeddedEtcd.DataDir + "-certs"
		}
		etcd, url, pki, err := o.EmbeddedEtcd.Start(certDir)
		if err != nil {
			return err
		}
		defer etcd.Close()
		t := &o.Etcd.StorageConfig.Transport
		t.ServerList, t.CertFile, t.KeyFile, t.TrustedCAFile = []string{url}, pki.ClientCert, pki.ClientKey, pki.CA
	}
	if errs := o.Etcd.Validate(); len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}

	serverConfig := genericapiserver.NewRecommendedConfig(codecs)
	serverConfig.EffectiveVersion = kubeShapedVersion{basecompatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", "")}
	serverConfig.FeatureGate = utilfeature.DefaultFeatureGate
	namer := openapi.NewDefinitionNamer(scheme)
	// What the schemas enforce is what the OpenAPI publishes.
	definitions := WithSchemas(cfg.OpenAPIDefinitions, cfg.Groups)
	if standalone {
		definitions = withNamespaceDefinitions(definitions)
	}
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions, namer)
	serverConfig.OpenAPIConfig.Info.Title = cfg.Name
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(definitions, namer)
	serverConfig.OpenAPIV3Config.Info.Title = cfg.Name

	if err := o.selfSignedCerts(); err != nil {
		return err
	}
	if err := o.SecureServing.ApplyTo(&serverConfig.SecureServing, &serverConfig.LoopbackClientConfig); err != nil {
		if portInUse(err) {
			return fmt.Errorf("port %d is taken: choose another with --secure-port: %w", o.SecureServing.BindPort, err)
		}
		return err
	}
	if err := o.Etcd.ApplyTo(&serverConfig.Config); err != nil {
		return err
	}

	var token string
	var namespaceInformers informers.SharedInformerFactory
	if !standalone {
		if err := o.applyDelegated(serverConfig); err != nil {
			return err
		}
	} else {
		if token, err = loadOrCreateToken(o.TokenFile); err != nil {
			return err
		}
		serverConfig.Authentication.Authenticator = standaloneAuthenticator(token)
		serverConfig.Authorization.Authorizer = standaloneAuthorizer()
		// No kube-apiserver, so no FlowSchemas: the max-in-flight limits apply.
		features := *o.Features
		features.EnablePriorityAndFairness = false
		if err := features.ApplyTo(&serverConfig.Config, nil, nil); err != nil {
			return err
		}
		// No kube-apiserver, so no namespaces but ours: NamespaceLifecycle
		// admission against the namespaces this server serves.
		if namespaceInformers, err = standaloneNamespaces(serverConfig); err != nil {
			return err
		}
	}

	// Writes keep their body for the schema validation (sent.go); inside
	// every filter, so only for authorized requests.
	serverConfig.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
		return genericapiserver.DefaultBuildHandlerChain(withSentBodies(h), c)
	}
	serverConfig.ShutdownDelayDuration = o.ShutdownDelay
	serverConfig.ShutdownSendRetryAfter = o.ShutdownSendRetryAfter
	if err := o.Audit.ApplyTo(&serverConfig.Config); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	server, err := serverConfig.Complete().New(cfg.Name, genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}
	var namespaced []*genericregistry.Store // what a namespace holds
	for _, g := range cfg.Groups {
		info := genericapiserver.NewDefaultAPIGroupInfo(g.Name, scheme, metav1.ParameterCodec, codecs)
		for _, r := range g.Resources {
			gv := g.StorageGroupVersion(r)
			opts := storageVersionOptions{RESTOptionsGetter: serverConfig.RESTOptionsGetter, codec: StorageCodec(codecs, gv), gv: gv}
			storage, err := newStorage(r, g.Name, scheme, opts)
			if err != nil {
				return err
			}
			if r.Namespaced {
				namespaced = append(namespaced, storage[r.Plural].(*resourceREST).Store)
			}
			for _, v := range r.Versions {
				if info.VersionedResourcesStorageMap[v] == nil {
					info.VersionedResourcesStorageMap[v] = map[string]rest.Storage{}
				}
				for path, s := range storage {
					info.VersionedResourcesStorageMap[v][path] = s
				}
			}
		}
		if err := server.InstallAPIGroup(&info); err != nil {
			return fmt.Errorf("installing %s: %w", g.Name, err)
		}
	}
	if standalone {
		if err := installNamespaces(server, scheme, codecs, serverConfig.RESTOptionsGetter, namespaceInformers, namespaced); err != nil {
			return err
		}
	}

	if o.WriteKubeconfig != "" && standalone {
		path, certFile := o.WriteKubeconfig, o.SecureServing.ServerCert.CertKey.CertFile
		host := net.JoinHostPort(o.SecureServing.BindAddress.String(), strconv.Itoa(o.SecureServing.BindPort))
		server.AddPostStartHookOrDie("write-kubeconfig", func(genericapiserver.PostStartHookContext) error {
			ca, err := caFromChain(certFile)
			if err != nil {
				return err
			}
			return writeKubeconfig(path, "https://"+host, ca, token, cfg.Name)
		})
	}
	return server.PrepareRun().RunWithContext(ctx)
}

// applyDelegated configures what an aggregated apiserver takes from the
// kube-apiserver, in the order k8s.io/apiserver's RecommendedOptions does:
// authentication, authorization, the core API client and its informers,
// priority and fairness, then admission (which needs all of them).
func (o *Options) applyDelegated(c *genericapiserver.RecommendedConfig) error {
	o.completeDelegated()
	if err := o.Authentication.ApplyTo(&c.Authentication, c.SecureServing, c.OpenAPIConfig); err != nil {
		return err
	}
	if err := o.Authorization.ApplyTo(&c.Authorization); err != nil {
		return err
	}
	if err := o.CoreAPI.ApplyTo(c); err != nil {
		return fmt.Errorf("core API client (--kubeconfig): %w", err)
	}
	kubeClient, err := kubernetes.NewForConfig(c.ClientConfig)
	if err != nil {
		return err
	}
	dynamicClient, err := dynamic.NewForConfig(c.ClientConfig)
	if err != nil {
		return err
	}
	if err := o.Features.ApplyTo(&c.Config, kubeClient, c.SharedInformerFactory); err != nil {
		return err
	}
	return o.Admission.ApplyTo(&c.Config, c.SharedInformerFactory, kubeClient, dynamicClient, c.FeatureGate, c.EffectiveVersion)
}

// kubeShapedVersion reports the Kubernetes library version the server is
// built on when the binary carries no stamped version (a plain `go build`),
// so that clients such as `kubectl version` can parse /version.
type kubeShapedVersion struct {
	basecompatibility.EffectiveVersion
}

func (v kubeShapedVersion) Info() *apimachineryversion.Info {
	info := v.EffectiveVersion.Info()
	if info != nil && strings.HasPrefix(info.GitVersion, "v0.0.0-master") {
		info.GitVersion = fmt.Sprintf("v%d.%d.0", v.BinaryVersion().Major(), v.BinaryVersion().Minor())
		info.GitCommit, info.GitTreeState = "", ""
	}
	return info
}

// Main runs the apiserver command and returns the process exit code.
func Main(cfg Config) int {
	ctx := genericapiserver.SetupSignalContext()
	cmd := NewCommand(cfg)
	cmd.SetContext(ctx)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}
