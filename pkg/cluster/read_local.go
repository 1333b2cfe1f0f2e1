package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discovery "k8s.io/api/discovery/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// DefaultMaxInputSize bounds what --local reads in all (explain
// --max-input-size): a dump of a large cluster is tens of MiB, and a path
// such as /dev/zero must fail, not fill the memory.
const DefaultMaxInputSize = 64 << 20

// ReadOptions tune ReadManifests.
type ReadOptions struct {
	// MaxBytes bounds the bytes read over every file; 0 means
	// DefaultMaxInputSize.
	MaxBytes int64
	// Stdin is read for the path "-".
	Stdin io.Reader
	// Flag names the size limit's flag in the error.
	Flag string
}

// TooLargeError says the input passed the size limit.
type TooLargeError struct {
	Source string
	Limit  int64
	Flag   string
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s: input larger than %s (%d bytes): raise %s if it is meant to be read", e.Source, formatSize(e.Limit), e.Limit, e.Flag)
}

func formatSize(n int64) string {
	switch {
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGi", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMi", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKi", n>>10)
	}
	return fmt.Sprint(n)
}

// manifestExtensions are the files read from a directory, as kubectl's.
var manifestExtensions = []string{".json", ".yaml", ".yml"}

// ReadManifests reads every file (directories recursively; "-" is stdin)
// as kubectl -f does, with no cluster and no kubeconfig. Objects of other
// kinds are ignored; Lists are expanded. Reading follows ctx (a FIFO or a
// slow stdin is abandoned on a signal), stops at opts.MaxBytes, and decodes
// a JSON document straight into its typed objects and a YAML List item by
// item (decodeYAML), so memory stays a small multiple of the input. URLs
// are refused: offline reads no network. The same object given twice counts
// once; two different ones of the same name are an error naming both
// sources.
//
// It reads with the GC at its default pace. main collects rarely
// (GOGC=400), which suits a run that keeps what it decodes; reading YAML
// builds a short-lived tree per object, and at 400 that garbage fills the
// heap to five times what is kept (2 GiB, the soft limit, for a 52 MB List
// of 100k Pods; 0.95 GiB at 100). GOGC still wins when set.
func ReadManifests(ctx context.Context, paths []string, opts ReadOptions) (*Manifests, error) {
	if _, set := os.LookupEnv("GOGC"); !set {
		defer debug.SetGCPercent(debug.SetGCPercent(100))
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxInputSize
	}
	if opts.Flag == "" {
		opts.Flag = "--max-input-size"
	}
	files, err := manifestFiles(paths)
	if err != nil {
		return nil, err
	}
	r := &localReader{m: &Manifests{}, seen: map[string]seenObject{}}
	budget := opts.MaxBytes
	for _, f := range files {
		data, err := readBounded(ctx, f, opts.Stdin, budget)
		if err != nil {
			if errors.Is(err, errTooLarge) {
				return nil, &TooLargeError{Source: f, Limit: opts.MaxBytes, Flag: opts.Flag}
			}
			return nil, err
		}
		budget -= int64(len(data))
		if err := r.decode(ctx, f, data); err != nil {
			return nil, err
		}
	}
	return r.m, nil
}

// manifestFiles expands the paths: a directory to its manifest files, in
// lexical order.
func manifestFiles(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		if strings.Contains(p, "://") {
			return nil, fmt.Errorf("%s: --local reads files only, not URLs (offline means no network): download it first", p)
		}
		if p == "-" {
			out = append(out, p)
			continue
		}
		fi, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !fi.IsDir() {
			out = append(out, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && hasManifestExtension(path) {
				out = append(out, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hasManifestExtension(path string) bool {
	for _, ext := range manifestExtensions {
		if strings.HasSuffix(path, ext) {
			return true
		}
	}
	return false
}

var errTooLarge = errors.New("input too large")

// readBounded reads a file (or stdin for "-") whole, up to max bytes. The
// open and the reads run aside so that ctx ends the wait: opening a FIFO
// blocks until a writer comes, and a read until it writes.
func readBounded(ctx context.Context, path string, stdin io.Reader, max int64) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		var src io.Reader = stdin
		if path != "-" {
			f, err := os.Open(path)
			if err != nil {
				done <- result{err: err}
				return
			}
			defer f.Close()
			src = f
		}
		if src == nil {
			done <- result{err: fmt.Errorf("-: no standard input")}
			return
		}
		var buf bytes.Buffer
		if st, ok := src.(interface{ Stat() (os.FileInfo, error) }); ok {
			// A regular file's size is known: one allocation, not a
			// doubling buffer that peaks at twice the file.
			if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < max {
				buf.Grow(int(fi.Size()) + bytes.MinRead)
			}
		}
		n, err := buf.ReadFrom(io.LimitReader(&ctxReader{ctx: ctx, r: src}, max+1))
		if err == nil && n > max {
			err = errTooLarge
		}
		done <- result{buf.Bytes(), err}
	}()
	select {
	case res := <-done:
		if res.err != nil && !errors.Is(res.err, errTooLarge) && ctx.Err() == nil {
			res.err = fmt.Errorf("%s: %w", path, res.err)
		}
		if ctx.Err() != nil {
			return nil, context.Cause(ctx)
		}
		return res.data, res.err
	case <-ctx.Done():
		// The reader may stay blocked in the kernel: the process is
		// about to exit, and nothing waits for it.
		return nil, context.Cause(ctx)
	}
}

// ctxReader stops between reads once ctx is done, so an endless source
// (/dev/zero below the limit, a fast pipe) ends too.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// localReader decodes documents into the Manifests.
type localReader struct {
	m    *Manifests
	seen map[string]seenObject
	// tracking, when not nil, records the keys add puts in seen, for a
	// rollback.
	tracking []string
}

type seenObject struct {
	source string
	obj    any
}

// header is what a document says it is, read before the object itself.
type header struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Items      []json.RawMessage `json:"items"`
}

// decode reads every document of one file (YAML or JSON, several
// documents or a List).
func (r *localReader) decode(ctx context.Context, source string, data []byte) error {
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' && json.Valid(t) {
		// One JSON object (kubectl get -o json): decoded in place, with
		// no stream buffer and no copy of the document.
		return r.object(source, t, header{})
	}
	if peek := data[:min(len(data), 4096)]; !utilyaml.IsJSONBuffer(peek) {
		return r.decodeYAML(ctx, source, data)
	}
	// A stream of JSON objects (or JSON then YAML).
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: document %d: %v", source, i+1, english.Clip(err.Error(), english.ClipLen))
		}
		if len(bytes.TrimSpace(doc)) == 0 || string(bytes.TrimSpace(doc)) == "null" {
			continue
		}
		if err := r.object(source, doc, header{}); err != nil {
			return err
		}
	}
}

