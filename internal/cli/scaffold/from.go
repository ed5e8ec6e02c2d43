package scaffold

import (
	"fmt"
	"strings"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/project"
)

// FromResource is the kind of group that create version copies, in
// version from (--from), or an error saying which versions serve it.
func FromResource(p *project.Project, group, from, kind string) (*project.Resource, error) {
	if r := p.Find(group, from, kind); r != nil {
		return r, nil
	}
	var served []string
	for _, r := range p.Resources {
		if r.Group == group && r.Kind == kind && !r.External {
			served = append(served, r.Version)
		}
	}
	if len(served) > 0 {
		return nil, fmt.Errorf("--from %s: no kind %s in %s/%s in PROJECT; %s is served in %s: give one of them with --from", from, kind, group, from, kind, strings.Join(served, ", "))
	}
	return nil, fmt.Errorf("--from %s: no kind %s in %s/%s in PROJECT%s", from, kind, group, from, p.Suggest(group, "", kind))
}
