package printers

import (
	"fmt"
	"io"

	discovery "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/printers"
)

var sliceGVK = discovery.SchemeGroupVersion.WithKind("EndpointSlice")

// Written is one object a sync wrote, or would write.
type Written struct {
	Slice *discovery.EndpointSlice
	// Operation is "created", "configured" or "deleted".
	Operation string
}

// Objects prints what was written in an -o format: json and yaml print one
// List of the created and updated slices (deleted ones are gone), name prints
// a line per object with its operation, like kubectl apply -o name.
func Objects(w io.Writer, format, dryRunSuffix string, objs []Written) error {
	switch format {
	case "name":
		for _, o := range objs {
			p := &printers.NamePrinter{Operation: o.Operation + dryRunSuffix}
			if err := p.PrintObj(withKind(o.Slice), w); err != nil {
				return err
			}
		}
		return nil
	case "json", "yaml":
		list := &unstructured.UnstructuredList{Object: map[string]any{"apiVersion": "v1", "kind": "List"}}
		for _, o := range objs {
			if o.Operation == "deleted" {
				continue
			}
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(withKind(o.Slice))
			if err != nil {
				return err
			}
			list.Items = append(list.Items, unstructured.Unstructured{Object: m})
		}
		return Data(w, format, list)
	}
	return fmt.Errorf("unknown output format %q", format)
}

// withKind returns a copy with apiVersion and kind set (objects from typed
// clients carry none) and managed fields dropped, as kubectl shows them.
func withKind(s *discovery.EndpointSlice) *discovery.EndpointSlice {
	c := s.DeepCopy()
	c.SetGroupVersionKind(schema.GroupVersionKind(sliceGVK))
	c.ManagedFields = nil
	return c
}
