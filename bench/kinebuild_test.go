package main

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoKineOverlay: pkg/apiserver built through the overlay of item 10
// (pkg/internal/storage's kine files replaced) compiles and depends on no
// package of kine or its SQL drivers.
func TestNoKineOverlay(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles pkg/apiserver")
	}
	pkgDir, err := filepath.Abs(filepath.Join("..", "pkg", "internal", "storage"))
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{ctx: context.Background(), tmp: t.TempDir()}
	overlay, err := b.noKineOverlay(pkgDir)
	if err != nil {
		t.Fatal(err)
	}
	deps, err := exec.Command("go", "list", "-overlay", overlay, "-deps", "../pkg/apiserver").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, deps)
	}
	for _, dep := range []string{"github.com/k3s-io/kine", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/go-sql-driver/mysql"} {
		if strings.Contains(string(deps), dep) {
			t.Errorf("pkg/apiserver without kine still depends on %s", dep)
		}
	}
	if !strings.Contains(string(deps), "github.com/apiserver-boot/apiserver-boot/pkg/apiserver") {
		t.Errorf("go list -deps does not list pkg/apiserver:\n%s", deps)
	}
	if out, err := exec.Command("go", "build", "-overlay", overlay, "../pkg/apiserver").CombinedOutput(); err != nil {
		t.Fatalf("pkg/apiserver without kine does not build: %v\n%s", err, out)
	}
}
