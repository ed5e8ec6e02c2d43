package adoption

import "testing"

func TestPathAndParseResource(t *testing.T) {
	if got, want := Path("stable.example.com", "crontabs"), "/apis/adoption.apiserver-boot.io/v1alpha1/crontabs.stable.example.com"; got != want {
		t.Errorf("Path: %q, want %q", got, want)
	}
	for in, want := range map[string][3]any{
		"crontabs.stable.example.com": {"stable.example.com", "crontabs", true},
		"crontabs":                    {"", "crontabs", false},
		".example.com":                {"example.com", "", false},
	} {
		g, r, ok := ParseResource(in)
		if g != want[0] || r != want[1] || ok != want[2] {
			t.Errorf("ParseResource(%q) = %q, %q, %v; want %v", in, g, r, ok, want)
		}
	}
}
