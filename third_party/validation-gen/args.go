// Package validationgen is k8s.io/code-generator's validation-gen
// (cmd/validation-gen, a main package upstream) carried as a library, so
// that generate runs it over the universe it loads once for every
// generator. The upstream files are copied unchanged but for what
// copy_test.go's transform records; this file and reinit.go are the
// project's.
package validationgen

import "k8s.io/code-generator/pkg/apidefinitions"

// Args are validation-gen's arguments (its main.go's Args).
type Args struct {
	OutputFile   string
	ReadOnlyPkgs []string // Always consider these as last-ditch possibilities for validations.
	GoHeaderFile string
	// TestOutputRoot, TestOutputFilePrefix and TestAllowlist configure the
	// coverage test fixtures (empty: none).
	TestOutputRoot       string
	TestOutputFilePrefix string
	TestAllowlist        string

	apidefinitions.LintArgs
}
