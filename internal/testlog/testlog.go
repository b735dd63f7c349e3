// Package testlog holds what tests share about logs.
package testlog

import (
	"bytes"
	"sync"
)

// Buffer is a log's output that a test reads while a server (a goroutine, or a
// process through its stdout and stderr) writes it.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Bytes is a copy of what was written so far.
func (b *Buffer) Bytes() []byte { return []byte(b.String()) }
