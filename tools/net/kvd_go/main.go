// SPDX-License-Identifier: MIT

// kvd-go is a memcached-protocol server written as a Go programmer would,
// with the standard library only: a goroutine per connection (bufio in and
// out, the answers flushed once the pipelined commands read so far are
// done), a table of 64 shards, each a map under a sync.Mutex with its own
// LRU list and memory budget, and cas ids. It speaks the commands kvd
// speaks (get gets set add replace append prepend cas delete incr decr
// touch flush_all version stats verbosity quit, noreply) with memcached
// 1.6's answers, and is goro's kvd's Go peer in the network benchmarks.
package main

import (
	"bufio"
	"bytes"
	"container/list"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

const (
	keyMax      = 250
	itemMax     = 1 << 20
	itemExtra   = 64
	lineMax     = 2048
	maxDelta    = 60 * 60 * 24 * 30
	shardCount  = 64
	readBufSize = 16 << 10
)

type item struct {
	key     string
	value   []byte
	flags   uint32
	exptime int64 // seconds since start; 0: never
	cas     uint64
	elem    *list.Element
}

func (it *item) size() int { return len(it.key) + len(it.value) + itemExtra }

type shard struct {
	mu    sync.Mutex
	items map[string]*item
	lru   *list.List // front: most recent
	used  int
	limit int
}

type table struct {
	shards  [shardCount]shard
	cas     uint64
	started time.Time
	unix0   int64
	flushAt int64 // items stored before it are gone from it on (seconds; 0 none)
	flushMu sync.Mutex

	hits, misses, sets, evictions uint64
	conns, totalConns             int64
}

func newTable(mem int) *table {
	t := &table{started: time.Now()}
	t.unix0 = t.started.Unix() - 2
	for i := range t.shards {
		t.shards[i] = shard{items: make(map[string]*item), lru: list.New(), limit: mem / shardCount}
	}
	return t
}

// now is memcached's current_time: seconds since start, from 2.
func (t *table) now() int64 { return int64(time.Since(t.started)/time.Second) + 2 }

func (t *table) realtime(exp int64) int64 {
	switch {
	case exp < 0:
		return 1
	case exp == 0:
		return 0
	case exp > maxDelta:
		if exp <= t.unix0 {
			return 1
		}
		return exp - t.unix0
	}
	return exp + t.now()
}

func fnv(key string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(key); i++ {
		h = (h ^ uint32(key[i])) * 16777619
	}
	return h ^ h>>15
}

func (t *table) shard(key string) *shard { return &t.shards[fnv(key)>>26] }

// live returns the item of key unless it expired or was flushed (then it
// is removed). s.mu held.
func (t *table) live(s *shard, key string, now int64) *item {
	it := s.items[key]
	if it == nil {
		return nil
	}
	fa := atomic.LoadInt64(&t.flushAt)
	if (it.exptime != 0 && now >= it.exptime) || (fa != 0 && now >= fa && it.cas>>40 < uint64(fa)) {
		s.remove(it)
		return nil
	}
	return it
}

// lockLive locks key's shard and returns it with key's live item (nil
// when there is none); the caller unlocks.
func (t *table) lockLive(key string, now int64) (*shard, *item) {
	s := t.shard(key)
	s.mu.Lock()
	return s, t.live(s, key, now)
}

func (s *shard) remove(it *item) {
	s.lru.Remove(it.elem)
	delete(s.items, it.key)
	s.used -= it.size()
}

// put stores it, evicting from the LRU's back to make room. s.mu held.
func (t *table) put(s *shard, it *item, now int64) bool {
	if it.size() > s.limit {
		return false
	}
	old := s.items[it.key]
	if old != nil {
		s.remove(old)
	}
	for s.used+it.size() > s.limit {
		back := s.lru.Back()
		s.remove(back.Value.(*item))
		atomic.AddUint64(&t.evictions, 1)
	}
	// The store time rides in the cas id's top bits, for flush_all's delay.
	it.cas = uint64(now)<<40 | atomic.AddUint64(&t.cas, 1)&(1<<40-1)
	it.elem = s.lru.PushFront(it)
	s.items[it.key] = it
	s.used += it.size()
	atomic.AddUint64(&t.sets, 1)
	return true
}

// ---- the protocol

type conn struct {
	t  *table
	r  *bufio.Reader
	w  *bufio.Writer
	nc net.Conn
}

// readLine returns the next command line without its LF (and CR); nil
// when the connection is done or the line is too long.
func (c *conn) readLine() ([]byte, error) {
	line, err := c.r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// a long get may go on; anything else over the limit is hung up on
		trimmed := bytes.TrimLeft(line, " ")
		if !bytes.HasPrefix(trimmed, []byte("get ")) && !bytes.HasPrefix(trimmed, []byte("gets ")) {
			return nil, err
		}
		long := append([]byte(nil), line...)
		for err == bufio.ErrBufferFull && len(long) < 64<<10 {
			line, err = c.r.ReadSlice('\n')
			long = append(long, line...)
		}
		if err != nil {
			return nil, err
		}
		line = long
	} else if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

func fields(line []byte) [][]byte {
	var w [][]byte
	for _, f := range bytes.Split(line, []byte(" ")) {
		if len(f) > 0 {
			w = append(w, f)
		}
	}
	return w
}

// strtoull as memcached's safe_strtoull reads a word.
func parseU64(b []byte) (uint64, bool) {
	s := string(b)
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
		if int64(v) < 0 {
			return 0, false
		}
	}
	return v, true
}

