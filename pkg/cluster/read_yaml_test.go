package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// wholeDecode is the reference: every document converted whole to JSON by
// apimachinery's reader and decoder, then expanded, as before item-by-item
// decoding existed.
func wholeDecode(t *testing.T, in string) (*Manifests, error) {
	t.Helper()
	r := &localReader{m: &Manifests{}, seen: map[string]seenObject{}}
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(in), 4096)
	for i := 0; ; i++ {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return r.m, nil
		}
		if err != nil {
			return nil, fmt.Errorf("in: document %d: %v", i+1, english.Clip(err.Error(), english.ClipLen))
		}
		if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
			continue
		}
		if err := r.object("in", raw, header{}); err != nil {
			return nil, err
		}
	}
}

func readDecode(in string) (*Manifests, error) {
	r := &localReader{m: &Manifests{}, seen: map[string]seenObject{}}
	if err := r.decode(context.Background(), "in", []byte(in)); err != nil {
		return nil, err
	}
	return r.m, nil
}

const listPods = `apiVersion: v1
items:
- apiVersion: v1
  kind: Service
  metadata:
    name: web
    namespace: shop
  spec:
    ports:
    - name: http
      port: 80
    selector:
      app: web
# a comment between items, at column 0
- apiVersion: v1
  kind: Pod
  metadata:
    annotations:
      note: |
        - not an item
        items:
        kind: List
      folded: >-
        one
        two
    labels:
      app: web
    name: web-1
    namespace: shop
  spec:
    containers:
    - name: c
      ports:
      - containerPort: 8080
        name: http
  status:
    podIP: 10.0.0.1

- apiVersion: v1 # trailing comment
  kind: Pod
  metadata: {name: web-2, namespace: shop, labels: {app: web}}
  status:
    podIPs:
    - ip: 10.0.0.2
    podIP: 10.0.0.2
kind: List
metadata:
  resourceVersion: ""
`

