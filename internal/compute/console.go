package compute

import (
	"io"
	"sync"
)

// ConsoleOutput holds what a console printed until its reader takes it. Writes never
// block: the producer is a guest's stream (libvirt's RPC connection must never wait
// on a slow WebSocket client) or a simulation. Past Limit bytes unread, the oldest
// are dropped, as a serial line drops what nobody reads. The zero value is not
// usable; see NewConsoleOutput.
type ConsoleOutput struct {
	mu     sync.Mutex
	more   *sync.Cond
	buf    []byte
	limit  int
	err    error // what Read answers once buf is drained (set by CloseWithError)
	closed bool
}

// NewConsoleOutput returns an empty buffer keeping at most limit unread bytes.
func NewConsoleOutput(limit int) *ConsoleOutput {
	b := &ConsoleOutput{limit: limit}
	b.more = sync.NewCond(&b.mu)
	return b
}

// Write appends p; after CloseWithError it discards p. It never fails.
func (b *ConsoleOutput) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return len(p), nil
	}
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.limit; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	b.more.Broadcast()
	return len(p), nil
}

// Read waits for output and takes what there is; once the buffer is closed and
// drained it answers the close's error (io.EOF by default).
func (b *ConsoleOutput) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) == 0 && !b.closed {
		b.more.Wait()
	}
	if len(b.buf) == 0 {
		return 0, b.err
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	if len(b.buf) == 0 {
		b.buf = nil
	}
	return n, nil
}

// CloseWithError ends the output: reads drain what is left, then answer err (io.EOF
// when nil). Closing again changes nothing.
func (b *ConsoleOutput) CloseWithError(err error) {
	if err == nil {
		err = io.EOF
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.closed {
		b.closed, b.err = true, err
		b.more.Broadcast()
	}
}

// Discard ends the output and drops what was not read: for a reader that has gone.
func (b *ConsoleOutput) Discard() {
	b.mu.Lock()
	b.buf = nil
	b.mu.Unlock()
	b.CloseWithError(io.ErrClosedPipe)
}
