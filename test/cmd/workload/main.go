// Command workload is the test node's HTTP workload: it serves / and a
// readiness endpoint /ready that answers 200 or 503. Its readiness is the
// test's to switch, through the Pod's own probe: POST /ready/on or
// /ready/off. It starts ready unless -ready=false. GET /token says whether
// a ServiceAccount token is mounted where in-cluster clients look for it
// ("present" or "absent"), never the token itself.
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// tokenFile is where the kubelet mounts a Pod's ServiceAccount token.
const tokenFile = "/var/run/secrets/kubernetes.io/serviceaccount/token"

func main() {
	addr := flag.String("addr", ":8000", "listen address")
	ready := flag.Bool("ready", true, "start ready")
	flag.Parse()
	var isReady atomic.Bool
	isReady.Store(*ready)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "workload") })
	mux.HandleFunc("GET /ready", func(w http.ResponseWriter, r *http.Request) {
		if !isReady.Load() {
			http.Error(w, "not ready", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ready")
	})
	set := func(v bool) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			isReady.Store(v)
			log.Printf("readiness set to %v", v)
			fmt.Fprintln(w, v)
		}
	}
	mux.HandleFunc("GET /token", func(w http.ResponseWriter, r *http.Request) {
		if _, err := os.Stat(tokenFile); err == nil {
			fmt.Fprintln(w, "present")
			return
		}
		fmt.Fprintln(w, "absent")
	})
	mux.HandleFunc("POST /ready/on", set(true))
	mux.HandleFunc("POST /ready/off", set(false))
	srv := &http.Server{Addr: *addr, Handler: mux}
	go func() {
		sig := make(chan os.Signal, 1)
		signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
		<-sig
		_ = srv.Close()
	}()
	log.Printf("serving on %s, ready=%v", *addr, *ready)
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		log.Fatal(err)
	}
}
