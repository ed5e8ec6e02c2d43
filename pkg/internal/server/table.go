package server

import (
	"bytes"
	"context"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	metatable "k8s.io/apimachinery/pkg/api/meta/table"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/client-go/util/jsonpath"

	"github.com/apiserver-boot/apiserver-boot/pkg/builders"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/jsoncontent"
	"github.com/apiserver-boot/apiserver-boot/pkg/internal/strategy"
)

// tableConvertor prints NAME, the +printcolumn columns and AGE, as
// kube-apiserver does for CRDs with additional printer columns (with
// +kubebuilder:printcolumn, exactly the declared columns, as in a CRD).
type tableConvertor struct {
	content jsoncontent.Kind
	age     bool // an AGE column ends the row
	headers []metav1.TableColumnDefinition
	columns []*jsonpath.JSONPath
	types   []string
}

// newTableConvertor returns the hooks' own ConvertToTable if they declare one,
// else a convertor for the declared columns.
func newTableConvertor(r *builders.Resource, content jsoncontent.Kind) (rest.TableConvertor, error) {
	if tc, ok := strategy.Hooks(r).(rest.TableConvertor); ok {
		return tc, nil
	}
	c := &tableConvertor{content: content, headers: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: metav1.ObjectMeta{}.SwaggerDoc()["name"]},
	}}
	for _, col := range r.PrintColumns {
		jp := jsonpath.New(col.Name)
		if err := jp.Parse(fmt.Sprintf("{%s}", col.JSONPath)); err != nil {
			return nil, fmt.Errorf("printer column %q of %s: JSONPath %s: %w", col.Name, r.Plural, col.JSONPath, err)
		}
		jp.AllowMissingKeys(true)
		c.columns = append(c.columns, jp)
		c.types = append(c.types, col.Type)
		desc := col.Description
		if desc == "" {
			desc = "Printer column (JSONPath): " + col.JSONPath // as kube-apiserver describes CRD columns
		}
		c.headers = append(c.headers, metav1.TableColumnDefinition{
			Name: col.Name, Type: col.Type, Format: col.Format, Description: desc, Priority: col.Priority,
		})
	}
	age := !r.ExactColumns
	for _, col := range r.PrintColumns {
		age = age && col.JSONPath != ".metadata.creationTimestamp"
	}
	if c.age = age; age {
		c.headers = append(c.headers, metav1.TableColumnDefinition{
			Name: "Age", Type: "date", Description: metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"],
		})
	}
	return c, nil
}

func (c *tableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, tableOptions runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{}
	if opt, ok := tableOptions.(*metav1.TableOptions); !ok || opt == nil || !opt.NoHeaders {
		table.ColumnDefinitions = c.headers
	}
	if m, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion, table.Continue, table.RemainingItemCount = m.GetResourceVersion(), m.GetContinue(), m.GetRemainingItemCount()
	} else if m, err := meta.CommonAccessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	var err error
	table.Rows, err = metatable.MetaToTableRow(obj, func(obj runtime.Object, m metav1.Object, name, age string) ([]interface{}, error) {
		cells := []interface{}{name}
		content, err := c.content.ToMap(obj)
		if err != nil {
			return nil, err
		}
		for _, k := range jsoncontent.AbsentFields {
			if jsoncontent.Absent(obj, k) {
				// None sent, or no status written yet: its columns
				// show nothing, as a CRD's do (absent.go).
				delete(content, k)
			}
		}
		for i, col := range c.columns {
			cells = append(cells, cell(col, c.types[i], content))
		}
		if c.age {
			cells = append(cells, age)
		}
		return cells, nil
	})
	return table, err
}

// cell renders one column's value: the first JSONPath result, typed as
// declared, as kube-apiserver renders CRD columns (dates as ages).
func cell(col *jsonpath.JSONPath, typ string, content map[string]interface{}) interface{} {
	results, err := col.FindResults(content)
	if err != nil || len(results) == 0 || len(results[0]) == 0 {
		return nil
	}
	value := results[0][0].Interface()
	switch typ {
	case "integer":
		switch v := value.(type) {
		case int64:
			return v
		case float64:
			return int64(v)
		}
		return nil
	case "number":
		switch v := value.(type) {
		case int64:
			return float64(v)
		case float64:
			return v
		}
		return nil
	case "boolean":
		if b, ok := value.(bool); ok {
			return b
		}
		return nil
	case "date":
		s, ok := value.(string)
		if !ok {
			return nil
		}
		var ts metav1.Time
		if err := ts.UnmarshalQueryParameter(s); err != nil {
			return "<invalid>"
		}
		return metatable.ConvertToHumanReadableDateType(ts)
	}
	var buf bytes.Buffer
	if err := col.PrintResults(&buf, []reflect.Value{reflect.ValueOf(value)}); err != nil {
		return nil
	}
	return buf.String()
}
