// Command workload is the test node's HTTP workload: it serves / and a
// readiness endpoint /ready that answers 200 or 503. Its readiness is the
// test's to switch, through the Pod's own probe: POST /ready/on or
// /ready/off. It starts ready unless -ready=false. GET /token says whether
// a ServiceAccount token is mounted where in-cluster clients look for it
// ("present" or "absent"), never the token itself. GET /hostname answers
// the Pod's name (its hostname), so a client tells a Service's backends
// apart; GET /fetch?url=URL&count=N makes N requests to URL from the Pod's
// network, each on a new connection (a new choice of backend), and answers
// one line per request: the body, or "error: ..." (a Pod without a shell or
// curl still tests a Service's ClusterIP from where Pods stand). GET
// /resolve?name=NAME looks NAME up with Go's resolver, which reads the
// /etc/resolv.conf the kubelet wrote (its nameserver, search list and
// ndots), and answers the addresses sorted, one a line, or 502 and the
// error.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
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
	mux.HandleFunc("GET /hostname", func(w http.ResponseWriter, r *http.Request) {
		name, err := os.Hostname()
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		fmt.Fprintln(w, name)
	})
	mux.HandleFunc("GET /fetch", fetch)
	mux.HandleFunc("GET /resolve", resolve)
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

// fetch serves /fetch: count GETs of url, one line of answer each.
func fetch(w http.ResponseWriter, r *http.Request) {
	url := r.URL.Query().Get("url")
	count, err := strconv.Atoi(r.URL.Query().Get("count"))
	if url == "" || err != nil || count < 1 || count > 1000 {
		http.Error(w, "want ?url=URL&count=1..1000", http.StatusBadRequest)
		return
	}
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range count {
		fmt.Fprintln(w, fetchOne(client, url))
	}
}

func fetchOne(client *http.Client, url string) string {
	resp, err := client.Get(url)
	if err != nil {
		return "error: " + strings.ReplaceAll(err.Error(), "\n", " ")
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("error: status %d, %v", resp.StatusCode, err)
	}
	return strings.TrimSpace(string(body))
}

// resolve serves /resolve: the addresses of ?name=, each lookup bounded.
func resolve(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	if name == "" {
		http.Error(w, "want ?name=NAME", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, name)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	sort.Strings(addrs)
	fmt.Fprint(w, strings.Join(addrs, "\n")+"\n")
}
