package main

import "github.com/kubectl-slices/kubectl-slices/test/controlplane"

// auditEvent is one completed write from the API server's audit log.
type auditEvent = controlplane.AuditEvent
