package storage

import (
	"io"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apiserver/pkg/registry/generic"
)

// Codec writes objects to etcd in their storage version as protobuf,
// as kube-apiserver stores its built-in types, where the type has protobuf
// methods (zz_generated.protobuf.go), and as JSON where it has not (a kind
// generate served without protobuf). Reads take either, so data written as
// JSON before stays readable and is rewritten as protobuf on its next update
// (or by `apiserver-boot migrate storage`).
//
// Protobuf is smaller in etcd and cheaper to decode, which the watch cache
// does for every write.
func Codec(codecs serializer.CodecFactory, storage runtime.GroupVersioner) runtime.Codec {
	media := codecs.SupportedMediaTypes()
	pb, _ := runtime.SerializerInfoForMediaType(media, runtime.ContentTypeProtobuf)
	js, _ := runtime.SerializerInfoForMediaType(media, runtime.ContentTypeJSON)
	encoder := codecs.EncoderForVersion(protobufOrJSON{proto: pb.Serializer, json: js.Serializer}, storage)
	return runtime.NewCodec(encoder, codecs.UniversalDecoder())
}

// protobufOrJSON encodes as protobuf what can be, as JSON the rest.
type protobufOrJSON struct {
	proto, json runtime.Encoder
}

// protobufMessage is what the protobuf serializer needs of an object. A
// kind's own generated methods provide it; those of the TypeMeta and
// ObjectMeta (or ListMeta) it embeds are ambiguous and so not promoted,
// which leaves a kind without generated protobuf to JSON (TestCodec).
type protobufMessage interface {
	Size() int
	MarshalToSizedBuffer([]byte) (int, error)
}

func (e protobufOrJSON) Encode(obj runtime.Object, w io.Writer) error {
	if _, ok := obj.(protobufMessage); ok && e.proto != nil {
		return e.proto.Encode(obj, w)
	}
	return e.json.Encode(obj, w)
}

func (e protobufOrJSON) Identifier() runtime.Identifier {
	return "apiserver-boot-storage-protobuf-or-json"
}

// VersionOptions give a resource a codec for its own storage version
// (Codec of GroupVersion): kinds of one group may be stored in different
// versions.
type VersionOptions struct {
	generic.RESTOptionsGetter
	Codec        runtime.Codec
	GroupVersion schema.GroupVersion
}

// GetRESTOptions are the options of RESTOptionsGetter, storing in the
// resource's storage version.
func (o VersionOptions) GetRESTOptions(resource schema.GroupResource, example runtime.Object) (generic.RESTOptions, error) {
	opts, err := o.RESTOptionsGetter.GetRESTOptions(resource, example)
	if err != nil || opts.StorageConfig == nil {
		return opts, err
	}
	cfg := *opts.StorageConfig
	cfg.Codec, cfg.EncodeVersioner = o.Codec, o.GroupVersion
	opts.StorageConfig = &cfg
	return opts, nil
}
