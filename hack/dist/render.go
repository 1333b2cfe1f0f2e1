package main

import (
	"bytes"
	"fmt"
	"text/template"
)

// render executes a krew-release-bot template as the bot does: .TagName is
// the release tag, and addURIAndSha expands its URL (itself a template of
// .TagName) into the manifest's uri and sha256 lines. The bot downloads the
// asset to hash it; here sha256Of answers from the archives just built.
func render(tmpl, tag string, sha256Of func(uri string) (string, error)) (string, error) {
	data := struct{ TagName string }{tag}
	funcs := template.FuncMap{
		"addURIAndSha": func(url, tag string) (string, error) {
			t, err := template.New("url").Parse(url)
			if err != nil {
				return "", err
			}
			var uri bytes.Buffer
			if err := t.Execute(&uri, struct{ TagName string }{tag}); err != nil {
				return "", err
			}
			sum, err := sha256Of(uri.String())
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", uri.String(), sum), nil
		},
	}
	t, err := template.New("krew").Funcs(funcs).Parse(tmpl)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data); err != nil {
		return "", err
	}
	return out.String(), nil
}
