package conformance

import (
	"encoding/json"
	"reflect"
	"testing"
)

func decodeJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestDiffJSON: every value a release wrote must read back the same; fields
// added since must be zero; each difference names its field path.
func TestDiffJSON(t *testing.T) {
	release := `{"spec":{"replicas":3,"image":"busybox","args":["a","b"],"schedule":{"cron":"* * * * *"}}}`
	for _, c := range []struct {
		name, today string
		want        []string
	}{
		{"same", `{"spec":{"replicas":3,"image":"busybox","args":["a","b"],"schedule":{"cron":"* * * * *"}}}`, nil},
		{"new fields read as zero", `{"spec":{"replicas":3,"image":"busybox","args":["a","b"],"schedule":{"cron":"* * * * *","timeZone":""},"priority":0,"template":null},"status":{}}`, nil},
		{"new fields read as an empty object has them", `{"spec":{"replicas":3,"image":"busybox","args":["a","b"],"schedule":{"cron":"* * * * *"},"limit":"0","timeout":"0s"}}`, nil},
		{"a new field with a value", `{"spec":{"replicas":3,"image":"busybox","args":["a","b"],"schedule":{"cron":"* * * * *"},"limit":"1"}}`,
			[]string{`spec.limit: absent from the release, today's code reads "1" into it (a field moved or renumbered?)`}},
		{"dropped", `{"spec":{"replicas":3,"args":["a","b"],"schedule":{"cron":"* * * * *"}}}`,
			[]string{`spec.image: the release wrote "busybox", today's code drops it`}},
		{"value in the wrong field", `{"spec":{"replicas":0,"priority":3,"image":"busybox","args":["a","b"],"schedule":{"cron":"* * * * *"}}}`,
			[]string{`spec.replicas: the release wrote 3, today's code gives 0`, `spec.priority: absent from the release, today's code reads 3 into it (a field moved or renumbered?)`}},
		{"list", `{"spec":{"replicas":3,"image":"busybox","args":["a"],"schedule":{"cron":"* * * * *"}}}`,
			[]string{`spec.args: the release wrote ["a","b"], today's code gives ["a"]`}},
		{"nested", `{"spec":{"replicas":3,"image":"busybox","args":["a","b"],"schedule":"* * * * *"}}`,
			[]string{`spec.schedule: the release wrote an object, today's code gives "* * * * *"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			zeroObject := decodeJSON(t, `{"spec":{"limit":"0","timeout":"0s"}}`)
			got := diffJSON("", decodeJSON(t, release), decodeJSON(t, c.today), zeroObject)
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestSortReleases(t *testing.T) {
	dirs := []string{"testdata/v0.10.0", "testdata/v0.2.0", "testdata/vnext", "testdata/v0.2.0-rc.1", "testdata/v1.0.0"}
	sortReleases(dirs)
	want := []string{"testdata/v0.2.0-rc.1", "testdata/v0.2.0", "testdata/v0.10.0", "testdata/v1.0.0", "testdata/vnext"}
	if !reflect.DeepEqual(dirs, want) {
		t.Errorf("got %v, want %v", dirs, want)
	}
}
