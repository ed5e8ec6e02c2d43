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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	basecompatibility "k8s.io/component-base/compatibility"
	baseversion "k8s.io/component-base/version"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	netutils "k8s.io/utils/net"

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
	// Delegated authentication and authorization, used when aggregated behind kube-apiserver.
	Authentication *genericoptions.DelegatingAuthenticationOptions
	Authorization  *genericoptions.DelegatingAuthorizationOptions
	DelegatedAuth  bool
	// Standalone authentication.
	TokenFile       string
	WriteKubeconfig string
}

// NewOptions returns defaults fit for a developer machine: loopback only,
// state kept under .apiserver-boot/ in the working directory.
func NewOptions() *Options {
	o := &Options{
		SecureServing:  genericoptions.NewSecureServingOptions().WithLoopback(),
		Etcd:           genericoptions.NewEtcdOptions(storagebackend.NewDefaultConfig("/registry", nil)),
		EmbeddedEtcd:   EmbeddedEtcdOptions{DataDir: filepath.Join(".apiserver-boot", "etcd")},
		Authentication: genericoptions.NewDelegatingAuthenticationOptions(),
		Authorization:  genericoptions.NewDelegatingAuthorizationOptions(),
		TokenFile:      filepath.Join(".apiserver-boot", "token"),
	}
	o.SecureServing.BindAddress = netutils.ParseIPSloppy("127.0.0.1")
	o.SecureServing.BindPort = 9443
	o.SecureServing.ServerCert.CertDirectory = filepath.Join(".apiserver-boot", "certs")
	o.SecureServing.ServerCert.PairName = "apiserver"
	return o
}

// AddFlags registers every option on fs.
func (o *Options) AddFlags(fs *cobra.Command) {
	flags := fs.Flags()
	o.SecureServing.AddFlags(flags)
	o.Etcd.AddFlags(flags)
	o.EmbeddedEtcd.AddFlags(flags)
	o.Authentication.AddFlags(flags)
	o.Authorization.AddFlags(flags)
	flags.BoolVar(&o.DelegatedAuth, "delegated-auth", o.DelegatedAuth,
		"Authenticate and authorize through the kube-apiserver (TokenReview, SubjectAccessReview, front-proxy headers), as an aggregated apiserver does. Implied by --authentication-kubeconfig.")
	flags.StringVar(&o.TokenFile, "token-file", o.TokenFile,
		"Standalone mode: file holding the bearer token clients must present; a random token is written there if it does not exist.")
	flags.StringVar(&o.WriteKubeconfig, "write-kubeconfig", o.WriteKubeconfig,
		"Standalone mode: once serving, write a kubeconfig for this server (CA and token) to this path.")
}

func (o *Options) delegated() bool {
	return o.DelegatedAuth || o.Authentication.RemoteKubeConfigFile != ""
}

// Validate checks the options before anything is started.
func (o *Options) Validate() error {
	var errs []error
	errs = append(errs, o.SecureServing.Validate()...)
	if o.delegated() {
		errs = append(errs, o.Authentication.Validate()...)
		errs = append(errs, o.Authorization.Validate()...)
	} else if o.TokenFile == "" {
		errs = append(errs, errors.New("--token-file must be set unless --delegated-auth is used"))
	}
	return utilerrors.NewAggregate(errs)
}

// NewCommand returns the apiserver command of a generated project.
func NewCommand(cfg Config) *cobra.Command {
	o := NewOptions()
	cmd := &cobra.Command{
		Use:   "apiserver",
		Short: fmt.Sprintf("Serve the %s API", cfg.Name),
		Example: `  # standalone on an embedded etcd, writing a kubeconfig for kubectl
  apiserver --write-kubeconfig kubeconfig
  # on an external etcd
  apiserver --etcd-servers http://127.0.0.1:2379`,
		SilenceUsage: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.Validate(); err != nil {
				return err
			}
			return Run(cmd.Context(), cfg, o)
		},
	}
	o.AddFlags(cmd)
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
	codecs := serializer.NewCodecFactory(scheme)

	var storageVersions []schema.GroupVersion
	for _, g := range cfg.Groups {
		storageVersions = append(storageVersions, schema.GroupVersion{Group: g.Name, Version: g.StorageVersion})
	}
	o.Etcd.StorageConfig.Codec = codecs.LegacyCodec(storageVersions...)

	if len(o.Etcd.StorageConfig.Transport.ServerList) == 0 {
		etcd, url, err := o.EmbeddedEtcd.Start()
		if err != nil {
			return err
		}
		defer etcd.Close()
		o.Etcd.StorageConfig.Transport.ServerList = []string{url}
	}
	if errs := o.Etcd.Validate(); len(errs) > 0 {
		return utilerrors.NewAggregate(errs)
	}

	serverConfig := genericapiserver.NewRecommendedConfig(codecs)
	serverConfig.EffectiveVersion = kubeShapedVersion{basecompatibility.NewEffectiveVersionFromString(baseversion.DefaultKubeBinaryVersion, "", "")}
	serverConfig.FeatureGate = utilfeature.DefaultFeatureGate
	namer := openapi.NewDefinitionNamer(scheme)
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(cfg.OpenAPIDefinitions, namer)
	serverConfig.OpenAPIConfig.Info.Title = cfg.Name
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(cfg.OpenAPIDefinitions, namer)
	serverConfig.OpenAPIV3Config.Info.Title = cfg.Name

	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return fmt.Errorf("creating self-signed certificates in --cert-dir: %w", err)
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
	if o.delegated() {
		if err := o.Authentication.ApplyTo(&serverConfig.Authentication, serverConfig.SecureServing, serverConfig.OpenAPIConfig); err != nil {
			return err
		}
		if err := o.Authorization.ApplyTo(&serverConfig.Authorization); err != nil {
			return err
		}
	} else {
		if token, err = loadOrCreateToken(o.TokenFile); err != nil {
			return err
		}
		serverConfig.Authentication.Authenticator = standaloneAuthenticator(token)
		serverConfig.Authorization.Authorizer = standaloneAuthorizer()
	}

	server, err := serverConfig.Complete().New(cfg.Name, genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}
	for _, g := range cfg.Groups {
		info := genericapiserver.NewDefaultAPIGroupInfo(g.Name, scheme, metav1.ParameterCodec, codecs)
		for _, r := range g.Resources {
			storage, err := newStorage(r, g.Name, scheme, serverConfig.RESTOptionsGetter)
			if err != nil {
				return err
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

	if o.WriteKubeconfig != "" && !o.delegated() {
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
