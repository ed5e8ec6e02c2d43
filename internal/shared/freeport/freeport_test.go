package freeport

import "testing"

// TestPortsAreNeverRepeated: one closed probe's port is often the next one
// the kernel hands out; a port must not be given twice.
func TestPortsAreNeverRepeated(t *testing.T) {
	seen := map[int]bool{}
	for range 300 {
		p, err := Port()
		if err != nil {
			t.Fatal(err)
		}
		if seen[p] {
			t.Fatalf("port %d given twice", p)
		}
		seen[p] = true
	}
	ports, err := Ports(3)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		if seen[p] {
			t.Fatalf("port %d given twice", p)
		}
		seen[p] = true
	}
}
