// Package storage opens the storage backend a generated apiserver keeps
// its objects in, as an etcd the apiserver's etcd3 storage connects to:
// an etcd cluster (--etcd-servers), the etcd started in this process
// (EmbeddedEtcd, the default), or SQL through kine started in this process
// (SQL, --datastore-endpoint). Open starts the backend for both the server
// and `apiserver copy-storage` (NewCopyCommand), which copies every key from
// one backend to another; Codec and VersionOptions are how objects are
// encoded in it. "Backend" is this package's word for where objects are
// stored; the flags keep their names (--datastore-endpoint, --etcd-servers,
// --embedded-etcd-data-dir).
package storage

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/adoption"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/datastore"
)

// Backend names one storage backend: SQL through kine when SQL's Endpoint
// is set, else the etcd cluster of Etcd.Servers when given, else the
// embedded etcd.
type Backend struct {
	// SQL is --datastore-endpoint's backend; nil or without Endpoint, etcd.
	SQL *SQL
	// Etcd is an etcd cluster the apiserver connects to, with its TLS files.
	Etcd Etcd
	// Embedded is the etcd started in this process when neither SQL nor
	// Etcd.Servers is given.
	Embedded *EmbeddedEtcd
	// EmbeddedCertDir is where the embedded etcd's certificates are made
	// (kept while valid).
	EmbeddedCertDir string
}

// Etcd is an etcd the apiserver connects to: its client URLs, and the TLS
// files of its client (empty for plain connections).
type Etcd struct {
	Servers                   []string
	CAFile, CertFile, KeyFile string
}

// Open starts what the backend needs in this process (kine on the SQL
// database, or the embedded etcd) and returns the etcd to connect to and the
// function that stops what was started. An etcd cluster is returned as
// given, with nothing to stop. SQL and an etcd cluster both given is
// datastore.ErrBothStores. Every failure is returned before anything serves.
func Open(ctx context.Context, b Backend) (Etcd, func(), error) {
	if b.SQL != nil && b.SQL.Endpoint != "" {
		if len(b.Etcd.Servers) > 0 {
			return Etcd{}, nil, datastore.ErrBothStores(b.SQL.Endpoint)
		}
		k, err := b.SQL.startKine(ctx)
		if err != nil {
			return Etcd{}, nil, err
		}
		return Etcd{Servers: []string{k.Endpoint}}, k.Stop, nil
	}
	if len(b.Etcd.Servers) > 0 {
		return b.Etcd, func() {}, nil
	}
	e, url, pki, err := b.Embedded.start(b.EmbeddedCertDir)
	if err != nil {
		return Etcd{}, nil, err
	}
	return Etcd{Servers: []string{url}, CAFile: pki.CA, CertFile: pki.ClientCert, KeyFile: pki.ClientKey}, e.Close, nil
}

// NewSQL returns the defaults of SQL through kine, for the server and
// copy-storage alike: a 10s connect timeout, kine's CompactMinRetain of
// 1000 revisions, one replica.
func NewSQL() SQL {
	return SQL{ConnectTimeout: 10 * time.Second, CompactMinRetain: 1000, Replicas: 1}
}

// readEndpointFile reads the endpoint from the file of --<flag> (a mounted
// Secret), whose password is then in no command line: its one line, trimmed.
func readEndpointFile(flag, path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--%s: %w", flag, err)
	}
	endpoint := strings.TrimSpace(string(b))
	if endpoint == "" {
		return "", fmt.Errorf("--%s %s is empty: want one line, %s", flag, path, datastore.Forms)
	}
	return endpoint, nil
}

// AdoptionFloors is where the adoption API (pkg/internal/adoption) keeps,
// under the apiserver's etcd prefix, each resource's floor: a revision of
// this store, below which a LIST or WATCH of the resource answers 410 Gone.
// It is outside every resource's keys (<prefix>/<group>/<resource>/).
func AdoptionFloors(prefix string) string {
	return strings.TrimSuffix(prefix, "/") + "/" + adoption.Group + "/floors/"
}
