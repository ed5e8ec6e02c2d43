// Package boilerplate holds the license headers a project can start with;
// `init repo --license` picks one and writes it to hack/boilerplate.go.txt,
// which every generated file then begins with.
package boilerplate

import (
	"bytes"
	"embed"
	"fmt"
	"sort"
	"strings"
	"text/template"
)

//go:embed *.txt
var headers embed.FS

// Licenses lists the known --license values.
func Licenses() []string {
	entries, _ := headers.ReadDir(".")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".txt"))
	}
	sort.Strings(out)
	return out
}

// Header renders the license header for license, owner and year as a Go comment.
func Header(license, owner string, year int) ([]byte, error) {
	b, err := headers.ReadFile(license + ".txt")
	if err != nil {
		return nil, fmt.Errorf("--license %q is not known: want one of %s", license, strings.Join(Licenses(), ", "))
	}
	t, err := template.New(license).Parse(string(b))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	err = t.Execute(&buf, map[string]any{"Owner": owner, "Year": year})
	return buf.Bytes(), err
}
