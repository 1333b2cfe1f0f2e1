package controlplane

import "syscall"

// FreezeControllerManager stops kube-controller-manager with SIGSTOP (its
// process group): it keeps its connections and its state but does nothing,
// as a process stuck in a long GC pause or starved of CPU would, and
// resumes where it was at ThawControllerManager.
func (cp *ControlPlane) FreezeControllerManager() {
	cp.kcm.signal(syscall.SIGSTOP)
}

// ThawControllerManager resumes a frozen kube-controller-manager with
// SIGCONT.
func (cp *ControlPlane) ThawControllerManager() {
	cp.kcm.signal(syscall.SIGCONT)
}