// Item by item gives exactly the objects of the whole-document decode,
// and takes the item path for the shapes kubectl writes.
func TestYAMLItemsAsWhole(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    string
		split bool // the text has the List shape
		fast  bool // and the item path reads it (else the whole document is)
		pods  int
	}{
		{"kubectl List", listPods, true, true, 2},
		{"typed PodList", "kind: PodList\napiVersion: v1\nitems:\n- metadata:\n    name: web-1\n    namespace: shop\n- metadata:\n    name: web-2\n    namespace: shop\n", true, true, 2},
		{"items first, head after", "items:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n\n\nkind: List\napiVersion: v1\n", true, true, 1},
		{"items last, no final newline", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a", true, true, 1},
		{"several documents", svcYAML + "---\n" + listPods + "---\n# only a comment\n---\n" + strings.ReplaceAll(podYAML, "web-1", "web-9"), true, true, 3},
		{"opening separator", "--- # first\n" + listPods, true, true, 2},
		{"CRLF", strings.ReplaceAll(listPods, "\n", "\r\n"), true, true, 2},
		{"comment after items key", "apiVersion: v1\nkind: List\nitems: # all\n# first\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n", true, true, 1},
		{"nested item sequence", "apiVersion: v1\nkind: List\nitems:\n- - apiVersion: v1\n    kind: Pod\n", true, false, 0},
		{"anchor in one item, alias in the next", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: &m\n    name: a\n    labels: {app: web}\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    <<: *m\n    name: b\n", true, false, 2},
		{"anchor in the head", "apiVersion: &v v1\nkind: List\nitems:\n- apiVersion: *v\n  kind: Pod\n  metadata:\n    name: a\n", true, false, 1},
		{"indented text before the first entry", "apiVersion: v1\nkind: List\nitems:\n  x: 1\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n", false, false, 0},
		{"flow items", "apiVersion: v1\nkind: List\nitems: [{apiVersion: v1, kind: Pod, metadata: {name: a}}]\n", false, false, 1},
		{"indented items", "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: v1\n    kind: Pod\n    metadata:\n      name: a\n", false, false, 1},
		{"items with an anchor", "apiVersion: v1\nkind: List\nitems: &i\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n", false, false, 1},
		{"tab at column 0", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n\t\n  kind: Pod\n  metadata:\n    name: a\n", false, false, 1},
		{"two items keys", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\n", false, false, 1},
		{"not a list", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\n", true, false, 1},
		{"quoted scalar across the items", "apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    a: \"x\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: b\nz: y\"\n", true, false, 0},
		{"quoted scalar across items", "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n    annotations: {x: \"1\n- 2\"}\n", true, false, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, werr := wholeDecode(t, c.in)
			docs := &documents{data: []byte(strings.ReplaceAll(c.in, "\r", "") + "\n")}
			for {
				doc, err := docs.Read()
				if err != nil {
					break
				}
				if c.name == "several documents" && !bytes.Contains(doc, []byte("items:")) {
					continue
				}
				s, split := splitListItems(doc)
				if split != c.split {
					t.Fatalf("split %v, want %v", split, c.split)
				}
				if !split {
					continue
				}
				// The item path alone, with no fallback.
				r := &localReader{m: &Manifests{}, seen: map[string]seenObject{}}
				err = r.listItems(context.Background(), "in", s)
				if (err == nil) != c.fast {
					t.Fatalf("item path: %v, want it to read the List: %v", err, c.fast)
				}
				if err == nil && c.name != "several documents" && !reflect.DeepEqual(r.m, want) {
					t.Fatalf("item path objects differ from the whole-document decode:\n got %+v\nwant %+v", r.m, want)
				}
			}
			got, gerr := readDecode(c.in)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("error %v, whole-document decode: %v", gerr, werr)
			}
			if werr != nil {
				return
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("objects differ from the whole-document decode:\n got %d services %d pods %+v\nwant %d services %d pods %+v", len(got.Services), len(got.Pods), got.Pods, len(want.Services), len(want.Pods), want.Pods)
			}
			if len(got.Pods) != c.pods {
				t.Fatalf("%d pods, want %d", len(got.Pods), c.pods)
			}
		})
	}
}

// An item that fails on its own (syntax, kind) leaves nothing behind: the
// whole document is decoded again and its error reported, document
// numbered.
func TestYAMLItemErrorsAsWhole(t *testing.T) {
	for _, in := range []string{
		listPods + "- bad: [\n",
		strings.Replace(listPods, "  kind: Pod\n  metadata: {name: web-2", "  kind: Pod\n  apiVersion: v2\n  metadata: {name: web-2", 1),
		strings.Replace(listPods, "- apiVersion: v1 # trailing comment\n  kind: Pod\n", "- metadata: {name: x}\n", 1),
		"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: a\n    labels: {x: y}\n",
		"apiVersion: v1\nkind: 5\nitems:\n- apiVersion: v1\n  kind: Pod\n",
		"apiVersion: v1\nkind: [List]\nitems:\n- apiVersion: v1\n  kind: Pod\n",
	} {
		want, werr := wholeDecode(t, in)
		got, gerr := readDecode(in)
		if werr == nil || fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("error %v, whole-document decode: %v (objects %v, %v)", gerr, werr, got, want)
		}
	}
}

// A failed item path is rolled back: objects read before the document stay,
// those of the failed attempt go, and a later identical copy is no
// conflict.
func TestYAMLRollback(t *testing.T) {
	in := podYAML + "---\n" + "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: &m\n    name: web-2\n    namespace: shop\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    <<: *m\n    name: web-3\n"
	for _, c := range []struct{ in, want string }{
		{in, "web-1,web-2,web-3"},
		// A Pod with no name is kept once, not once per attempt.
		{strings.Replace(in, "items:\n", "items:\n- apiVersion: v1\n  kind: Pod\n  metadata: {namespace: shop}\n", 1), "web-1,,web-2,web-3"},
	} {
		m, err := readDecode(c.in)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, p := range m.Pods {
			names = append(names, p.Name)
		}
		if got := strings.Join(names, ","); got != c.want {
			t.Fatalf("pods %q, want %q", got, c.want)
		}
	}
}

// The item path cuts at the entries of the top-level items sequence only.
func TestSplitListItems(t *testing.T) {
	s, ok := splitListItems([]byte(listPods))
	if !ok {
		t.Fatal("kubectl's List not split")
	}
	if len(s.items) != 3 || string(s.prefix) != "apiVersion: v1\n" || string(s.suffix) != "kind: List\nmetadata:\n  resourceVersion: \"\"\n" {
		t.Fatalf("split into %d items, prefix %q, suffix %q", len(s.items), s.prefix, s.suffix)
	}
	for i, want := range []string{"name: web\n", "name: web-1\n", "name: web-2,"} {
		if !bytes.HasPrefix(s.items[i], []byte("- apiVersion: v1")) || !bytes.Contains(s.items[i], []byte(want)) {
			t.Errorf("item %d: %q", i, s.items[i])
		}
	}
}

// documents cuts text as apimachinery's YAMLReader does.
func TestDocumentsAsYAMLReader(t *testing.T) {
	for _, in := range []string{
		"", "\n", "a: 1\n", "---\na: 1\n---\n", "a: 1\n--- # c\nb: 2\n---\n---\nc: 3\n",
		"a: 1\n---x\nb: 2\n", "a: 1\n----\n", "a: |\n  ---\n", "# c\n---\n\n",
	} {
		ref := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(in)))
		ours := &documents{data: []byte(in)}
		for i := 0; i < 10; i++ {
			w, werr := ref.Read()
			g, gerr := ours.Read()
			if string(w) != string(g) || fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("%q: document %d: %q %v, YAMLReader %q %v", in, i+1, g, gerr, w, werr)
			}
			if werr == io.EOF {
				break
			}
		}
	}
}

// A List read item by item stops between items once the context is done.
func TestYAMLItemsFollowContext(t *testing.T) {
	s, ok := splitListItems([]byte(listPods))
	if !ok {
		t.Fatal("not split")
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("interrupted")
	cancel(stop)
	r := &localReader{m: &Manifests{}, seen: map[string]seenObject{}}
	if err := r.listItems(ctx, "in", s); !errors.Is(err, stop) || len(r.m.Pods)+len(r.m.Services) != 0 {
		t.Fatalf("err %v, %d objects read after the interrupt", err, len(r.m.Pods)+len(r.m.Services))
	}
	if err := r.decode(ctx, "in", []byte(listPods)); !errors.Is(err, stop) {
		t.Fatalf("decode: %v", err)
	}
}
