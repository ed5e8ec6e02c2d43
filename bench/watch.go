package main

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// watchedCreates is how many creates the watch row times per target.
const watchedCreates = 50

// watchRow adds the watch row of a pairing: a watch on namespace "watched"
// opened first, then creates one at a time, alternating between the
// targets; each timed from the create's start to its ADDED event on the
// watch (median).
func (b *bench) watchRow(pr pairing) error {
	const ns = "watched"
	watches := map[*target]watch.Interface{}
	for _, t := range pr.targets() {
		w, err := t.client.Resource(t.gvr).Namespace(ns).Watch(b.ctx, metav1.ListOptions{})
		if err != nil {
			return fmt.Errorf("%s: watch: %w", t.name, err)
		}
		defer w.Stop()
		watches[t] = w
	}
	runs := map[*target][]time.Duration{}
	for i := 0; i < watchedCreates; i++ {
		for _, t := range pr.targets() {
			name := fmt.Sprintf("watched-%03d", i)
			start := time.Now()
			if _, err := t.client.Resource(t.gvr).Namespace(ns).Create(b.ctx, widget(t.gvr.Group, name), metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("%s: create %s/%s: %w", t.name, ns, name, err)
			}
			if err := awaitAdded(watches[t], name); err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			runs[t] = append(runs[t], time.Since(start))
		}
	}
	r := row{Item: "4", Measure: fmt.Sprintf("%s: create to its watch event (median of %d, one at a time)", pr.label, watchedCreates), Value: ms(median(runs[pr.ours])), Target: "-"}
	if pr.ref != nil {
		r.Ref = ms(median(runs[pr.ref])) + " (CRD)"
		r.Ratio = fmt.Sprintf("%.2fx", ratio(median(runs[pr.ours]), median(runs[pr.ref])))
	} else {
		r.Ref, r.Ratio = "skipped", "-"
	}
	b.add(r)
	for _, t := range pr.targets() {
		b.note("4", "%s: create to its watch event, %s: runs %s", pr.label, t.name, millis(runs[t]))
	}
	return nil
}

// awaitAdded waits for the ADDED event of the object called name on w
// (other events are skipped), for up to 30 s.
func awaitAdded(w watch.Interface, name string) error {
	timeout := time.After(30 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch ended before the ADDED event of %s", name)
			}
			if u, isObj := ev.Object.(*unstructured.Unstructured); isObj && ev.Type == watch.Added && u.GetName() == name {
				return nil
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("the watch failed before the ADDED event of %s: %v", name, ev.Object)
			}
		case <-timeout:
			return fmt.Errorf("no ADDED event of %s on the watch after 30 s", name)
		}
	}
}
