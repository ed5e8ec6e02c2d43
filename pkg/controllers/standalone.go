package controllers

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// groupVersionResources is the part of client-go's discovery client that
// runnable reads.
type groupVersionResources interface {
	ServerResourcesForGroupVersion(groupVersion string) (*metav1.APIResourceList, error)
}

// runnable returns the controllers to run. Against a standalone apiserver
// (one that does not serve Kubernetes' core API: no pods, as `run local`'s,
// which serves the project's kinds and namespaces), the controllers of a
// kind it does not serve (a built-in kind such as apps/v1 Deployment) are
// left out, saying so once each: their informers would list it in vain for
// ever. Against a kube-apiserver every controller runs (an aggregated API
// may become available after the start), and so does every controller when
// discovery fails.
func runnable(disc groupVersionResources, controllers []Controller) []Controller {
	core, err := disc.ServerResourcesForGroupVersion("v1")
	if err != nil && !apierrors.IsNotFound(err) {
		klog.InfoS("Discovery failed: every controller runs", "err", err)
		return controllers
	}
	if served(core, "pods") {
		return controllers // a kube-apiserver
	}
	lists := map[string]*metav1.APIResourceList{}
	var out []Controller
	for _, c := range controllers {
		w, ok := c.(watchesKind)
		if !ok {
			out = append(out, c)
			continue
		}
		r, ok := w.Watches()
		if !ok {
			out = append(out, c)
			continue
		}
		gv := r.GroupVersion().String()
		list, seen := lists[gv]
		if !seen {
			list, err = disc.ServerResourcesForGroupVersion(gv)
			if err != nil && !apierrors.IsNotFound(err) {
				klog.InfoS("Discovery failed: the controller runs", "controller", c.Name(), "groupVersion", gv, "err", err)
				out = append(out, c)
				continue
			}
			lists[gv] = list
		}
		if served(list, r.Resource) {
			out = append(out, c)
			continue
		}
		klog.Warning(project.NotServedStandalone(c.Name(), r.GroupVersion().String(), r.Kind))
	}
	return out
}

func served(list *metav1.APIResourceList, resource string) bool {
	if list == nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == resource {
			return true
		}
	}
	return false
}
