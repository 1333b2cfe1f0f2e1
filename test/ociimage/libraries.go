package ociimage

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// Libraries returns the shared libraries the dynamic binaries (and
// libraries, e.g. plugins loaded with dlopen) need, the dynamic loader among
// them, as Image.Files entries: each at the path the host's loader resolves
// it to, read from there. It asks the host's ldd, so that an image carries a
// distribution's binaries with exactly the libraries they were built
// against. A static binary needs none; a library ldd cannot find is an
// error naming it.
func Libraries(binaries ...string) (map[string]string, error) {
	libs := map[string]string{}
	for _, bin := range binaries {
		var out, errOut bytes.Buffer
		cmd := exec.Command("ldd", bin)
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			if strings.Contains(out.String()+errOut.String(), "not a dynamic executable") {
				continue
			}
			return nil, fmt.Errorf("ldd %s: %v: %s", bin, err, errOut.String())
		}
		if err := parseLdd(bin, out.String(), libs); err != nil {
			return nil, err
		}
	}
	return libs, nil
}

// parseLdd adds the paths of ldd's lines ("libc.so.6 => /lib/x/libc.so.6
// (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)") to libs; the vDSO has
// no file.
func parseLdd(bin, out string, libs map[string]string) error {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], "linux-vdso") || strings.HasPrefix(f[0], "statically"):
		case len(f) >= 3 && f[1] == "=>" && f[2] == "not":
			return fmt.Errorf("%s: library %s not found on this host", bin, f[0])
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			libs[f[2]] = f[2]
		case strings.HasPrefix(f[0], "/"):
			libs[f[0]] = f[0]
		default:
			return fmt.Errorf("%s: unexpected ldd line %q", bin, line)
		}
	}
	return nil
}
