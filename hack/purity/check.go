package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const module = "github.com/kubectl-slices/kubectl-slices/"

// forbidden says why an import is not allowed in a pure package, or "".
func forbidden(path string) string {
	switch {
	case path == "os" || strings.HasPrefix(path, "os/") || path == "syscall" || path == "io/ioutil" || path == "io/fs":
		return "file system or process access"
	case (path == "net" || strings.HasPrefix(path, "net/")) && path != "net/netip" && path != "net/url":
		return "network access"
	case path == "log" || strings.HasPrefix(path, "log/") || strings.HasPrefix(path, "k8s.io/klog"):
		return "logging"
	case strings.HasPrefix(path, "k8s.io/client-go/") || path == "k8s.io/client-go" ||
		strings.HasPrefix(path, "k8s.io/cli-runtime/") || strings.HasPrefix(path, "k8s.io/kubectl/"):
		return "an API client"
	case strings.HasPrefix(path, module):
		for _, p := range Pure {
			if path == module+p {
				return ""
			}
		}
		return "a project package that is not pure"
	}
	return ""
}

// clock lists, per import path, the functions that read the clock or wait.
var clock = map[string]map[string]bool{
	"time": {"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "AfterFunc": true,
		"Tick": true, "NewTimer": true, "NewTicker": true},
	"k8s.io/apimachinery/pkg/apis/meta/v1": {"Now": true, "NowMicro": true},
}

// Check returns the violations in the non-test Go files of dir, one line
// each as "file:line: what".
func Check(dir string) ([]string, error) {
	fset, files, err := parseDir(dir, 0)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, file := range files {
		names := map[string]string{} // local name → import path
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if why := forbidden(path); why != "" {
				out = append(out, fmt.Sprintf("%s: imports %s (%s)", fset.Position(imp.Pos()), path, why))
			}
			name := path[strings.LastIndex(path, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = path
		}
		ast.Inspect(file, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Obj == nil && clock[names[id.Name]][sel.Sel.Name] {
				out = append(out, fmt.Sprintf("%s: calls %s.%s (reads the clock: take the time as an input)", fset.Position(sel.Pos()), names[id.Name], sel.Sel.Name))
			}
			return true
		})
	}
	return out, nil
}

// parseDir parses the non-test Go files of dir in name order, with mode.
func parseDir(dir string, mode parser.Mode) (*token.FileSet, []*ast.File, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, nil, err
	}
	if len(names) == 0 {
		return nil, nil, fmt.Errorf("%s: no Go files", dir)
	}
	sort.Strings(names)
	fset := token.NewFileSet()
	var files []*ast.File
	for _, f := range names {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, err
		}
		file, err := parser.ParseFile(fset, f, src, mode)
		if err != nil {
			return nil, nil, err
		}
		files = append(files, file)
	}
	return fset, files, nil
}
