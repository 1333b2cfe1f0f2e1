package printers

import (
	"fmt"
	"strings"
)

// ElectionLease is the notice that the loop stands for election: the
// Lease namespace/name it competes for, as id.
func ElectionLease(namespace, name, id string) string {
	return fmt.Sprintf("leader election: lease %s/%s as %s", namespace, name, id)
}

// LeaseHeldBy is the notice that another replica, who, leads.
func LeaseHeldBy(namespace, name, who string) string {
	return fmt.Sprintf("lease %s/%s is held by %s", namespace, name, who)
}

// ElectionError is the notice of an error client-go's elector logged (a
// Lease not read, renewed or released): its message, its key-value pairs
// in order, and the error, if any.
func ElectionError(msg string, kv []any, err error) string {
	var b strings.Builder
	b.WriteString("leader election: " + msg)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, " %v=%v", kv[i], kv[i+1])
	}
	if err != nil {
		b.WriteString(": " + err.Error())
	}
	return b.String()
}
