// Command apiserver-boot scaffolds, generates, builds and runs Kubernetes
// extension apiservers.
package main

import (
	"fmt"
	"os"

	"github.com/apiserver-boot/apiserver-boot/generators/driver"
)

func main() {
	// generate starts this binary again as its go/packages driver.
	driver.ServePackagesDriver()
	driver.EnablePackagesDriver()
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
