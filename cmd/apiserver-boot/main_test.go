package main

import (
	"os"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators"
)

// TestMain makes the in-process commands load packages as the shipped binary
// does: through the bodyless packages driver, served by this test binary.
func TestMain(m *testing.M) {
	generators.ServePackagesDriver()
	generators.EnablePackagesDriver()
	os.Exit(m.Run())
}
