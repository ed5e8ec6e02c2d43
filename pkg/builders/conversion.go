package builders

import (
	"fmt"
	"strings"
)

// UnconvertedFields is what a conversion stub written by `apiserver-boot
// generate` returns until its fields are converted by hand: an error naming
// the function and the fields, so that a version whose fields differ never
// drops data silently (requests through it and the round-trip test fail).
// generate warns about every function still returning it.
func UnconvertedFields(function string, fields ...string) error {
	return fmt.Errorf("%s does not convert field(s) %s: fill it in (a stub written by apiserver-boot generate)", function, strings.Join(fields, ", "))
}
