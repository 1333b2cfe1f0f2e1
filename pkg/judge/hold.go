package judge

import (
	"fmt"

	"github.com/kubectl-slices/kubectl-slices/internal/english"
	"github.com/kubectl-slices/kubectl-slices/pkg/reconcile"
)

// HoldWhereCurrent is an Options.Hold that keeps sync from writing where nothing is broken: when
// kube-controller-manager's own slices for the Service exist and publish
// exactly the desired endpoints, slices of ours would only duplicate them
// and, once stale, disagree with them (kube-proxy then picks between the two
// at random). With ours already present it points to release.
func HoldWhereCurrent(managedBy string) func(in reconcile.Input, plan *reconcile.Plan) string {
	return func(in reconcile.Input, plan *reconcile.Plan) string {
		if !plan.Service.Planned() {
			return ""
		}
		hb := JudgeHandback(in.Slices, managedBy, plan.Final())
		if len(hb.Controller) == 0 || !hb.Current {
			return ""
		}
		svc := in.Service
		msg := fmt.Sprintf("kube-controller-manager publishes svc/%s correctly: nothing written (--force writes anyway)", svc.Name)
		if len(hb.Ours) > 0 {
			msg += fmt.Sprintf("; %s of ours duplicate its: hand them back with kubectl slices release svc/%s -n %s",
				english.Plural(len(hb.Ours), "slice", "slices"), svc.Name, svc.Namespace)
		}
		return msg
	}
}
