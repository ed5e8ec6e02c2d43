package main

import (
	"os"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/driver"
)

// TestMain makes the in-process commands load packages as the shipped binary
// does: through the bodyless packages driver, served by this test binary.
func TestMain(m *testing.M) {
	driver.ServePackagesDriver()
	driver.EnablePackagesDriver()
	os.Exit(m.Run())
}
