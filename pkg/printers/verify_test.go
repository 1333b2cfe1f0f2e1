package printers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kubectl-slices/kubectl-slices/pkg/verify/dnsexpect"
	"github.com/kubectl-slices/kubectl-slices/pkg/verify/verdict"
)

func verifyReport() verdict.Report {
	since := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC)
	row := verdict.NodeRow{Node: "node-a", Proxy: "kube-proxy", Mode: "nftables", Pod: "kube-system/kube-proxy-a", LastSync: &since,
		Expected: 3, Programmed: 14, Status: verdict.Drift, Reason: "1 missing, 12 extra"}
	row.Missing = []verdict.Finding{{Service: "shop/web", Port: "http", What: "endpoint", Chain: "service-X", Endpoint: "10.0.0.2:8080", Since: &since,
		Detail: "endpoint chain endpoint-Y has no DNAT rule: traffic sent there is not delivered"}}
	for i := range 12 {
		row.Extra = append(row.Extra, verdict.Finding{Service: "shop/web", Port: "http", What: "endpoint", Chain: "service-X", Endpoint: fmt.Sprintf("10.9.0.%d:80\x1b[2J", i)})
	}
	return verdict.Report{Status: verdict.Drift, Services: []verdict.ServiceRow{{Namespace: "shop", Name: "web", Slices: 1, LastChange: &since, Plan: verdict.PlanAgrees},
		{Namespace: "shop", Name: "api", Plan: verdict.PlanDiffers, PlanDetail: "IPv4 port http: the plan reaches 10.0.0.7:80, the slices in the API do not"}},
		Nodes:     []verdict.NodeRow{row, {Node: "node-b", Proxy: "none", Status: verdict.Unknown, Reason: "no kube-proxy Pod on the node"}},
		DNS:       []verdict.DNSRow{{Replica: "kube-system/coredns-a", Result: dnsexpect.Result{Status: dnsexpect.OK}}},
		Diagnosis: "node node-a: kube-proxy lacks endpoint 10.0.0.2:8080", Next: "kubectl logs -n kube-system kube-proxy-a --since=1h"}
}

func TestVerifyTable(t *testing.T) {
	var b bytes.Buffer
	Verify(&b, Style{}, verifyReport())
	out := b.String()
	for _, want := range []string{
		"shop       web      1       2026-11-27T05:00:00Z  agrees",
		"shop       api      0       -                     differs: IPv4 port http: the plan reaches 10.0.0.7:80, the slices in the API do not",
		"NODE    PROXY                LAST SYNC             EXPECTED  PROGRAMMED  MISSING  EXTRA  STATUS   REASON",
		"node-a  kube-proxy/nftables  2026-11-27T05:00:00Z  3         14          1        12     DRIFT    1 missing, 12 extra",
		"  missing: shop/web:http endpoint 10.0.0.2:8080 (chain service-X): endpoint chain endpoint-Y has no DNAT rule: traffic sent there is not delivered\n",
		`  extra: shop/web:http endpoint "10.9.0.0:80\x1b[2J" (chain service-X)` + "\n",
		"  ... 3 more (-o json lists them all)",
		"DNS REPLICA            MISSING  EXTRA  STATUS  REASON\nkube-system/coredns-a  0        0      OK",
		"node-b  none", "UNKNOWN  no kube-proxy Pod on the node",
		"DRIFT: node node-a: kube-proxy lacks endpoint 10.0.0.2:8080\nNext: kubectl logs -n kube-system kube-proxy-a --since=1h\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Errorf("a node's answer reached the terminal raw:\n%q", out)
	}
}

func TestVerifyJSON(t *testing.T) {
	var b bytes.Buffer
	if err := VerifyOutput(&b, Style{}, "json", verifyReport()); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	nodes := back["nodes"].([]any)
	if back["status"] != "DRIFT" || len(nodes) != 2 || len(nodes[0].(map[string]any)["extra"].([]any)) != 12 {
		t.Fatalf("json: %s", b.String())
	}
}
