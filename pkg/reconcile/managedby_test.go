package reconcile

import "testing"

func TestManagedByFor(t *testing.T) {
	for _, tc := range []struct {
		value            string
		planned, mirrord string
	}{
		{DefaultManagedBy, DefaultManagedBy, DefaultManagedBy},
		{"mesh.example.io", "mesh.example.io", "mesh.example.io"},
		{ControllerManagedBy, ControllerManagedBy, MirroringManagedBy},
		{MirroringManagedBy, ControllerManagedBy, MirroringManagedBy},
	} {
		if got := ManagedByFor(tc.value, false); got != tc.planned {
			t.Errorf("%s, planned: %s, want %s", tc.value, got, tc.planned)
		}
		if got := ManagedByFor(tc.value, true); got != tc.mirrord {
			t.Errorf("%s, mirrored: %s, want %s", tc.value, got, tc.mirrord)
		}
		if !IsOurs(tc.planned, tc.value) || !IsOurs(tc.mirrord, tc.value) {
			t.Errorf("%s: its own kinds' values not recognised", tc.value)
		}
	}
	if IsOurs(ControllerManagedBy, DefaultManagedBy) || IsOurs(DefaultManagedBy, MirroringManagedBy) {
		t.Error("another value recognised as ours")
	}
}
