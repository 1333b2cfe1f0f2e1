package printers

import (
	"encoding/json"
	"fmt"
	"io"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"
)

// Data prints v in an -o format, "json" or "yaml": the one printer behind
// every command's -o. Kubernetes objects print as kubectl prints them: one
// object as itself, several as YAML documents or one JSON v1 List.
// Anything else (explain's and check's reports, version, a patch) prints
// as indented JSON or as YAML.
func Data(w io.Writer, format string, v any) error {
	if format != "json" && format != "yaml" {
		return fmt.Errorf("unknown output format %q", format)
	}
	var p printers.ResourcePrinter = &printers.JSONPrinter{}
	if format == "yaml" {
		p = &printers.YAMLPrinter{}
	}
	switch v := v.(type) {
	case runtime.Object:
		return p.PrintObj(v, w)
	case []runtime.Object:
		if format == "json" {
			list := &corev1.List{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "List"}}
			for _, obj := range v {
				list.Items = append(list.Items, runtime.RawExtension{Object: obj})
			}
			return p.PrintObj(list, w)
		}
		for _, obj := range v {
			if err := p.PrintObj(obj, w); err != nil {
				return err
			}
		}
		return nil
	}
	var b []byte
	var err error
	if format == "yaml" {
		b, err = yaml.Marshal(v)
	} else {
		b, err = json.MarshalIndent(v, "", "  ")
		b = append(b, '\n')
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
