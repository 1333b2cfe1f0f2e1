package proxyread

import (
	"fmt"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
)

// For returns the Reader of a proxy mode, its answers bounded by lim (the
// zero Limits: DefaultLimits).
func For(mode Mode, lim Limits) (Reader, error) {
	switch mode {
	case ModeNftables:
		return Nftables{Limits: lim}, nil
	case ModeIptables:
		return Iptables{Limits: lim}, nil
	}
	return nil, fmt.Errorf("proxy mode %q is not one kube-proxy runs in (%s or %s)", english.Clip(string(mode), clipLen), ModeNftables, ModeIptables)
}
