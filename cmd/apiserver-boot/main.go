// Command apiserver-boot scaffolds, generates, builds and runs Kubernetes
// extension apiservers.
package main

import (
	"fmt"
	"os"

	"github.com/apiserver-boot/apiserver-boot/generators"
)

func main() {
	// generate starts this binary again as its go/packages driver.
	generators.ServePackagesDriver()
	generators.EnablePackagesDriver()
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
