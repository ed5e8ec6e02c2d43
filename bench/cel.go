package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/apiserver-boot/apiserver-boot/bench/internal/proc"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Item 6: what CEL rules cost a create. One project serves two kinds of the
// same shape, Plain and Ruled; Ruled carries 50
// +kubebuilder:validation:XValidation rules on its spec. Both are created on
// the same generated apiserver (on one etcd), in alternating chunks.

const celRules = 50

// celEdit adds to a scaffolded kind's spec 10 integer and 10 string
// fields, and, on Ruled, 50 rules over them (bounds, lengths, prefixes,
// cross-field) as markers of the spec type.
func celEdit(path, kind string, rules bool) error {
	k, err := readKind(path)
	if err != nil {
		return err
	}
	var fields strings.Builder
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&fields, "\tN%d int64 `json:\"n%d\"`\n", i, i)
		fmt.Fprintf(&fields, "\t// +kubebuilder:validation:MaxLength=128\n\tS%d string `json:\"s%d\"`\n", i, i)
	}
	if err := k.addFields(kind+"Spec", fields.String()); err != nil {
		return err
	}
	if rules {
		if err := k.addTypeMarkers(kind+"Spec", celRuleMarkers()...); err != nil {
			return err
		}
	}
	return k.write()
}

// celRuleMarkers are the celRules XValidation markers.
func celRuleMarkers() []string {
	var markers []string
	for i := 0; i < celRules; i++ {
		n := i%10 + 1
		var rule string
		switch i / 10 {
		case 0:
			rule = fmt.Sprintf("self.n%d >= 0", n)
		case 1:
			rule = fmt.Sprintf("self.n%d <= 1000000", n)
		case 2:
			rule = fmt.Sprintf("size(self.s%d) <= 64", n)
		case 3:
			rule = fmt.Sprintf("!self.s%d.startsWith('-')", n)
		default:
			rule = fmt.Sprintf("self.n%d + self.n%d < 2000000", n, n%10+1)
		}
		markers = append(markers, fmt.Sprintf("+kubebuilder:validation:XValidation:rule=%q,message=\"rule %d\"", rule, i))
	}
	return markers
}

func celObject(kind string, i int) *unstructured.Unstructured {
	spec := map[string]any{}
	for f := 1; f <= 10; f++ {
		spec[fmt.Sprintf("n%d", f)] = int64(i + f)
		spec[fmt.Sprintf("s%d", f)] = fmt.Sprintf("value-%d-%d", i, f)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "cel.example.com/v1", "kind": kind,
		"metadata": map[string]any{"name": fmt.Sprintf("o-%06d", i)},
		"spec":     spec,
	}}
}

// celProject scaffolds the CEL project: cel/v1 Plain and Ruled (without
// controllers: only the apiserver runs), edited by celEdit.
func (b *bench) celProject(dir string) error {
	if _, err := proc.Command(b.ctx, dir, nil, b.cli, "init", "repo", "--domain", "example.com", "--module", "example.com/cel"); err != nil {
		return err
	}
	for kind, rules := range map[string]bool{"Plain": false, "Ruled": true} {
		if _, err := proc.Command(b.ctx, dir, nil, b.cli, "create", "group", "version", "resource", "--group", "cel", "--version", "v1", "--kind", kind, "--controller=false"); err != nil {
			return err
		}
		if err := celEdit(kindTypesFile(dir, "cel", "v1", kind), kind, rules); err != nil {
			return err
		}
	}
	return nil
}

// cel is item 6.
func (b *bench) cel() error {
	dir := filepath.Join(b.tmp, "cel")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b.logf("scaffolding and building the CEL project (cel/v1 Plain and Ruled, %d rules)", celRules)
	if err := b.celProject(dir); err != nil {
		return err
	}
	if _, err := proc.Command(b.ctx, dir, nil, b.cli, "generate"); err != nil {
		return err
	}
	p := &servingProject{dir: dir}
	if _, err := proc.Command(b.ctx, dir, nil, "go", "build", "-o", p.apiserver(), "./cmd/apiserver"); err != nil {
		return err
	}
	etcdURL, _, err := b.etcd() // item 4's, under another prefix's keys
	if err != nil {
		return err
	}
	t, err := b.generatedServer(p, etcdURL)
	if err != nil {
		return err
	}
	defer t.srv.Stop(15 * time.Second)

	gvr := func(plural string) schema.GroupVersionResource {
		return schema.GroupVersionResource{Group: "cel.example.com", Version: "v1", Resource: plural}
	}
	kinds := []struct {
		kind string
		gvr  schema.GroupVersionResource
	}{{"Plain", gvr("plains")}, {"Ruled", gvr("ruleds")}}
	for _, k := range kinds {
		if _, err := t.createMany(b.ctx, k.gvr, "warmup", 0, 50, 4, func(i int) *unstructured.Unstructured { return celObject(k.kind, i) }); err != nil {
			return err
		}
	}
	const n, chunks = 1000, 4
	for _, c := range []int{1, 8} {
		took := map[string]time.Duration{}
		for chunk := 0; chunk < chunks; chunk++ {
			for _, k := range kinds {
				d, err := t.createMany(b.ctx, k.gvr, fmt.Sprintf("c%d", c), chunk*n/chunks, n/chunks, c, func(i int) *unstructured.Unstructured { return celObject(k.kind, i) })
				if err != nil {
					return err
				}
				took[k.kind] += d
			}
		}
		plain, ruled := took["Plain"], took["Ruled"]
		cost := float64(ruled) / float64(plain)
		b.add(row{Item: "6", Measure: fmt.Sprintf("create with %d CEL rules, C=%d (time per create, vs the same kind without rules)", celRules, c),
			Value: fmt.Sprintf("%.2f ms", float64(ruled.Microseconds())/1000/n), Ref: fmt.Sprintf("%.2f ms", float64(plain.Microseconds())/1000/n),
			Ratio: fmt.Sprintf("%.2fx", cost), Target: "≤ 2x", Met: yesNo(cost <= 2)})
	}
	b.note("6", "one generated apiserver on one etcd serves Plain and Ruled, scaffolded kinds whose spec has the same 20 fields added; Ruled adds %d CEL rules (bounds, lengths, prefixes, sums of fields). %d creates of each per concurrency, in %d alternating chunks; the ratio is Ruled's time over Plain's", celRules, n, chunks)
	return nil
}
