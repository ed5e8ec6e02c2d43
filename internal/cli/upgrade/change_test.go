package upgrade

import (
	"strings"
	"testing"
)

func TestModChanges(t *testing.T) {
	before := "module example.com/shop\n\ngo 1.25.0\n\nrequire (\n\tk8s.io/api v0.36.0\n\tk8s.io/client-go v0.38.0\n\tgo.uber.org/zap v1.27.0 // indirect\n)\n\nreplace github.com/apiserver-boot/apiserver-boot => ../old\n"
	after := "module example.com/shop\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/api v0.37.2\n\tk8s.io/client-go v0.38.0\n\tk8s.io/apiserver v0.37.2\n\tgo.uber.org/zap v1.28.0 // indirect\n\tgolang.org/x/net v0.61.0 // indirect\n)\n\nreplace github.com/apiserver-boot/apiserver-boot => ../new\n"
	got, err := modChanges([]byte(before), []byte(after))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"go 1.25.0 -> 1.26.0",
		"require k8s.io/api v0.36.0 -> v0.37.2",
		"require k8s.io/apiserver v0.37.2 (new)",
		"2 indirect requirement(s) added or raised (git diff go.mod)",
		`replace github.com/apiserver-boot/apiserver-boot => ../new (was "../old")`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got, _ := modChanges([]byte(after), []byte(after)); len(got) != 0 {
		t.Errorf("the same go.mod: %v", got)
	}
}
