// Package apiserverboot embeds the framework's own go.mod and go.sum, so a
// generated project can pin exactly the dependency versions this apiserver-boot
// was built and tested with.
package apiserverboot

import _ "embed"

// GoMod is the framework's go.mod.
//
//go:embed go.mod
var GoMod []byte

// GoSum is the framework's go.sum.
//
//go:embed go.sum
var GoSum []byte
