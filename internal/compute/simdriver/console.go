package simdriver

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/berthhq/berth/internal/compute"
)

// ConsolePoll is how often a simulated console looks at its machine (a reset prints
// the boot again, a power-off ends the output).
var ConsolePoll = 200 * time.Millisecond

// consoleBuffer bounds what a simulated console keeps unread.
const consoleBuffer = 64 << 10

// maxLine bounds what the login prompt keeps of a line typed.
const maxLine = 1024

// Console implements compute.Driver with a simulated serial console, so that clients
// and the sandbox can be tried without real guests: on attaching it prints the
// machine's boot lines and a login prompt, and echoes what is typed as a terminal
// does (Enter after a user name asks for a password, not echoed, and the login then
// fails: no account of the simulation can log in). It follows the machine: a reset
// or a new start prints the boot again, a power-off ends the output with io.EOF.
// The guest's volumes show as a kernel shows SCSI disks: at the boot, and as they are
// hot-plugged, resized or removed, with the mounts automount asks (GuestDisks).
// Any number of consoles may be attached to a machine at once.
func (d *Driver) Console(ctx context.Context, name string) (io.ReadWriteCloser, error) {
	st, err := d.consoleState(ctx, name)
	if err != nil {
		return nil, err
	}
	if st.state != compute.StateRunning {
		return nil, compute.ErrNotRunning
	}
	disks, err := d.guestDisks(ctx, name)
	if err != nil {
		return nil, err
	}
	watch, stop := context.WithCancel(context.Background())
	c := &simConsole{d: d, name: name, image: st.image, out: compute.NewConsoleOutput(consoleBuffer), stop: stop}
	c.boot(disks)
	go c.follow(watch, st.readyAt)
	return c, nil
}

type consoleState struct {
	state   compute.State
	readyAt int64
	image   string
}

// consoleState reads a machine's power state as stored: a machine still booting is
// running here (its console shows the boot), unlike in Machine.
func (d *Driver) consoleState(ctx context.Context, name string) (consoleState, error) {
	var st consoleState
	var state string
	var destroyed sql.NullInt64
	err := d.db.QueryRowContext(ctx, d.rebind(`SELECT state, ready_at, image, destroyed_at FROM sim_machines WHERE name = ?`), name).
		Scan(&state, &st.readyAt, &st.image, &destroyed)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && destroyed.Valid) {
		return st, compute.ErrNotFound
	}
	st.state = compute.State(state)
	return st, err
}

type simConsole struct {
	d     *Driver
	name  string
	image string
	out   *compute.ConsoleOutput
	stop  context.CancelFunc

	mu       sync.Mutex
	line     []byte
	password bool // the prompt asks for a password: nothing is echoed
	closed   bool
	bootAt   time.Time
	disks    []GuestDisk // as last printed
}

// boot prints the machine's boot, with the disks of its volumes, and the login
// prompt.
func (c *simConsole) boot(disks []GuestDisk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.line, c.password = nil, false
	c.bootAt, c.disks = time.Now(), disks
	fmt.Fprintf(c.out, "[    0.000000] Linux version 6.1.0-berth-sim (berth@sim) #1 SMP PREEMPT_DYNAMIC\r\n"+
		"[    0.000000] Command line: console=ttyS0,115200 root=/dev/vda1\r\n"+
		"[    0.731204] virtio_blk virtio1: [vda] disk attached\r\n"+
		"[    1.402117] EXT4-fs (vda1): mounted filesystem with ordered data mode\r\n%s"+
		"[    2.118330] cloud-init[311]: hostname set to %s\r\n"+
		"\r\nBerth simulated server %s (%s), serial console ttyS0\r\n\r\n%s",
		diskChanges("[    1.893410]", nil, disks), c.name, c.name, c.image, c.prompt())
}

// volumes prints what changed in the guest's disks since the console last printed
// them.
func (c *simConsole) volumes(disks []GuestDisk) {
	c.mu.Lock()
	defer c.mu.Unlock()
	since := time.Since(c.bootAt) + 3*time.Second
	stamp := fmt.Sprintf("[%5d.%06d]", since/time.Second, since%time.Second/time.Microsecond)
	_, _ = io.WriteString(c.out, diskChanges(stamp, c.disks, disks))
	c.disks = disks
}

func (c *simConsole) prompt() string { return c.name + " login: " }

// follow watches the machine until the console is closed: a new boot (ready_at
// moved while it runs) prints the boot again; a stop or a destroy ends the output.
func (c *simConsole) follow(ctx context.Context, readyAt int64) {
	t := time.NewTicker(ConsolePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := c.d.consoleState(ctx, c.name)
		switch {
		case errors.Is(err, compute.ErrNotFound), err == nil && st.state != compute.StateRunning:
			_, _ = io.WriteString(c.out, "\r\nreboot: Power down\r\n")
			c.out.CloseWithError(io.EOF)
			return
		case err != nil:
			continue // the database will answer again; the console waits
		}
		disks, err := c.d.guestDisks(ctx, c.name)
		switch {
		case err != nil:
			continue
		case st.readyAt != readyAt:
			readyAt = st.readyAt
			_, _ = io.WriteString(c.out, "\r\nreboot: Restarting system\r\n")
			c.boot(disks)
		default:
			c.volumes(disks)
		}
	}
}

// Read gives what the console printed.
func (c *simConsole) Read(p []byte) (int, error) { return c.out.Read(p) }

// Write types p: a terminal's line discipline in miniature (echo, backspace, Ctrl-C,
// Enter) in front of a login prompt.
func (c *simConsole) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, io.ErrClosedPipe
	}
	var echo []byte
	for _, b := range p {
		switch {
		case b == '\r' || b == '\n':
			echo = append(echo, '\r', '\n')
			switch {
			case c.password:
				echo = append(echo, "\r\nLogin incorrect\r\n"+c.prompt()...)
				c.password = false
			case len(c.line) > 0:
				echo = append(echo, "Password: "...)
				c.password = true
			default:
				echo = append(echo, c.prompt()...)
			}
			c.line = c.line[:0]
		case b == 0x7f || b == '\b':
			if len(c.line) > 0 {
				c.line = c.line[:len(c.line)-1]
				if !c.password {
					echo = append(echo, '\b', ' ', '\b')
				}
			}
		case b == 0x03: // Ctrl-C
			echo = append(echo, "^C\r\n"+c.prompt()...)
			c.line, c.password = c.line[:0], false
		case b >= 0x20: // printable, and the bytes of UTF-8 sequences
			if len(c.line) < maxLine {
				c.line = append(c.line, b)
				if !c.password {
					echo = append(echo, b)
				}
			}
		}
	}
	_, _ = c.out.Write(echo)
	return len(p), nil
}

// Close detaches: the output is dropped and the machine no longer followed.
func (c *simConsole) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.stop()
	c.out.Discard()
	return nil
}
