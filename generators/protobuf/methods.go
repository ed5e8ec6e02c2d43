package protobuf

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"k8s.io/gengo/v2/types"
)

// MethodNames are the methods the encoding declares on a struct of the
// package under their usual names: the names k8s.io/apimachinery's protobuf
// serializer calls on an object, and Kubernetes' own types declare.
var MethodNames = []string{"Marshal", "MarshalTo", "MarshalToSizedBuffer", "Size", "Unmarshal", "Reset"}

// methodSet names the three methods through which a struct's encoding is
// sized, written and read, on the struct itself and by the structs holding it.
type methodSet struct {
	Size, MarshalToSizedBuffer, Unmarshal string
	// Own: the struct declares a field or method of one of MethodNames, so
	// its methods have names of their own and only these three are
	// declared. Only the generated code of the package calls them.
	Own bool
}

var (
	usualMethods = methodSet{Size: "Size", MarshalToSizedBuffer: "MarshalToSizedBuffer", Unmarshal: "Unmarshal"}
	ownMethods   = methodSet{Size: "zzProtoSize", MarshalToSizedBuffer: "zzProtoMarshalToSizedBuffer", Unmarshal: "zzProtoUnmarshal", Own: true}
)

// clash returns the first field or hand-written method of t named like one
// of MethodNames ("" if none): Go cannot declare the generated method beside it.
func clash(t *types.Type) (name string, field bool) {
	for _, m := range t.Members {
		if slices.Contains(MethodNames, m.Name) {
			return m.Name, true
		}
	}
	for _, n := range MethodNames {
		if _, ok := t.Methods[n]; ok {
			return n, false
		}
	}
	return "", false
}

// methodsOf names the encoding methods of t: a struct of the package that
// declares a field or method named like one of them (a field Size, as
// Kubernetes' own types never have but other APIs do) gets names of its own,
// so that it is served as it is declared. Kubernetes' types keep theirs.
func (g *protoGen) methodsOf(t *types.Type) methodSet {
	if t.Name.Package != g.pkg {
		return usualMethods
	}
	if name, _ := clash(t); name != "" {
		return ownMethods
	}
	return usualMethods
}

// rootClash is a field or method of an object type (a kind, its list, a
// subresource request) named like a method the protobuf serializer calls on
// it: the kind is served as JSON, or generate stops if it was protobuf.
type rootClash struct {
	msg string
	// rename is what to do to keep protobuf.
	rename string
}

func (e *rootClash) Error() string { return e.msg }

// checkRoot refuses an object type whose field or method takes the name of a
// method the serializer calls on it.
func (g *protoGen) checkRoot(t *types.Type) error {
	if !g.roots[t.Name.Name] {
		return nil
	}
	name, field := clash(t)
	if name == "" {
		return nil
	}
	what, where, rename := "field", g.pos(t.Name.Name, name), "Rename the Go field and keep its json tag: the wire name and the stored objects are unchanged"
	if !field {
		rename = "Rename the method"
		what, where = "method", t.Name.Name
		if pos, ok := g.v.Methods(t.Name.Name)[name]; ok {
			rel, _ := filepath.Rel(g.root, pos.Filename)
			where = fmt.Sprintf("%s:%d", rel, pos.Line)
		}
	}
	return &rootClash{fmt.Sprintf("%s: %s %s.%s is named like the protobuf method %s that the apiserver's protobuf serializer calls on the object %s", where, what, t.Name.Name, name, name, t.Name.Name), rename}
}

// roots are the object types of the units (a kind and its list, a request type).
func roots(units [][]string) map[string]bool {
	out := map[string]bool{}
	for _, unit := range units {
		for _, name := range unit {
			out[name] = true
		}
	}
	return out
}

// keepProtobuf says how a kind that must keep protobuf can, after err.
func keepProtobuf(err error) string {
	var root *rootClash
	if errors.As(err, &root) {
		return root.rename
	}
	return "Give the field a type the encoding carries (scalars, strings, []byte, structs of this package, slices and pointers of these, maps with scalar keys, Kubernetes types with protobuf methods)"
}
