package runlocal

import (
	"slices"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// TestReadyBanner: run local suggests a get of a kind the standalone
// apiserver serves, not of a built-in kind that only has a controller here
// (PROJECT sorts apps before stable), and names the controllers that do not
// run against it.
func TestReadyBanner(t *testing.T) {
	p := &project.Project{Resources: []*project.Resource{
		{KindDescriptor: project.KindDescriptor{Group: "apps", Version: "v1", Kind: "Deployment", Plural: "deployments"}, Controller: true, External: true, Package: "k8s.io/api/apps/v1"},
		{KindDescriptor: project.KindDescriptor{Group: "core", Version: "v1", Kind: "Pod", Plural: "pods"}, Controller: true, External: true, Package: "k8s.io/api/core/v1"},
		{KindDescriptor: project.KindDescriptor{Group: "stable", Version: "v1", Kind: "CronTab", Plural: "crontabs"}, Controller: true},
	}}
	if got := readyExample(p); got != "get crontabs" {
		t.Errorf("suggested kubectl %s, want get crontabs", got)
	}
	want := []string{
		"controller deployment for apps/v1 Deployment cannot run against the standalone apiserver of run local: it serves only the project's kinds (and namespaces); it runs when aggregated in a cluster",
		"controller pod for v1 Pod cannot run against the standalone apiserver of run local: it serves only the project's kinds (and namespaces); it runs when aggregated in a cluster",
	}
	if got := notRunLocally(p); !slices.Equal(got, want) {
		t.Errorf("not run locally:\n%q\nwant\n%q", got, want)
	}
	if got := readyExample(&project.Project{Resources: p.Resources[:2]}); got != "api-resources" {
		t.Errorf("with built-in kinds only: kubectl %s, want api-resources", got)
	}
}
