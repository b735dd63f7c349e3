package testenv

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// SilentServer is a TCP listener on 127.0.0.1 that accepts every connection, reads
// what it is sent and never answers: a hung server, or a peer that took the
// connection and went quiet. Its connections stay open until the test ends.
type SilentServer struct {
	// Addr is its host:port.
	Addr     string
	accepted atomic.Int64
}

// Accepted is how many connections it has taken.
func (s *SilentServer) Accepted() int64 { return s.accepted.Load() }

// NewSilentServer starts a SilentServer that stops when t ends.
func NewSilentServer(t testing.TB) *SilentServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &SilentServer{Addr: ln.Addr().String()}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				if errors.Is(err, net.ErrClosed) {
					return
				}
				continue
			}
			s.accepted.Add(1)
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go func() {
				buf := make([]byte, 4<<10)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return s
}
