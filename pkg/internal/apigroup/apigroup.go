// Package apigroup reads the API groups generated code describes
// (builders.APIGroup) for the apiserver and the conformance tests.
package apigroup

import (
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
)

// Versions returns the group's versions as GroupVersions, most preferred first.
func Versions(g *builders.APIGroup) []schema.GroupVersion {
	out := make([]schema.GroupVersion, 0, len(g.Versions))
	for _, v := range g.Versions {
		out = append(out, schema.GroupVersion{Group: g.Name, Version: v})
	}
	return out
}

// StorageVersion is the group version r of g is encoded in in etcd: its
// own storage version, else the group's.
func StorageVersion(g *builders.APIGroup, r *builders.Resource) schema.GroupVersion {
	if r.StorageVersion != "" {
		return schema.GroupVersion{Group: g.Name, Version: r.StorageVersion}
	}
	return schema.GroupVersion{Group: g.Name, Version: g.StorageVersion}
}
