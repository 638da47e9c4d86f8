// SPDX-License-Identifier: MIT

// httpclient-go drives an HTTP server with Go's own client (net/http's
// Transport, standard library only), the way a Go program would: pooled
// keep-alive connections, bodies of known length, bodies of unknown
// length (which Go sends chunked), Expect: 100-continue, bodies over the
// server's limit, many requests at once. tests/net/check_httpd.py builds
// and runs it against httpd (and the peers). One line per check:
//
//	PASS keepalive
//	FAIL echo_chunked: 300000 bytes sent, 0 back
//
// Usage: httpclient-go [-limit BYTES] HOST:PORT; the exit status is 1 when
// a check failed. Every request has a timeout that only a hang reaches.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"time"
)

const hang = 120 * time.Second // no request may take longer

var (
	base   string
	limit  = flag.Int("limit", 1<<20, "the server's largest body (POST /echo's max_body)")
	failed = false
)

// hidden hides a reader's length: Go's client then sends the body chunked.
type hidden struct{ r io.Reader }

func (h hidden) Read(p []byte) (int, error) { return h.r.Read(p) }

// pattern is n bytes holding every byte value.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/256)
	}
	return b
}

type trace struct {
	mu        sync.Mutex
	reused    int
	continued int
	chunked   bool
}

func (t *trace) ctx() context.Context {
	return httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
		GotConn: func(i httptrace.GotConnInfo) {
			t.mu.Lock()
			if i.Reused {
				t.reused++
			}
			t.mu.Unlock()
		},
		Got100Continue: func() {
			t.mu.Lock()
			t.continued++
			t.mu.Unlock()
		},
		WroteHeaderField: func(k string, v []string) {
			if strings.EqualFold(k, "Transfer-Encoding") && len(v) == 1 && v[0] == "chunked" {
				t.mu.Lock()
				t.chunked = true
				t.mu.Unlock()
			}
		},
	})
}

func client() *http.Client {
	return &http.Client{Timeout: hang, Transport: &http.Transport{
		MaxIdleConnsPerHost: 16, ExpectContinueTimeout: hang, DisableCompression: true}}
}

// do sends one request; the status and body.
func do(c *http.Client, t *trace, method, path string, body io.Reader, hdr map[string]string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(t.ctx(), method, base+path, body)
	if err != nil {
		return 0, nil, err
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

func check(name string, f func() error) {
	if err := f(); err != nil {
		failed = true
		fmt.Printf("FAIL %s: %v\n", name, err)
	} else {
		fmt.Printf("PASS %s\n", name)
	}
}

// echo posts data (its length hidden when chunked) with hdr; nil when it
// comes back whole.
func echo(t *trace, data []byte, chunked bool, hdr map[string]string) error {
	var body io.Reader = bytes.NewReader(data)
	if chunked {
		body = hidden{body}
	}
	st, got, err := do(client(), t, "POST", "/echo", body, hdr)
	if err != nil {
		return err
	}
	if st != 200 || !bytes.Equal(got, data) {
		return fmt.Errorf("status %d, %d bytes sent, %d back (equal: %v)", st, len(data), len(got),
			bytes.Equal(got, data))
	}
	if chunked && !t.chunked {
		return fmt.Errorf("Go's client did not send the body chunked")
	}
	return nil
}

// tooLarge posts more than the server takes: it must answer 413, which
// Go's client returns as a response, not an error.
func tooLarge(chunked bool, hdr map[string]string) error {
	t := &trace{}
	var body io.Reader = bytes.NewReader(pattern(*limit + 1))
	if chunked {
		body = hidden{body}
	}
	st, _, err := do(client(), t, "POST", "/echo", body, hdr)
	if err != nil {
		return fmt.Errorf("%v (want a 413 answer)", err)
	}
	if st != 413 {
		return fmt.Errorf("status %d, want 413", st)
	}
	if hdr != nil && t.continued > 0 {
		return fmt.Errorf("100 Continue sent for a body the server then refused")
	}
	return nil
}

func main() {
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: httpclient-go [-limit BYTES] HOST:PORT")
		os.Exit(2)
	}
	base = "http://" + flag.Arg(0)
	expect := map[string]string{"Expect": "100-continue"}

	check("keepalive", func() error {
		c, t := client(), &trace{}
		for i := 0; i < 20; i++ {
			st, b, err := do(c, t, "GET", "/", nil, nil)
			if err != nil || st != 200 || string(b) != "Hello, World!" {
				return fmt.Errorf("request %d: %d %q %v", i, st, b, err)
			}
		}
		if t.reused != 19 {
			return fmt.Errorf("%d of 19 requests reused the connection", t.reused)
		}
		return nil
	})
	check("head_and_404", func() error {
		c, t := client(), &trace{}
		req, _ := http.NewRequest("HEAD", base+"/", nil)
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ContentLength != 13 {
			return fmt.Errorf("HEAD /: %d, length %d", resp.StatusCode, resp.ContentLength)
		}
		st, _, err := do(c, t, "GET", "/nowhere", nil, nil)
		if err != nil || st != 404 {
			return fmt.Errorf("GET /nowhere: %d %v", st, err)
		}
		return nil
	})
	check("echo_length", func() error { return echo(&trace{}, pattern(100000), false, nil) })
	check("echo_chunked", func() error { return echo(&trace{}, pattern(300000), true, nil) })
	check("echo_empty_chunked", func() error { return echo(&trace{}, nil, true, nil) })
	check("echo_expect", func() error {
		t := &trace{}
		if err := echo(t, pattern(200000), false, expect); err != nil {
			return err
		}
		if t.continued != 1 {
			return fmt.Errorf("%d 100 Continue answers", t.continued)
		}
		return nil
	})
	check("echo_chunked_expect", func() error { return echo(&trace{}, pattern(70000), true, expect) })
	check("too_large_length", func() error { return tooLarge(false, nil) })
	check("too_large_chunked", func() error { return tooLarge(true, nil) })
	check("too_large_expect", func() error { return tooLarge(false, expect) })
	check("concurrent", func() error {
		c := client()
		errs := make(chan error, 8)
		for g := 0; g < 8; g++ {
			go func(g int) {
				t := &trace{}
				for i := 0; i < 25; i++ {
					path := fmt.Sprintf("/work?us=%d", g*100+i)
					st, b, err := do(c, t, "GET", path, nil, nil)
					if err != nil || st != 200 || string(b) != fmt.Sprintf("%d\n", g*100+i) {
						errs <- fmt.Errorf("%s: %d %q %v", path, st, b, err)
						return
					}
				}
				errs <- nil
			}(g)
		}
		for g := 0; g < 8; g++ {
			if err := <-errs; err != nil {
				return err
			}
		}
		return nil
	})
	if failed {
		os.Exit(1)
	}
}
