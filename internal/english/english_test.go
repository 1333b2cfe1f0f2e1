package english

import "testing"

func TestPlural(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{0, "0 addresses"}, {1, "1 address"}, {2, "2 addresses"}, {-1, "-1 addresses"}} {
		if got := Plural(tc.n, "address", "addresses"); got != tc.want {
			t.Errorf("Plural(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}
