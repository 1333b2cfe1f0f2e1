package cluster

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"
)

// decodeYAML reads a YAML stream document by document, as the apimachinery
// YAML decoder does (same splitting, same conversion, same errors). A List
// written as kubectl writes it (a top-level `items:` block sequence) is
// decoded item by item: converting a whole 100k-Pod document to a generic
// tree and then to JSON at once costs several times the typed objects.
func (r *localReader) decodeYAML(ctx context.Context, source string, data []byte) error {
	var docs interface{ Read() ([]byte, error) } = &documents{data: data}
	if bytes.IndexByte(data, '\r') >= 0 || len(data) > 0 && data[len(data)-1] != '\n' {
		// The reader turns "\r\n" into "\n" and ends the last line with
		// one: the text is not its own lines, and is copied.
		docs = utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	}
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		doc, err := docs.Read()
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: document %d: %v", source, i+1, english.Clip(err.Error(), english.ClipLen))
		}
		if len(doc) != 0 {
			if derr := r.yamlDocument(ctx, source, i, doc); derr != nil {
				return derr
			}
		}
		if err != nil {
			return nil
		}
	}
}

// documents cuts YAML text into documents exactly as utilyaml.YAMLReader
// does, without its copy of each document (and the doubling buffer that
// builds it): a document is a slice of the text. Only for text with no
// "\r" that ends in "\n", where the reader's lines are the text's own.
type documents struct {
	data []byte
	at   int
}

func (d *documents) Read() ([]byte, error) {
	start := -1
	for d.at < len(d.data) {
		end := len(d.data)
		if i := bytes.IndexByte(d.data[d.at:], '\n'); i >= 0 {
			end = d.at + i + 1
		}
		line := d.data[d.at:end]
		if bytes.HasPrefix(line, []byte("---")) {
			// Only blanks and a comment may follow a separator.
			if trimmed := strings.TrimSpace(string(line[3:])); len(trimmed) > 0 && trimmed[0] != '#' {
				d.at = end
				return nil, fmt.Errorf("invalid Yaml document separator: %s", trimmed)
			}
			if start >= 0 {
				doc := d.data[start:d.at]
				d.at = end
				return doc, nil
			}
			// A separator opening the text (or following another) stays
			// in the document, as the reader keeps it.
		}
		if start < 0 {
			start = d.at
		}
		d.at = end
	}
	if start >= 0 {
		return d.data[start:], nil
	}
	return nil, io.EOF
}

// yamlDocument decodes one document: item by item where splitListItems
// finds the simple shape, else whole. The item path keeps nothing of a
// failed attempt: on any error it rolls back and decodes the whole
// document, whose error is the one reported.
func (r *localReader) yamlDocument(ctx context.Context, source string, i int, doc []byte) error {
	if split, ok := splitListItems(doc); ok {
		mark := r.checkpoint()
		err := r.listItems(ctx, source, split)
		if err == nil || ctx.Err() != nil {
			r.tracking = nil
			return err
		}
		r.rollback(mark)
	}
	var raw json.RawMessage
	if err := sigsyaml.Unmarshal(doc, &raw); err != nil {
		return fmt.Errorf("%s: document %d: %v", source, i+1, english.Clip(err.Error(), english.ClipLen))
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return nil
	}
	return r.object(source, raw, header{})
}

// listItems decodes a split List: its head for the list's kind, then each
// item on its own, as object would expand the whole document.
func (r *localReader) listItems(ctx context.Context, source string, s listSplit) error {
	for _, part := range [][]byte{s.prefix, s.suffix} {
		// Each part alone must be complete YAML: a quoted scalar or a
		// flow collection open across the items would otherwise pass.
		var v any
		if err := sigsyaml.Unmarshal(part, &v); err != nil {
			return err
		}
	}
	// The head goes through JSON as the whole document would: a typed
	// target would turn `kind: 5` into "5" instead of refusing it.
	var head json.RawMessage
	if err := sigsyaml.Unmarshal(append(append([]byte{}, s.prefix...), s.suffix...), &head); err != nil {
		return err
	}
	var h header
	if err := json.Unmarshal(head, &h); err != nil {
		return err
	}
	if !strings.HasSuffix(h.Kind, "List") || h.APIVersion == "" || h.Items != nil {
		return errNotSplit
	}
	of := header{Kind: strings.TrimSuffix(h.Kind, "List"), APIVersion: h.APIVersion}
	var buf []byte
	for _, item := range s.items {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		// "- key: v" becomes "  key: v": the item keeps its columns and
		// is read as a document of its own.
		buf = append(append(buf[:0], "  "...), item[2:]...)
		var raw json.RawMessage
		if err := sigsyaml.Unmarshal(buf, &raw); err != nil {
			return err
		}
		if err := r.object(source, raw, of); err != nil {
			return err
		}
	}
	return nil
}

