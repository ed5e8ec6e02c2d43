package main

import (
	"os"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/generators/driver"
)

// TestMain makes the in-process commands load packages as the shipped binary
// does: through the bodyless packages driver, served by this test binary.
// With APISERVER_BOOT_TEST_MAIN=1 the test binary is apiserver-boot itself
// (for tests running it as a program, such as the scaffolded Makefile's).
func TestMain(m *testing.M) {
	driver.ServePackagesDriver()
	driver.EnablePackagesDriver()
	if os.Getenv("APISERVER_BOOT_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}
