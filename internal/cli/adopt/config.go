package adopt

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/deploy"
)

// Config is what build config's apiservice.yaml says of the project's
// APIServices: the Service and caBundle, and each group version's priorities.
type Config struct {
	File        string
	APIServices []*apiregv1.APIService // sorted by group, then most preferred version first
	Service     apiregv1.ServiceReference
	CABundle    []byte
	Groups      []string // sorted
}

// LoadConfig reads dir/apiservice.yaml strictly.
func LoadConfig(dir string) (*Config, error) {
	file := filepath.Join(dir, deploy.APIServiceFile)
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%s does not exist: run apiserver-boot build config first (or give its --output folder with --config)", file)
	}
	if err != nil {
		return nil, err
	}
	objs, err := deploy.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	c := &Config{File: file}
	groups := map[string]bool{}
	for _, o := range objs {
		as, ok := o.(*apiregv1.APIService)
		if !ok {
			return nil, fmt.Errorf("%s holds a %T: want APIServices only, as build config writes them", file, o)
		}
		if as.Spec.Service == nil || as.Spec.Service.Name == "" {
			return nil, fmt.Errorf("%s: the APIService %s has no spec.service: want the project's Service", file, as.Name)
		}
		if len(c.APIServices) == 0 {
			c.Service, c.CABundle = *as.Spec.Service, as.Spec.CABundle
		} else if !sameService(as.Spec.Service, &c.Service) || !bytes.Equal(as.Spec.CABundle, c.CABundle) {
			return nil, fmt.Errorf("%s: the APIService %s points at another Service or caBundle than %s: want one project's APIServices", file, as.Name, c.APIServices[0].Name)
		}
		c.APIServices = append(c.APIServices, as)
		if !groups[as.Spec.Group] {
			groups[as.Spec.Group] = true
			c.Groups = append(c.Groups, as.Spec.Group)
		}
	}
	if len(c.APIServices) == 0 {
		return nil, fmt.Errorf("%s holds no APIService: run apiserver-boot build config again", file)
	}
	sort.Strings(c.Groups)
	sort.SliceStable(c.APIServices, func(i, j int) bool {
		a, b := c.APIServices[i].Spec, c.APIServices[j].Spec
		if a.Group != b.Group {
			return a.Group < b.Group
		}
		return a.VersionPriority > b.VersionPriority
	})
	return c, nil
}

// Versions are the group's versions the project serves, most preferred first.
func (c *Config) Versions(group string) []string {
	var out []string
	for _, as := range c.APIServices {
		if as.Spec.Group == group {
			out = append(out, as.Spec.Version)
		}
	}
	return out
}

// apiService is the config's APIService of a group version, or nil.
func (c *Config) apiService(group, version string) *apiregv1.APIService {
	for _, as := range c.APIServices {
		if as.Spec.Group == group && as.Spec.Version == version {
			return as
		}
	}
	return nil
}

func sameService(a, b *apiregv1.ServiceReference) bool {
	return a != nil && b != nil && a.Namespace == b.Namespace && a.Name == b.Name
}
