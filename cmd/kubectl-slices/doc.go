// Command kubectl-slices is installed on PATH and run by kubectl as
// `kubectl slices`. It only wires the process (streams, signals, exit code);
// everything else lives in pkg/.
package main
