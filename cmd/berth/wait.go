package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/berthhq/berth/api"
	"github.com/berthhq/berth/client"
)

// waitOperation waits for an operation to end, showing progress on stderr (none with
// --quiet): a spinner with the status and the elapsed time on a terminal, plain lines
// otherwise. An operation that ended in error is a *client.OperationError (exit 7).
func waitOperation(ctx context.Context, g *globals, c *client.Client, ref *api.OperationRef, what string) (*api.Operation, error) {
	tty := isTerminal(g.stderr) && !g.quiet
	start := time.Now()
	if !tty {
		g.note("Waiting for operation %d (%s) of %s\n", ref.ID, ref.Type, what)
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	// On a terminal each held request lasts 5 s at most, and the server's status is
	// asked for between two: the spinner shows it.
	hold := 60 * time.Second
	var status atomic.Value
	status.Store("running")
	if tty {
		hold = 5 * time.Second
		go spin(g.stderr, stop, done, start, func() string {
			return escape(fmt.Sprintf("%s of %s: %s", ref.Type, what, status.Load()))
		})
	} else {
		close(done)
	}
	finish := func() { close(stop); <-done }
	for {
		op, err := c.GetOperationWait(ctx, ref.ID, hold)
		if err != nil {
			finish()
			if ctx.Err() != nil {
				fmt.Fprintf(g.stderr, "Stopped waiting; operation %d (%s) goes on: berth operation wait %d\n", ref.ID, escape(ref.Type), ref.ID)
			}
			return nil, err
		}
		if op.Status == client.OperationStatusRunning {
			if tty && op.ServerID != nil {
				if srv, err := c.GetServer(ctx, i64(*op.ServerID)); err == nil {
					status.Store(srv.Status)
				}
			}
			continue
		}
		finish()
		took := time.Since(start).Round(100 * time.Millisecond)
		if op.Status == client.OperationStatusError {
			fmt.Fprintf(g.stderr, "Operation %d (%s) of %s failed after %s\n", op.ID, escape(op.Type), escape(what), took)
			return op, &client.OperationError{Operation: op}
		}
		g.note("Operation %d (%s) of %s succeeded after %s\n", op.ID, op.Type, what, took)
		return op, nil
	}
}

// afterServerAction waits for the server's operation (unless --no-wait) and prints
// the server as it then is.
func afterServerAction(ctx context.Context, g *globals, c *client.Client, srv *api.Server) error {
	if srv.Operation != nil && !g.noWait {
		if _, err := waitOperation(ctx, g, c, srv.Operation, "server "+srv.Name); err != nil {
			return err
		}
		now, err := c.GetServer(ctx, i64(srv.ID))
		if err != nil {
			return err
		}
		srv = now
	}
	return servers.printOne(ctx, g, c, *srv)
}

// spin draws a spinner line until stop is closed, then clears it and closes done.
func spin(w io.Writer, stop <-chan struct{}, done chan<- struct{}, start time.Time, label func() string) {
	defer close(done)
	frames := []rune("⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏")
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for i := 0; ; i++ {
		fmt.Fprintf(w, "\r\033[K%c %s (%s)", frames[i%len(frames)], label(), time.Since(start).Round(time.Second))
		select {
		case <-stop:
			fmt.Fprint(w, "\r\033[K")
			return
		case <-t.C:
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