// strtol then an int32, as memcached's safe_strtol.
func parseI32(b []byte) (int32, bool) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, false
	}
	return int32(v), true
}

func (c *conn) out(noreply bool, s string) {
	if !noreply {
		c.w.WriteString(s)
	}
}

func (c *conn) serve() {
	defer c.nc.Close()
	atomic.AddInt64(&c.t.conns, 1)
	atomic.AddInt64(&c.t.totalConns, 1)
	defer atomic.AddInt64(&c.t.conns, -1)
	for {
		line, err := c.readLine()
		if err != nil {
			c.w.Flush()
			return
		}
		if !c.command(line) {
			c.w.Flush()
			return
		}
		if c.r.Buffered() == 0 {
			if c.w.Flush() != nil {
				return
			}
		}
	}
}

// command carries out one line; false hangs up.
// keyAndNumber checks the line of a command of a key and a number (incr,
// decr, touch: "cmd key number [noreply]") as memcached does, in its
// order: the word count, the key's length, then the number, which parse
// reads; on a fault it answers memcached's error line (badNumber for the
// number) and returns false.
func (c *conn) keyAndNumber(w [][]byte, noreply bool, badNumber string, parse func([]byte) bool) bool {
	if len(w) != 3 && len(w) != 4 {
		c.out(false, "ERROR\r\n")
		return false
	}
	ok := parse(w[2])
	if len(w[1]) > keyMax {
		c.out(noreply, "CLIENT_ERROR bad command line format\r\n")
		return false
	}
	if !ok {
		c.out(noreply, badNumber)
		return false
	}
	return true
}

