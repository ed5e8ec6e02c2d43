package codegen

import (
	"bytes"
	"io"
	"testing"

	"github.com/apiserver-boot/apiserver-boot/internal/shared/progress"
)

// TestConsoleGenerateLastLine: generate's last line reaches the output even
// without a newline, --quiet included (where its output goes line by line).
func TestConsoleGenerateLastLine(t *testing.T) {
	const messages = "generate: wrote 3 files\nwarning: CronTabStrategy.Validate is not used\n\tmove it to pkg/apis/stable/v1"
	for quiet, want := range map[bool]string{
		false: messages,
		true:  "warning: CronTabStrategy.Validate is not used\n\tmove it to pkg/apis/stable/v1\n",
	} {
		var out, errOut bytes.Buffer
		con := progress.NewConsole(&out, &errOut, quiet)
		_, err := On(con, func(w io.Writer) ([]string, error) {
			_, err := io.WriteString(w, messages)
			return nil, err
		})
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != want || errOut.String() != "" {
			t.Errorf("quiet=%v: output %q, error output %q; want %q", quiet, out.String(), errOut.String(), want)
		}
	}
}