// object decodes one object, expanding a List. An item of a typed list
// (PodList, as the API and `kubectl cluster-info dump` write them) may carry
// no kind and apiVersion: it has those of its list, as given in of.
func (r *localReader) object(source string, raw json.RawMessage, of header) error {
	var h header
	if err := json.Unmarshal(raw, &h); err != nil {
		return fmt.Errorf("%s: %v in %s", source, english.Clip(err.Error(), english.ClipLen), english.Clip(string(raw), english.ClipLen))
	}
	if h.Kind == "" {
		h.Kind = of.Kind
	}
	if h.APIVersion == "" {
		h.APIVersion = of.APIVersion
	}
	if h.Kind == "" {
		return fmt.Errorf("%s: an object has no kind: %s", source, english.Clip(string(raw), english.ClipLen))
	}
	if h.APIVersion == "" {
		return fmt.Errorf("%s: a %s has no apiVersion: %s", source, h.Kind, english.Clip(string(raw), english.ClipLen))
	}
	if strings.HasSuffix(h.Kind, "List") && h.Items != nil {
		items := header{Kind: strings.TrimSuffix(h.Kind, "List"), APIVersion: h.APIVersion}
		for _, item := range h.Items {
			if err := r.object(source, item, items); err != nil {
				return err
			}
		}
		return nil
	}
	want, known := knownKinds[h.Kind]
	if !known {
		return nil // other kinds (Deployments, ConfigMaps) are not the planner's
	}
	if h.APIVersion != want {
		return fmt.Errorf("%s: %s has apiVersion %q, want %q", source, h.Kind, english.Clip(h.APIVersion, english.ClipLen), want)
	}
	var target any
	switch h.Kind {
	case "Service":
		target = &corev1.Service{}
	case "Pod":
		target = &corev1.Pod{}
	case "Node":
		target = &corev1.Node{}
	case "EndpointSlice":
		target = &discovery.EndpointSlice{}
	case "Endpoints":
		target = &corev1.Endpoints{}
	}
	if err := json.Unmarshal(raw, target); err != nil {
		return fmt.Errorf("%s: %s: %v", source, h.Kind, english.Clip(err.Error(), english.ClipLen))
	}
	return r.add(source, h.Kind, target)
}

// knownKinds are the kinds the planner reads, with their one served
// apiVersion.
// Endpoints are read for explain --ip, which names every object holding
// an address.
var knownKinds = map[string]string{"Service": "v1", "Pod": "v1", "Node": "v1", "EndpointSlice": "discovery.k8s.io/v1", "Endpoints": "v1"}

// add keeps an object once: an identical copy is dropped, a different
// object of the same kind and name is an error.
func (r *localReader) add(source, kind string, obj any) error {
	var ns, name string
	switch o := obj.(type) {
	case *corev1.Service:
		ns, name = o.Namespace, o.Name
	case *corev1.Pod:
		ns, name = o.Namespace, o.Name
	case *corev1.Node:
		name = o.Name
	case *discovery.EndpointSlice:
		ns, name = o.Namespace, o.Name
	case *corev1.Endpoints:
		ns, name = o.Namespace, o.Name
	}
	if name != "" {
		key := kind + "/" + ns + "/" + name
		if prev, ok := r.seen[key]; ok {
			if apiequality.Semantic.DeepEqual(prev.obj, obj) {
				return nil
			}
			return &ConflictingObjectError{Kind: kind, Namespace: ns, Name: name, First: prev.source, Second: source}
		}
		r.seen[key] = seenObject{source: source, obj: obj}
		if r.tracking != nil {
			r.tracking = append(r.tracking, key)
		}
	}
	switch o := obj.(type) {
	case *corev1.Service:
		r.m.Services = append(r.m.Services, o)
	case *corev1.Pod:
		r.m.Pods = append(r.m.Pods, o)
	case *corev1.Node:
		r.m.Nodes = append(r.m.Nodes, o)
	case *discovery.EndpointSlice:
		r.m.Slices = append(r.m.Slices, o)
	case *corev1.Endpoints:
		r.m.Endpoints = append(r.m.Endpoints, o)
	}
	return nil
}

// ConflictingObjectError: two different objects of one kind and name.
type ConflictingObjectError struct {
	Kind, Namespace, Name string
	First, Second         string
}

func (e *ConflictingObjectError) Error() string {
	name := e.Name
	if e.Namespace != "" {
		name = e.Namespace + "/" + name
	}
	return fmt.Sprintf("%s %s is given twice and the two differ (in %s and in %s): keep one", strings.ToLower(e.Kind), name, e.First, e.Second)
}