func (c *conn) command(line []byte) bool {
	w := fields(line)
	if len(w) == 0 {
		c.out(false, "ERROR\r\n")
		return true
	}
	t, now := c.t, c.t.now()
	noreply := len(w) > 1 && string(w[len(w)-1]) == "noreply"
	switch cmd := string(w[0]); cmd {
	case "get", "gets":
		if len(w) < 2 {
			c.out(false, "ERROR\r\n")
			return true
		}
		for _, k := range w[1:] {
			if len(k) > keyMax {
				c.out(false, "CLIENT_ERROR bad command line format\r\n")
				return true
			}
		}
		for _, k := range w[1:] {
			key := string(k)
			s, it := t.lockLive(key, now)
			if it != nil {
				s.lru.MoveToFront(it.elem)
				c.w.WriteString("VALUE " + key + " " + strconv.FormatUint(uint64(it.flags), 10) + " " +
					strconv.Itoa(len(it.value)))
				if cmd == "gets" {
					c.w.WriteString(" " + strconv.FormatUint(it.cas, 10))
				}
				c.w.WriteString("\r\n")
				c.w.Write(it.value)
				c.w.WriteString("\r\n")
				atomic.AddUint64(&t.hits, 1)
			} else {
				atomic.AddUint64(&t.misses, 1)
			}
			s.mu.Unlock()
		}
		c.w.WriteString("END\r\n")
	case "set", "add", "replace", "append", "prepend", "cas":
		return c.store(cmd, w, noreply, now)
	case "delete":
		if len(w) < 2 || len(w) > 4 {
			c.out(false, "ERROR\r\n")
			return true
		}
		if len(w) > 2 {
			zero := string(w[2]) == "0"
			if !((len(w) == 3 && (zero || noreply)) || (len(w) == 4 && zero && noreply)) {
				c.out(noreply, "CLIENT_ERROR bad command line format.  Usage: delete <key> [noreply]\r\n")
				return true
			}
		}
		if len(w[1]) > keyMax {
			c.out(noreply, "CLIENT_ERROR bad command line format\r\n")
			return true
		}
		key := string(w[1])
		s, it := t.lockLive(key, now)
		if it != nil {
			s.remove(it)
		}
		s.mu.Unlock()
		if it != nil {
			c.out(noreply, "DELETED\r\n")
		} else {
			c.out(noreply, "NOT_FOUND\r\n")
		}
	case "incr", "decr":
		var delta uint64
		if !c.keyAndNumber(w, noreply, "CLIENT_ERROR invalid numeric delta argument\r\n",
			func(b []byte) (ok bool) { delta, ok = parseU64(b); return }) {
			return true
		}
		key := string(w[1])
		s, it := t.lockLive(key, now)
		var reply string
		if it == nil {
			reply = "NOT_FOUND\r\n"
		} else if v, ok := parseU64(bytes.TrimSpace(it.value)); !ok || len(it.value) == 0 {
			reply = "CLIENT_ERROR cannot increment or decrement non-numeric value\r\n"
		} else {
			if cmd == "incr" {
				v += delta
			} else if delta > v {
				v = 0
			} else {
				v -= delta
			}
			num := strconv.FormatUint(v, 10)
			if len(num) <= len(it.value) {
				copy(it.value, num)
				for i := len(num); i < len(it.value); i++ {
					it.value[i] = ' '
				}
			} else {
				nit := &item{key: key, value: []byte(num), flags: it.flags, exptime: it.exptime}
				t.put(s, nit, now)
			}
			reply = num + "\r\n"
		}
		s.mu.Unlock()
		c.out(noreply, reply)
	case "touch":
		var exp int32
		if !c.keyAndNumber(w, noreply, "CLIENT_ERROR invalid exptime argument\r\n",
			func(b []byte) (ok bool) { exp, ok = parseI32(b); return }) {
			return true
		}
		key := string(w[1])
		s, it := t.lockLive(key, now)
		if it != nil {
			it.exptime = t.realtime(int64(exp))
			s.lru.MoveToFront(it.elem)
		}
		s.mu.Unlock()
		if it != nil {
			c.out(noreply, "TOUCHED\r\n")
		} else {
			c.out(noreply, "NOT_FOUND\r\n")
		}
	case "flush_all":
		if len(w) > 3 {
			c.out(false, "ERROR\r\n")
			return true
		}
		var delay int32
		if (noreply && len(w) == 3) || (!noreply && len(w) == 2) {
			d, ok := parseI32(w[1])
			if !ok {
				c.out(noreply, "CLIENT_ERROR invalid exptime argument\r\n")
				return true
			}
			delay = d
		}
		if delay > 0 {
			atomic.StoreInt64(&t.flushAt, t.realtime(int64(delay)))
		} else {
			for i := range t.shards {
				s := &t.shards[i]
				s.mu.Lock()
				s.items, s.lru, s.used = make(map[string]*item), list.New(), 0
				s.mu.Unlock()
			}
		}
		c.out(noreply, "OK\r\n")
	case "version":
		c.out(false, "VERSION 1.6.0-go-kvd\r\n")
	case "verbosity":
		if len(w) != 2 && len(w) != 3 {
			c.out(false, "ERROR\r\n")
			return true
		}
		if _, ok := parseU64(w[1]); !ok {
			c.out(noreply, "CLIENT_ERROR bad command line format\r\n")
			return true
		}
		c.out(noreply, "OK\r\n")
	case "stats":
		if len(w) != 1 {
			c.out(false, "ERROR\r\n")
			return true
		}
		fmt.Fprintf(c.w, "STAT pid %d\r\nSTAT uptime %d\r\nSTAT version 1.6.0-go-kvd\r\nSTAT curr_connections %d\r\n"+
			"STAT total_connections %d\r\nSTAT get_hits %d\r\nSTAT get_misses %d\r\nSTAT cmd_set %d\r\n"+
			"STAT evictions %d\r\nSTAT threads %d\r\nEND\r\n", os.Getpid(), now, atomic.LoadInt64(&t.conns),
			atomic.LoadInt64(&t.totalConns), atomic.LoadUint64(&t.hits), atomic.LoadUint64(&t.misses),
			atomic.LoadUint64(&t.sets), atomic.LoadUint64(&t.evictions), runtime.GOMAXPROCS(0))
	case "quit":
		return false
	default:
		if len(w) >= 2 && bytes.HasPrefix(w[len(w)-1], []byte("HTTP/")) {
			// memcached hangs up at once, dropping answers not yet sent
			c.w.Reset(c.nc)
			return false
		}
		c.out(false, "ERROR\r\n")
	}
	return true
}

