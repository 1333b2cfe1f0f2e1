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

// An error about a 70 KB argument quotes its first 200 bytes and says how
// many more there were.
func TestPodsHugeClipped(t *testing.T) {
	v := strings.Repeat("a", 70_000)
	for _, in := range [][]string{{"pod/" + v}, {"pod/a", v + "/x"}} {
		_, err := Pods(in)
		if err == nil || len(err.Error()) > 400 || !strings.Contains(err.Error(), "... (") {
			t.Errorf("Pods(%.20v): %.300v", in, err)
		}
	}
}
