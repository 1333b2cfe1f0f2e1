package args

import (
	"strings"
	"testing"
)

func TestPods(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
		err  bool
	}{
		{[]string{"pod/web-0"}, "web-0", false},
		{[]string{"pods/a", "po/b"}, "a b", false},
		{[]string{"pod", "a", "pod/b"}, "a b", false},
		{[]string{"pod"}, "", true},
		{[]string{"pod/a", "svc/b"}, "", true},
		{[]string{"web"}, "", true},
		{[]string{"pod/Web_0"}, "", true},
	} {
		given := append([]string{}, c.in...)
		got, err := Pods(c.in)
		if (err != nil) != c.err || strings.Join(got, " ") != c.want {
			t.Errorf("Pods(%v) = %v, %v", c.in, got, err)
		}
		if strings.Join(given, " ") != strings.Join(c.in, " ") {
			t.Errorf("Pods changed its input: %v", c.in)
		}
	}
	if !NamesPods([]string{"po/x"}) || NamesPods([]string{"svc/x"}) || NamesPods(nil) {
		t.Error("NamesPods")
	}
}
