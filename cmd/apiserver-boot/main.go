// Command apiserver-boot scaffolds, generates, builds and runs Kubernetes
// extension apiservers.
package main

import (
	"fmt"
	"os"
)

func main() {
	if err := newRootCommand().Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}
