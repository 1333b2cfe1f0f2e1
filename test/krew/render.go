package krew

import (
	"bytes"
	"fmt"
	"text/template"
)

// Render executes a krew-release-bot template (.krew.yaml) as the bot does:
// .TagName is the release tag and addURIAndSha turns its first argument,
// itself a template of .TagName, into the uri and sha256 lines of a
// platform. The bot downloads the asset to hash it; sha256Of stands in.
func Render(tmpl, tag string, sha256Of func(uri string) (string, error)) (string, error) {
	type data struct{ TagName string }
	funcs := template.FuncMap{
		"addURIAndSha": func(url, tag string) (string, error) {
			t, err := template.New("url").Parse(url)
			if err != nil {
				return "", err
			}
			var uri bytes.Buffer
			if err := t.Execute(&uri, data{tag}); err != nil {
				return "", err
			}
			sum, err := sha256Of(uri.String())
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("uri: %s\n    sha256: %s", uri.String(), sum), nil
		},
	}
	t, err := template.New(".krew.yaml").Funcs(funcs).Parse(tmpl)
	if err != nil {
		return "", err
	}
	var out bytes.Buffer
	if err := t.Execute(&out, data{tag}); err != nil {
		return "", err
	}
	return out.String(), nil
}
