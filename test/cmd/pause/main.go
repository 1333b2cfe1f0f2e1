// Command pause is the sandbox process of the test node's Pods: it holds the
// Pod's namespaces, sleeps, and exits on SIGTERM or SIGINT (as PID 1 it gets
// no default handlers). Built static into the node's local pause image, so
// that containerd never pulls one.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
}