func (c *conn) store(cmd string, w [][]byte, noreply bool, now int64) bool {
	isCas := cmd == "cas"
	want := 5
	if isCas {
		want = 6
	}
	if len(w) != want && len(w) != want+1 {
		c.out(false, "ERROR\r\n")
		return true
	}
	flags, okF := parseU64(w[2])
	exp, okE := parseI32(w[3])
	vlen, okL := parseI32(w[4])
	var casIn uint64
	okC := true
	if isCas {
		casIn, okC = parseU64(w[5])
	}
	if len(w[1]) > keyMax || !okF || !okE || !okL || !okC || vlen < 0 {
		c.out(noreply, "CLIENT_ERROR bad command line format\r\n")
		return true
	}
	key := string(w[1])
	if len(key)+int(vlen)+2+itemExtra > itemMax {
		if _, err := c.r.Discard(int(vlen) + 2); err != nil {
			return false
		}
		if cmd == "set" {
			s := c.t.shard(key)
			s.mu.Lock()
			if it := s.items[key]; it != nil {
				s.remove(it)
			}
			s.mu.Unlock()
		}
		c.out(noreply, "SERVER_ERROR object too large for cache\r\n")
		return true
	}
	data := make([]byte, int(vlen)+2)
	if _, err := readFull(c.r, data); err != nil {
		return false
	}
	if data[vlen] != '\r' || data[vlen+1] != '\n' {
		c.out(noreply, "CLIENT_ERROR bad data chunk\r\n")
		return true
	}
	data = data[:vlen]
	t := c.t
	s, old := t.lockLive(key, now)
	reply := "STORED\r\n"
	switch {
	case cmd == "add" && old != nil:
		s.lru.MoveToFront(old.elem)
		reply = "NOT_STORED\r\n"
	case (cmd == "replace" || cmd == "append" || cmd == "prepend") && old == nil:
		reply = "NOT_STORED\r\n"
	case isCas && old == nil:
		reply = "NOT_FOUND\r\n"
	case isCas && old.cas != casIn:
		reply = "EXISTS\r\n"
	default:
		it := &item{key: key, value: data, flags: uint32(flags), exptime: t.realtime(int64(exp))}
		if cmd == "append" || cmd == "prepend" {
			it.flags, it.exptime = old.flags, old.exptime
			if cmd == "append" {
				it.value = append(append([]byte(nil), old.value...), data...)
			} else {
				it.value = append(append([]byte(nil), data...), old.value...)
			}
		}
		if !t.put(s, it, now) {
			if cmd == "set" && old != nil {
				s.remove(old)
			}
			s.mu.Unlock()
			c.out(false, "SERVER_ERROR out of memory storing object\r\n")
			return true
		}
	}
	s.mu.Unlock()
	c.out(noreply, reply)
	return true
}

func readFull(r *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func main() {
	port := flag.Int("port", 11211, "TCP port")
	mem := flag.Int("mem", 64<<20, "bytes of items")
	flag.Parse()
	t := newTable(*mem)
	ln, err := net.Listen("tcp", fmt.Sprintf(":%d", *port))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("kvd-go: listening on :%d, GOMAXPROCS=%d, %s\n", *port, runtime.GOMAXPROCS(0), runtime.Version())
	for {
		nc, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		c := &conn{t: t, r: bufio.NewReaderSize(nc, readBufSize), w: bufio.NewWriter(nc), nc: nc}
		go c.serve()
	}
}
