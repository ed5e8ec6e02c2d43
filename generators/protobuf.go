package generators

import (
	"k8s.io/gengo/v2/generator"

	"github.com/apiserver-boot/apiserver-boot/generators/protobuf"
	"github.com/apiserver-boot/apiserver-boot/internal/shared/files"
)

// protobufMethods runs package protobuf, and keeps what it settled (field
// numbers, whether every kind speaks protobuf) for compatibility and the
// clients.
type protobufMethods struct{}

func (protobufMethods) Name() string                 { return "protobuf" }
func (protobufMethods) Packages(api *State) []string { return nil }

func (protobufMethods) Generate(api *State, c *generator.Context) ([]files.File, error) {
	published, err := publishedKinds(api.Root)
	if err != nil {
		return nil, err
	}
	res, err := protobuf.Generate(api.API, c, protobuf.Options{Renumber: api.Renumber, Published: published})
	if err != nil {
		return nil, err
	}
	api.protobuf = res
	return res.Files, nil
}
