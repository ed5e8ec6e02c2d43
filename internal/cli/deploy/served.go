package deploy

import "github.com/apiserver-boot/apiserver-boot/generators/model"

// ServedAPI reads, from the project's API as its source declares it (the
// markers), the versions the apiserver serves per group, in the
// order its discovery prefers them (+versionPriority, then Kubernetes version
// order v2 > v1 > v1beta1), and the kinds with their plurals and subresources.
func ServedAPI(api *model.API) (map[string][]string, []Kind) {
	out := map[string][]string{}
	var kinds []Kind
	for _, g := range api.Groups {
		for _, v := range g.Versions {
			if len(v.Kinds) > 0 {
				out[g.FullName] = append(out[g.FullName], v.Name)
			}
		}
		for _, k := range g.Kinds {
			kinds = append(kinds, Kind{KindDescriptor: k.KindDescriptor, FullGroup: g.FullName, Status: k.StatusSubresource, Scale: k.Scale != nil})
		}
	}
	return out, kinds
}
