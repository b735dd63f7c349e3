package libvirtdriver

import (
	"context"
	"errors"
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

// consoleWatch is how often a console asks whether its guest still runs
// (console.watch).
const consoleWatch = time.Second

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
	go c.stream(dom, func() (bool, error) { return d.runs(name, dom) })
	return c, nil
}

// runs reports whether a console's guest still runs, asked on the driver's own
// connection to its host (not the console's, which a stuck stream may hold up):
// false once the machine is gone or its domain is undefined or stopped; an error
// when that cannot be told now.
func (d *Driver) runs(name string, dom libvirt.Domain) (bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), consoleWatch)
	defer cancel()
	_, h, l, err := d.live(ctx, name)
	if errors.Is(err, compute.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	on, err := d.active(l, h, dom)
	if isCode(err, libvirt.ErrNoDomain) {
		return false, nil
	}
	return on, err
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
func (c *console) stream(dom libvirt.Domain, runs func() (bool, error)) {
	defer close(c.done)
	streamed := make(chan struct{})
	stopped := make(chan struct{})
	go c.watch(runs, streamed, stopped)
	err := c.l.DomainOpenConsoleBidirectional(dom, nil, c.in, c.out, uint32(libvirt.DomainConsoleForce))
	close(streamed)
	select {
	case <-stopped:
		err = nil // the guest stopped: the output's clean end
	default:
	}
	c.out.CloseWithError(err)
	// Nothing reads what is typed any more: Write fails instead of waiting.
	c.in.CloseWithError(io.ErrClosedPipe)
	c.disconnect()
}

func (c *console) disconnect() { c.hangUp.Do(func() { _ = c.l.Disconnect() }) }

// watch ends the stream once its guest no longer runs (closing stopped first), and
// returns when the stream has ended (streamed). libvirtd ends a console's stream
// when the guest stops, but a stream opened while the guest was being stopped has
// been seen to stay open a minute after the guest was gone (TestConsoleConformance
// on a loaded machine): without this its reader, a browser's terminal, would wait
// for output that never comes. A paused guest (a snapshot, a migration) keeps its
// console; when runs cannot tell, the next tick asks again.
func (c *console) watch(runs func() (bool, error), streamed <-chan struct{}, stopped chan<- struct{}) {
	t := time.NewTicker(consoleWatch)
	defer t.Stop()
	for {
		select {
		case <-streamed:
			return
		case <-t.C:
		}
		if on, err := runs(); on || err != nil {
			continue
		}
		// The output ends here, whether or not the stream's call returns soon: a
		// stuck stream may keep its connection from closing, as Close allows for.
		close(stopped)
		c.out.CloseWithError(nil)
		c.in.CloseWithError(io.ErrClosedPipe)
		go c.disconnect()
		return
	}
}

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
