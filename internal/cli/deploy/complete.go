package deploy

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/apiserver-boot/apiserver-boot/internal/cli/image"
)

// Complete fills in what was not given, for the project at root (the
// module of o.Project): the name from the module's last element, the
// namespace <name>-system, the etcd image of the etcd version in go.mod;
// then it checks the whole (Validate).
func (o *Options) Complete(root string) error {
	if o.Name == "" {
		o.Name = filepath.Base(o.Project.Module)
		if errs := validation.IsDNS1035Label(o.Name); len(errs) > 0 {
			return fmt.Errorf("--name is required: the module's last element %q is not a valid name (want a lowercase DNS label such as crontab)", o.Name)
		}
	}
	if o.Namespace == "" {
		o.Namespace = o.Name + "-system"
	}
	if len(o.EtcdServers) == 0 && o.DatastoreSecret == "" && o.EtcdImage == "" {
		goMod, err := os.ReadFile(filepath.Join(root, "go.mod"))
		if err != nil {
			return err
		}
		if o.EtcdImage, err = EtcdImageFor(goMod); err != nil {
			return err
		}
	}
	if o.EtcdImage != "" {
		if _, err := image.ParseReference("--etcd-image", o.EtcdImage); err != nil {
			return err
		}
	}
	return o.Validate()
}
