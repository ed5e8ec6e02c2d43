package generators

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestLibraryErrorsNameTheField: an error a library generator returns
// naming a field as openapi-gen does ("member (X) of (<package>.<Type>)"),
// or a type, gets the file:line the project declares it at; one naming a
// file:line already is kept as it is.
func TestLibraryErrorsNameTheField(t *testing.T) {
	root, _ := filepath.Abs("testdata/api")
	api := testAPI(t, root)
	for _, tc := range []struct{ msg, want string }{
		{"openapi: failed executing generator: Tags in comment and struct should match for member (Count) of (example.com/shop/pkg/apis/shop/v1.WidgetSpec)",
			"(at pkg/apis/shop/v1/widget_types.go:39:2: WidgetSpec.Count)"},
		{"openapi: failed to generate default in example.com/shop/pkg/apis/shop/v1.WidgetSpec: Ratio: failed to unmarshal default: invalid character",
			"(at pkg/apis/shop/v1/widget_types.go:47:2: WidgetSpec.Ratio)"},
		{"openapi: cannot describe example.com/shop/pkg/apis/shop/v1.WidgetSpec", "(declared at pkg/apis/shop/v1/widget_types.go:27:6: WidgetSpec)"},
		{"pkg/apis/shop/v1/widget_types.go:39: something", "pkg/apis/shop/v1/widget_types.go:39: something"},
	} {
		base := errors.New(tc.msg)
		err := located(api.API, base)
		if !strings.Contains(err.Error(), tc.want) || !errors.Is(err, base) {
			t.Errorf("%s: want %q in %q", tc.msg, tc.want, err)
		}
	}
}
