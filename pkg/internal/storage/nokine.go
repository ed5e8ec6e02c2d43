//go:build apiserverboot_nokine

package storage

import (
	"context"
	"fmt"
)

// builtWithKine refuses an endpoint in a build without kine (the build tag
// apiserverboot_nokine, which run local sets when it stores in etcd: its
// rebuilds link about a tenth less). The flags stay, so that the same
// command line is read the same way, and --datastore-endpoint
// (copy-storage's --from- and --to-datastore-endpoint) is refused by name
// when the options are checked, before anything starts, saying how to
// build with kine.
func (o *SQL) builtWithKine() error {
	flag := o.flag
	switch {
	case flag != "":
	case o.EndpointFile != "":
		flag = "datastore-endpoint-file"
	default:
		flag = "datastore-endpoint"
	}
	return fmt.Errorf("--%s: this apiserver was built by run local without SQL storage (kine), as it builds when it stores in etcd: "+
		"build it with kine (go build -o bin/apiserver ./cmd/apiserver), or use run local --datastore-endpoint, or the image of build container", flag)
}

// startKine is never reached in a build without kine: Validate refuses
// the endpoint first.
func (o *SQL) startKine(context.Context) (*kine, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return nil, o.builtWithKine()
}
