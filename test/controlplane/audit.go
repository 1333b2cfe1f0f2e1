package controlplane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// auditPolicy records, at Metadata (who, what, when, the answer's code,
// no bodies), the completed writes of EndpointSlices, Endpoints and Leases:
// what the fault tests hold the loop to. Everything else is None, so the
// log stays small and costs the API server nothing elsewhere.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted, Panic]
rules:
- level: Metadata
  verbs: [create, update, patch, delete]
  resources:
  - group: discovery.k8s.io
    resources: [endpointslices]
  - group: ""
    resources: [endpoints]
  - group: coordination.k8s.io
    resources: [leases]
- level: None
`

// AuditEvent is one completed write from the audit log (Options.AuditLog).
type AuditEvent struct {
	// Time is the stage's timestamp (the response completed), to the
	// microsecond; Received is when the request arrived.
	Time     time.Time
	Received time.Time
	// User is the authenticated user, e.g. system:serviceaccount:NS:NAME.
	User                            string
	Verb, Resource, Namespace, Name string
	// Code is the HTTP status of the answer.
	Code int
}

func (cp *ControlPlane) auditPath() string { return filepath.Join(cp.Dir, "audit.log") }

// writeAuditPolicy writes the policy and returns kube-apiserver's flags
// for it. The log backend runs in blocking mode: each event is written by
// the request's handler as it returns, with no batch to wait out; the
// policy records few events, so writing each costs nothing measurable. The
// write's effect is visible to other readers a moment earlier (once etcd
// commits it), so a reader that saw the effect may have to read again. The flags
// are in apiArgs, so the restarted and the side API servers append to the
// same file (the backend opens it with O_APPEND, one write per event).
func (cp *ControlPlane) writeAuditPolicy() ([]string, error) {
	policy := filepath.Join(cp.Dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	return []string{"--audit-policy-file", policy, "--audit-log-path", cp.auditPath(),
		"--audit-log-format=json", "--audit-log-mode=blocking", "--audit-log-maxbackup=0"}, nil
}

// auditLine is the part of an audit.k8s.io/v1 Event that AuditEvent keeps.
type auditLine struct {
	Stage    string    `json:"stage"`
	Stamp    time.Time `json:"stageTimestamp"`
	Received time.Time `json:"requestReceivedTimestamp"`
	User     struct {
		Username string `json:"username"`
	} `json:"user"`
	Verb      string `json:"verb"`
	ObjectRef *struct {
		Resource, Namespace, Name string
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// Audit reads the audit log (Options.AuditLog): every completed write it
// recorded so far, in the order written.
func (cp *ControlPlane) Audit() ([]AuditEvent, error) {
	if !cp.opts.AuditLog {
		return nil, fmt.Errorf("the control plane was started without Options.AuditLog")
	}
	b, err := os.ReadFile(cp.auditPath())
	if err != nil {
		return nil, err
	}
	// A line still being written has no newline yet: it is read next time.
	if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
		b = b[:i+1]
	} else {
		b = nil
	}
	var out []AuditEvent
	for n, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var l auditLine
		if err := json.Unmarshal(line, &l); err != nil {
			return nil, fmt.Errorf("audit log line %d: %w", n+1, err)
		}
		if l.Stage != "ResponseComplete" {
			continue
		}
		e := AuditEvent{Time: l.Stamp, Received: l.Received, User: l.User.Username, Verb: l.Verb}
		if l.ObjectRef != nil {
			e.Resource, e.Namespace, e.Name = l.ObjectRef.Resource, l.ObjectRef.Namespace, l.ObjectRef.Name
		}
		if l.ResponseStatus != nil {
			e.Code = l.ResponseStatus.Code
		}
		out = append(out, e)
	}
	return out, nil
}
