package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
)

// OpenAPIDocuments are the OpenAPI v3 documents the server publishes at
// /openapi/v3/apis/<group>/<version>, by "<group>/<version>": built by the
// server's own configuration and handlers, read through its handler in
// process. Nothing is served and no storage is reached: the storage points
// at an address nobody answers, which the documents do not depend on.
func OpenAPIDocuments(cfg Project) (map[string][]byte, error) {
	tmp, err := os.MkdirTemp("", "apiserver-openapi-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	o := NewOptions()
	// A listener the server is given but never serves on (ApplyTo wants one).
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	defer l.Close()
	o.SecureServing.Listener = l
	o.SecureServing.BindPort = l.Addr().(*net.TCPAddr).Port
	o.SecureServing.ServerCert.CertDirectory = filepath.Join(tmp, "certs")
	o.TokenFile = filepath.Join(tmp, "token")
	o.WriteKubeconfig = ""
	o.Etcd.StorageConfig.Transport.ServerList = []string{"http://127.0.0.1:1"}
	o.Complete()
	c, err := o.Config(cfg)
	if err != nil {
		return nil, err
	}
	c.generic.RESTOptionsGetter = noStorage{c.generic.RESTOptionsGetter}
	server, err := c.New()
	if err != nil {
		return nil, err
	}
	prepared := server.PrepareRun()
	_ = prepared
	out := map[string][]byte{}
	for _, g := range cfg.Groups {
		for _, v := range g.Versions {
			path := "/openapi/v3/apis/" + g.Name + "/" + v
			rec := httptest.NewRecorder()
			req := httptest.NewRequest(http.MethodGet, path, nil)
			req.Header.Set("Accept", "application/json")
			server.Handler.Director.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				return nil, fmt.Errorf("%s: %d %s", path, rec.Code, rec.Body.String())
			}
			out[g.Name+"/"+v] = rec.Body.Bytes()
		}
	}
	return out, nil
}

// newOpenAPICommand is `apiserver openapi`: the OpenAPI v3 documents the
// server publishes, written to --output as <group>/<version>.json.
func newOpenAPICommand(cfg Project) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:     "openapi",
		Short:   "Write the OpenAPI v3 documents the server publishes, without serving",
		Example: `  apiserver openapi --output docs/api/openapi`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			klog.LogToStderr(false)
			klog.SetOutput(io.Discard)
			docs, err := OpenAPIDocuments(cfg)
			if err != nil {
				return err
			}
			for key, b := range docs {
				path := filepath.Join(output, filepath.FromSlash(key)+".json")
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(path, b, 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&output, "output", "openapi", "Folder to write <group>/<version>.json into")
	return cmd
}

// noStorage gives every resource a storage that is never reached: the
// documents are built from the installed routes and schemas alone.
type noStorage struct{ generic.RESTOptionsGetter }

func (g noStorage) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := g.RESTOptionsGetter.GetRESTOptions(resource, example)
	opts.Decorator = func(*storagebackend.ConfigForResource, string, func(runtime.Object) (string, error), func() runtime.Object, func() runtime.Object,
		storage.AttrFunc, storage.IndexerFuncs, *cache.Indexers) (storage.Interface, factory.DestroyFunc, error) {
		return unreached{}, func() {}, nil
	}
	return opts, err
}

// unreached is a storage no request reaches.
type unreached struct{ storage.Interface }

var errUnreached = errors.New("no storage: the server only builds its OpenAPI documents")

func (unreached) Stats(context.Context) (storage.Stats, error) { return storage.Stats{}, errUnreached }
func (unreached) ReadinessCheck() error                        { return errUnreached }
func (unreached) GetCurrentResourceVersion(context.Context) (uint64, error) {
	return 0, errUnreached
}
func (unreached) EnableResourceSizeEstimation(storage.KeysFunc) error { return nil }
func (unreached) CompactRevision() int64                              { return 0 }
