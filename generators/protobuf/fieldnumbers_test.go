package protobuf

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestFieldNumbersRoundTrip: the record reads back as written, whatever the
// keys (YAML reads bare y, on, ~ as other than strings).
func TestFieldNumbersRoundTrip(t *testing.T) {
	rec := Numbers{
		"Widget": {Fields: map[string]fieldNumber{
			"metadata": {Number: 1, Wire: "bytes"}, "spec": {Number: 2, Wire: "bytes", Type: "WidgetSpec"},
			"y": {Number: 4, Wire: "varint"}, "on": {Number: 5, Wire: "varint"}, "~": {Number: 6, Wire: "bytes"}, "inline:Common": {Number: 7, Wire: "bytes", Type: "Common"},
		}, Reserved: []reservedNumber{{Number: 3, Name: "status", Wire: "bytes"}}},
		"WidgetSpec": {Fields: map[string]fieldNumber{"null": {Number: 1, Wire: "bytes"}}},
	}
	path := filepath.Join(t.TempDir(), FieldNumbersFile)
	if err := os.WriteFile(path, rec.render("shop/v1"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readFieldNumbers(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rec) {
		t.Errorf("read back %+v, wrote %+v", got, rec)
	}
	if got["Widget"].max() != 7 || got["Widget"].owner(3) == "" || got["Widget"].reservedFor("status", "bytes") != 3 {
		t.Errorf("max %d, owner(3) %q, reservedFor(status) %d", got["Widget"].max(), got["Widget"].owner(3), got["Widget"].reservedFor("status", "bytes"))
	}
}

// TestFieldNumbersRefusesBrokenRecords: a record that would give one number
// twice, or an invalid one, is an error naming the file and the fields.
func TestFieldNumbersRefusesBrokenRecords(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"\"A\":\n  fields:\n    \"x\": {number: 1, wire: varint}\n    \"y\": {number: 1, wire: varint}\n", "A: x and y both hold number 1"},
		{"\"A\":\n  fields:\n    \"x\": {number: 2, wire: varint}\n  reserved:\n  - {number: 2, name: old}\n", "A: x and reserved old both hold number 2"},
		{"\"A\":\n  fields:\n    \"x\": {number: 19500, wire: varint}\n", "A.x: number 19500 is not a valid protobuf field number"},
		{"\"A\":\n  fields:\n    \"x\": {number: 1, wire: varint, colour: red}\n", "restore it from version control"},
	} {
		path := filepath.Join(t.TempDir(), FieldNumbersFile)
		os.WriteFile(path, []byte(tc.yaml), 0o644)
		_, err := readFieldNumbers(path)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("want an error naming %s and %q, got %v", path, tc.want, err)
		}
	}
	if rec, err := readFieldNumbers(filepath.Join(t.TempDir(), "absent.yaml")); err != nil || len(rec) != 0 {
		t.Errorf("no record yet: want an empty one, got %v %v", rec, err)
	}
}
