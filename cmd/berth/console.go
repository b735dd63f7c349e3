package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/berthhq/berth/client"
)

// detachKey is Ctrl-], as virsh console and telnet take it.
const detachKey = 0x1d

// consoleIdle is how long the console must stay silent, once piped input has ended,
// before berth detaches: the answer to the last line has come by then.
var consoleIdle = time.Second

func consoleCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "console SERVER",
		Short: "Attach to a running server's serial console (Ctrl-] detaches)",
		Long: "Attach to a running server's serial console: what the server prints goes to stdout, " +
			"what you type to the server. On a terminal, keys go to the server as typed (Ctrl-C too); " +
			"Ctrl-] detaches. With input from a pipe or a file, berth sends it, then detaches once the " +
			"console has been silent for a second. The console ending (the server powered off) ends it too.",
		Args: cobra.ExactArgs(1),
		RunE: withClient(g, func(ctx context.Context, c *client.Client, args []string) error {
			ticket, err := c.RequestServerConsole(ctx, args[0])
			if err != nil {
				return err
			}
			con, err := c.ConnectServerConsole(ctx, ticket.URL)
			if err != nil {
				return err
			}
			defer con.Close()
			tty := false
			if f, ok := g.stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
				old, err := term.MakeRaw(int(f.Fd()))
				if err != nil {
					return err
				}
				defer func() { _ = term.Restore(int(f.Fd()), old) }()
				tty = true
				g.note("Console of server %s; Ctrl-] detaches\r\n", args[0])
			}
			return attach(ctx, con, g.stdin, g.stdout, tty)
		}),
	}
}

// attach copies the console to out and in to the console until the console ends,
// ctx ends, Ctrl-] comes from a terminal, or piped input has ended and the console
// has then been silent for consoleIdle.
func attach(ctx context.Context, con io.ReadWriteCloser, in io.Reader, out io.Writer, tty bool) error {
	var mu sync.Mutex
	last := time.Now() // when the console last printed
	outDone := make(chan error, 1)
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := con.Read(buf)
			if n > 0 {
				mu.Lock()
				last = time.Now()
				mu.Unlock()
				if _, werr := out.Write(buf[:n]); werr != nil {
					outDone <- werr
					return
				}
			}
			if err != nil {
				outDone <- err
				return
			}
		}
	}()
	inDone := make(chan error, 1)
	go func() {
		buf := make([]byte, 4<<10)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				p := buf[:n]
				detach := false
				if tty {
					if i := bytes.IndexByte(p, detachKey); i >= 0 {
						p, detach = p[:i], true
					}
				}
				if len(p) > 0 {
					if _, werr := con.Write(p); werr != nil {
						inDone <- werr
						return
					}
				}
				if detach {
					inDone <- nil
					return
				}
			}
			if err != nil {
				inDone <- err // io.EOF: the input ended, wait for the console to go quiet
				return
			}
		}
	}()
	var quiet <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-outDone:
			if errors.Is(err, io.EOF) {
				return nil // the console ended
			}
			return err
		case err := <-inDone:
			if !errors.Is(err, io.EOF) {
				return err // detached (nil), or input or console failed
			}
			mu.Lock()
			last = time.Now() // silent for consoleIdle from now on: the last line's answer is in
			mu.Unlock()
			t := time.NewTicker(consoleIdle / 4)
			defer t.Stop()
			quiet = t.C
		case <-quiet:
			mu.Lock()
			idle := time.Since(last)
			mu.Unlock()
			if idle >= consoleIdle {
				return nil
			}
		}
	}
}
