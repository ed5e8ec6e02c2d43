package project

import (
	"sort"

	"k8s.io/apimachinery/pkg/version"
)

// MorePreferred tells whether API version a is preferred over b.
func MorePreferred(a, b string) bool {
	return version.CompareKubeAwareVersionStrings(a, b) > 0
}

// SortVersions orders API versions the way Kubernetes prefers them, most
// preferred first: GA before beta before alpha, higher numbers first
// (v2, v1, v1beta2, v1beta1, v1alpha1). Generators order a group's versions
// with it, and so does `build config` for the APIServices' priorities.
func SortVersions(versions []string) {
	sort.SliceStable(versions, func(i, j int) bool {
		return MorePreferred(versions[i], versions[j])
	})
}

// ServedVersions returns, per full API group name (<group>.<domain>), the
// versions the project's own resources are served in (built-in kinds that only
// have a controller here are left out), most preferred first.
func (p *Project) ServedVersions() map[string][]string {
	seen := map[string]map[string]bool{}
	for _, r := range p.Resources {
		if r.External {
			continue
		}
		g := p.FullGroup(r.Group)
		if seen[g] == nil {
			seen[g] = map[string]bool{}
		}
		seen[g][r.Version] = true
	}
	out := map[string][]string{}
	for g, vs := range seen {
		for v := range vs {
			out[g] = append(out[g], v)
		}
		SortVersions(out[g])
	}
	return out
}
