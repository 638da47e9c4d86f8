// SPDX-License-Identifier: MIT

// httpd-go is goro's httpd written as a Go programmer would, with the
// standard library only: net/http's server (a goroutine per connection,
// keep-alive and pipelining), the same paths and answers as apps/httpd,
// so that the same clients, checked the same way, measure both. It runs
// as /init's child in the Linux guest of the network benchmarks.
//
//	GET /             "Hello, World!"
//	GET /work?us=N    computes for N microseconds (0..1000000); body "N\n"
//	GET /spin?n=N     computes N xorshift rounds (0..10^10); body "N\n"
//	GET /sleep?ms=N   sleeps N milliseconds (0..60000); body "N\n"
//	POST /echo        the request's body (at most 1 MiB)
//	GET /stats        the runtime's counters, one "name value" a line, and
//	                  Linux's listen queue's: somaxconn, and the SYNs and
//	                  handshakes dropped because a listener was full
//	                  (TcpExt ListenOverflows and ListenDrops)
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

const maxEcho = 1 << 20

var (
	requests uint64
	sink     uint64 // the work's result, so that it is not optimized away
)

// work computes for d: xorshift rounds between clock reads, as apps/httpd
// does, so that both sides spend the time the same way.
func work(d time.Duration) {
	x := uint64(88172645463325252)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 64; i++ {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
		}
	}
	atomic.AddUint64(&sink, x)
}

// spin computes n rounds with no clock: work in instructions, not time.
func spin(n int) {
	x := uint64(88172645463325252)
	for i := 0; i < n; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	atomic.AddUint64(&sink, x)
}

// number reads the query parameter name as an integer in [0, max]; false
// (after answering 400) when absent or out of range.
func number(w http.ResponseWriter, r *http.Request, name string, max int) (int, bool) {
	n, err := strconv.Atoi(r.URL.Query().Get(name))
	if err != nil || n < 0 || n > max {
		http.Error(w, fmt.Sprintf("%s: an integer from 0 to %d", name, max), http.StatusBadRequest)
		return 0, false
	}
	return n, true
}

func text(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	io.WriteString(w, body)
}

func onlyMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method || (method == http.MethodGet && r.Method == http.MethodHead) {
		return true
	}
	w.Header().Set("Allow", method)
	http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	return false
}

// listenCounters: Linux's somaxconn and its counts of connections a full
// listen queue cost, "name value" lines; none where /proc lacks them.
func listenCounters() string {
	var b strings.Builder
	if v, err := os.ReadFile("/proc/sys/net/core/somaxconn"); err == nil {
		fmt.Fprintf(&b, "somaxconn %s\n", strings.TrimSpace(string(v)))
	}
	data, err := os.ReadFile("/proc/net/netstat")
	if err != nil {
		return b.String()
	}
	// Pairs of lines: "TcpExt: names..." then "TcpExt: values...".
	lines := strings.Split(string(data), "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		names, values := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(names) == 0 || names[0] != "TcpExt:" || len(names) != len(values) {
			continue
		}
		for j, n := range names {
			if n == "ListenOverflows" || n == "ListenDrops" {
				fmt.Fprintf(&b, "%s %s\n", strings.ToLower(n[:6])+"_"+strings.ToLower(n[6:]), values[j])
			}
		}
	}
	return b.String()
}

func main() {
	port := flag.Int("port", 8080, "TCP port")
	idle := flag.Duration("idle_timeout", 60*time.Second, "an idle keep-alive connection closes after this")
	readTimeout := flag.Duration("read_timeout", 10*time.Second, "a request's header must arrive within this")
	flag.Parse()

	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		atomic.AddUint64(&requests, 1)
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		if onlyMethod(w, r, http.MethodGet) {
			text(w, "Hello, World!")
		}
	})
	mux.HandleFunc("/work", func(w http.ResponseWriter, r *http.Request) {
		atomic.AddUint64(&requests, 1)
		if !onlyMethod(w, r, http.MethodGet) {
			return
		}
		if us, ok := number(w, r, "us", 1000000); ok {
			work(time.Duration(us) * time.Microsecond)
			text(w, strconv.Itoa(us)+"\n")
		}
	})
	mux.HandleFunc("/spin", func(w http.ResponseWriter, r *http.Request) {
		atomic.AddUint64(&requests, 1)
		if !onlyMethod(w, r, http.MethodGet) {
			return
		}
		if n, ok := number(w, r, "n", 10000000000); ok {
			spin(n)
			text(w, strconv.Itoa(n)+"\n")
		}
	})
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		atomic.AddUint64(&requests, 1)
		if !onlyMethod(w, r, http.MethodGet) {
			return
		}
		if ms, ok := number(w, r, "ms", 60000); ok {
			time.Sleep(time.Duration(ms) * time.Millisecond)
			text(w, strconv.Itoa(ms)+"\n")
		}
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		atomic.AddUint64(&requests, 1)
		if !onlyMethod(w, r, http.MethodPost) {
			return
		}
		// A body announced too large is refused unread: net/http then
		// sends no 100 Continue, and the client need not send it.
		if r.ContentLength > maxEcho {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxEcho))
		if err != nil {
			http.Error(w, "body too large", http.StatusRequestEntityTooLarge)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, r *http.Request) {
		atomic.AddUint64(&requests, 1)
		if !onlyMethod(w, r, http.MethodGet) {
			return
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		text(w, fmt.Sprintf("requests %d\ngoroutines %d\ngomaxprocs %d\nheap_alloc %d\nnum_gc %d\n%s",
			atomic.LoadUint64(&requests), runtime.NumGoroutine(), runtime.GOMAXPROCS(0), ms.HeapAlloc, ms.NumGC,
			listenCounters()))
	})

	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("httpd-go: listening on :%d, GOMAXPROCS=%d, %s\n", *port, runtime.GOMAXPROCS(0), runtime.Version())
	srv := &http.Server{Handler: mux, IdleTimeout: *idle, ReadHeaderTimeout: *readTimeout}
	log.Fatal(srv.Serve(ln))
}
