package libvirtdriver

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/digitalocean/go-libvirt"

	"github.com/berthhq/berth/internal/compute"
)

// consoleBuffer bounds what a console keeps that its reader has not taken yet.
const consoleBuffer = 256 << 10

// consoleCloseWait is how long Close waits for libvirtd to end the stream it was
// asked to finish before it cuts the console's connection.
const consoleCloseWait = 5 * time.Second

// Console implements compute.Driver with the domain's serial console: libvirt's
// console stream (what virsh console reads), both ways. libvirt attaches one client
// at a time: a new console takes over (VIR_DOMAIN_CONSOLE_FORCE) and the older one's
// output ends with an error.
//
// Each console has a connection to its host of its own. go-libvirt delivers a
// stream's data on the goroutine that reads the connection, so a stream on the
// driver's shared connection would make every other call to that host wait for a
// slow console reader; here the data goes into a buffer that never blocks
// (compute.ConsoleOutput), on a connection nothing else uses, closed with the
// console.
func (d *Driver) Console(ctx context.Context, name string) (io.ReadWriteCloser, error) {
	m, h, l, err := d.live(ctx, name)
	if err != nil {
		return nil, err
	}
	dom, defined, err := d.domain(l, h, m)
	if err != nil {
		return nil, err
	}
	if !defined {
		return nil, compute.ErrNotRunning
	}
	on, err := d.active(l, h, dom)
	if err != nil {
		return nil, err
	}
	if !on {
		return nil, compute.ErrNotRunning
	}
	cl, err := dialContext(ctx, h.URI)
	if err != nil {
		return nil, fmt.Errorf("%w: host %d (%s): console: %v", compute.ErrUnavailable, h.ID, h.URI, err)
	}
	in, typed := io.Pipe()
	c := &console{l: cl, in: in, typed: typed, out: compute.NewConsoleOutput(consoleBuffer), done: make(chan struct{})}
	go c.stream(dom)
	return c, nil
}

// dialContext is Dial, given up when ctx ends first (the connection it may still
// make is then closed).
func dialContext(ctx context.Context, uri string) (*libvirt.Libvirt, error) {
	type res struct {
		l   *libvirt.Libvirt
		err error
	}
	ch := make(chan res, 1)
	go func() {
		l, err := Dial(uri)
		ch <- res{l, err}
	}()
	select {
	case r := <-ch:
		return r.l, r.err
	case <-ctx.Done():
		go func() {
			if r := <-ch; r.l != nil {
				_ = r.l.Disconnect()
			}
		}()
		return nil, ctx.Err()
	}
}

// console is one attachment to a domain's serial console.
type console struct {
	l     *libvirt.Libvirt // this console's own connection
	in    *io.PipeReader   // what is typed, as the stream sends it
	typed *io.PipeWriter
	out   *compute.ConsoleOutput
	done  chan struct{} // closed when the stream has ended

	closeOnce, hangUp sync.Once
}

// stream runs the console stream until it ends: the guest stopped, another console
// took over, or Close finished it.
func (c *console) stream(dom libvirt.Domain) {
	defer close(c.done)
	err := c.l.DomainOpenConsoleBidirectional(dom, nil, c.in, c.out, uint32(libvirt.DomainConsoleForce))
	c.out.CloseWithError(err)
	// Nothing reads what is typed any more: Write fails instead of waiting.
	c.in.CloseWithError(io.ErrClosedPipe)
	c.disconnect()
}

func (c *console) disconnect() { c.hangUp.Do(func() { _ = c.l.Disconnect() }) }

// Read gives what the guest printed; io.EOF once the stream has ended.
func (c *console) Read(p []byte) (int, error) { return c.out.Read(p) }

// Write types p into the guest's serial line.
func (c *console) Write(p []byte) (int, error) { return c.typed.Write(p) }

// Close finishes the stream (libvirtd then ends it), waiting a little for that
// before it cuts the connection.
func (c *console) Close() error {
	c.closeOnce.Do(func() {
		_ = c.typed.Close() // the stream sends its end once it has read all that was typed
		t := time.NewTimer(consoleCloseWait)
		defer t.Stop()
		select {
		case <-c.done:
		case <-t.C:
			go c.disconnect() // Disconnect asks libvirtd first, which may not answer
		}
		c.out.Discard()
	})
	return nil
}
