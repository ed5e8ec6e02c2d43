package project

import (
	"fmt"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/kubernetes/scheme"
)

var builtin = sync.OnceValue(func() map[string]map[string]string {
	out := map[string]map[string]string{}
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version == "__internal" || strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") {
			continue
		}
		if out[gvk.Group] == nil {
			out[gvk.Group] = map[string]string{}
		}
		plural, singular := meta.UnsafeGuessKindToResource(gvk)
		out[gvk.Group][strings.ToLower(gvk.Kind)] = "kind"
		out[gvk.Group][plural.Resource] = "plural"
		out[gvk.Group][singular.Resource] = "singular"
	}
	return out
})

// builtinNames returns the names of the built-in resources of a group (from
// client-go's scheme), for groups such as networking.k8s.io.
func builtinNames(group string) map[string]string { return builtin()[group] }

// BuiltinKind finds a built-in Kubernetes kind by the k8s.io/api package
// name of its group (apps, batch, core, networking...), version and kind, and
// returns its full group name and Go package.
func BuiltinKind(group, version, kind string) (fullGroup, pkg string, ok bool) {
	for gvk, t := range scheme.Scheme.AllKnownTypes() {
		if gvk.Version != version || gvk.Kind != kind || !strings.HasPrefix(t.PkgPath(), "k8s.io/api/") {
			continue
		}
		if strings.TrimPrefix(t.PkgPath(), "k8s.io/api/") == group+"/"+version {
			return gvk.Group, t.PkgPath(), true
		}
	}
	return "", "", false
}

// NotServedStandalone is what run local and the controller-manager say of
// the controller named controller, of a kind (such as apps/v1 Deployment)
// that the standalone apiserver of run local does not serve.
func NotServedStandalone(controller, groupVersion, kind string) string {
	return fmt.Sprintf("controller %s for %s %s cannot run against the standalone apiserver of run local: it serves only the project's kinds (and namespaces); it runs when aggregated in a cluster", controller, groupVersion, kind)
}
