// Package kubeconfig guards the kubeconfig files apiserver-boot writes.
package kubeconfig

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
)

// Replaceable refuses a path holding anything but a kubeconfig whose
// current context is context (one apiserver-boot wrote for this project):
// flag names the option the path came from. A missing file is replaceable.
func Replaceable(flag, path, context string) error {
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("%s %s: %w", flag, path, err)
	}
	existing, err := clientcmd.LoadFromFile(path)
	if err != nil {
		return fmt.Errorf("%s %s exists and is not a kubeconfig (%v): it is left as it is; choose another path", flag, path, err)
	}
	if existing.CurrentContext != context {
		return fmt.Errorf("%s %s is not this project's (its current context is %q, not %q): it is left as it is; choose another path", flag, path, existing.CurrentContext, context)
	}
	return nil
}