var errNotSplit = errors.New("not a list")

// listSplit is a document cut at its top-level `items:` block sequence:
// the text before the items key, the text after the sequence, and each
// entry's text (from its "- " to the next entry).
type listSplit struct {
	prefix, suffix []byte
	items          [][]byte
}

// splitListItems cuts a document whose top-level mapping holds an `items:`
// block sequence written at column 0, as kubectl writes a List:
//
//	apiVersion: v1
//	items:
//	- apiVersion: v1
//	  kind: Pod
//	kind: List
//
// Inside a block mapping at column 0 a line starting in column 0 is a key,
// a comment, or (in a compact sequence) a new entry: block scalars and
// plain scalars inside an entry are indented. Quoted scalars and flow
// collections may span lines at any column; an entry or part cut inside
// one does not parse alone, which listItems checks. Anything else at
// column 0 (a tab, a document marker, a directive, a second items key, an
// items key with an inline value) declines.
func splitListItems(doc []byte) (listSplit, bool) {
	var s listSplit
	const (
		before = iota
		inItems
		after
	)
	state := before
	itemsAt, itemsEnd, itemStart := -1, -1, -1
	for at := 0; at < len(doc); {
		end := bytes.IndexByte(doc[at:], '\n')
		next := len(doc)
		if end >= 0 {
			next = at + end + 1
		}
		line := doc[at:next]
		switch c := line[0]; {
		case c == ' ' || c == '\n' || c == '\r' || c == '#':
			// Indented, blank or a comment: part of what is open. Between
			// `items:` and its first entry only blanks and comments.
			if t := bytes.TrimLeft(line, " "); state == inItems && itemStart < 0 && len(bytes.TrimSpace(t)) > 0 && t[0] != '#' {
				return s, false
			}
		case at == 0 && bytes.HasPrefix(line, []byte("---")):
			// the separator the reader leaves at the start of a document
		case c == '\t' || c == '%' || bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("...")):
			return s, false
		case c == '-':
			if state != inItems || len(line) < 3 || line[1] != ' ' || line[2] == ' ' || line[2] == '\n' || line[2] == '\r' || line[2] == '\t' {
				return s, false
			}
			if itemStart >= 0 {
				s.items = append(s.items, doc[itemStart:at])
			}
			itemStart = at
		case bytes.HasPrefix(line, []byte("items:")):
			if state != before || !emptyValue(line[len("items:"):]) {
				return s, false
			}
			state, itemsAt = inItems, at
		default:
			if state == inItems {
				state, itemsEnd = after, at
			}
		}
		at = next
	}
	if itemsAt < 0 || itemStart < 0 {
		return s, false
	}
	if itemsEnd < 0 {
		itemsEnd = len(doc)
	}
	s.items = append(s.items, doc[itemStart:itemsEnd])
	s.prefix, s.suffix = doc[:itemsAt], doc[itemsEnd:]
	return s, true
}

// emptyValue: nothing after a key's colon but blanks and a comment.
func emptyValue(rest []byte) bool {
	t := bytes.TrimLeft(rest, " ")
	if len(t) == 0 || t[0] == '\n' || t[0] == '\r' && (len(t) == 1 || t[1] == '\n') {
		return true
	}
	return t[0] == '#' && len(t) < len(rest)
}

// checkpoint marks what the reader holds, so that a failed item-by-item
// attempt can be undone.
type checkpoint struct{ services, pods, nodes, slices int }

func (r *localReader) checkpoint() checkpoint {
	r.tracking = []string{}
	return checkpoint{len(r.m.Services), len(r.m.Pods), len(r.m.Nodes), len(r.m.Slices)}
}

func (r *localReader) rollback(c checkpoint) {
	for _, key := range r.tracking {
		delete(r.seen, key)
	}
	r.tracking = nil
	r.m.Services, r.m.Pods, r.m.Nodes, r.m.Slices = r.m.Services[:c.services], r.m.Pods[:c.pods], r.m.Nodes[:c.nodes], r.m.Slices[:c.slices]
}
