// Package apiserver is what a generated project's cmd/apiserver/main.go
// calls: Main serves the project's API groups as an extension apiserver
// (k8s.io/apiserver's generic server), storing in etcd (embedded unless
// --etcd-servers is given) or in SQL through kine (--datastore-endpoint),
// secured either standalone (self-signed TLS and a bearer token, for
// `apiserver-boot run local`) or by delegating authentication and
// authorization to a kube-apiserver when aggregated. The flags, the
// subcommands (copy-storage, openapi) and their behaviour are documented in
// docs/storage.md, docs/deploy.md and `apiserver --help`.
//
// Main and Config are this package's whole API, the one generated code
// calls, kept compatible as docs/releasing.md's policy says: an
// incompatible change comes only in a new minor while the major version is
// 0, in a new major from v1 on.
package apiserver

import (
	openapicommon "k8s.io/kube-openapi/pkg/common"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/server"
)

// Config is what a generated cmd/apiserver/main.go hands to Main: the
// project's name, API groups and OpenAPI definitions.
type Config struct {
	// Name names the server in logs, OpenAPI and the kubeconfig it writes.
	Name string
	// Groups are the API groups to serve (generated: apis.Groups()).
	Groups []*builders.APIGroup
	// OpenAPIDefinitions are the generated OpenAPI definitions.
	OpenAPIDefinitions openapicommon.GetOpenAPIDefinitions
}

// Main runs the apiserver command of a generated project with the process's
// arguments: it serves cfg's groups until SIGTERM or SIGINT (the subcommands
// copy-storage and openapi do their job and return), and returns the
// process exit code: 0, or 1 after printing the error to standard error.
func Main(cfg Config) int {
	return server.Main(server.Project(cfg))
}
