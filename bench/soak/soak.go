package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"time"
)

// stderrSync serializes the clients' failure lines.
var stderrSync io.Writer = &lockedWriter{w: os.Stderr}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// result is what the load produced.
type result struct {
	clients      []*client
	samples      []sample
	start        time.Time
	loadSeconds  float64
	setupSeconds float64
	dataBytes    int64
	exitErr      error
	interrupted  bool
}

// soak runs every client from one start to one deadline and samples berthd meanwhile.
func soak(ctx context.Context, c config, d *daemon, base string, clients []*client) (*result, error) {
	for _, cl := range clients {
		cl.init(c, base, c.seed)
	}
	pid := d.cmd.Process.Pid
	res := &result{clients: clients}

	// Sample at 0, every c.sample, at 1 min, and at the end.
	marks := []time.Duration{c.duration}
	for t := time.Duration(0); t < c.duration; t += c.sample {
		marks = append(marks, t)
	}
	if time.Minute < c.duration {
		marks = append(marks, time.Minute)
	}
	slices.Sort(marks)
	marks = slices.Compact(marks)

	start := time.Now()
	res.start = start
	startNs := start.UnixNano()
	deadline := startNs + int64(c.duration)
	logf("load: %d clients for %s (%d at the limit, %d bursting), sampling berthd every %s", len(clients), c.duration,
		len(clients)-c.burstTokens, c.burstTokens, c.sample)

	var wg sync.WaitGroup
	for _, cl := range clients {
		wg.Go(func() {
			cl.run(ctx, startNs, deadline)
		})
	}
	count := func() int64 {
		var n int64
		for _, cl := range clients {
			n += cl.sent.Load()
		}
		return n
	}

	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for _, m := range marks {
			if !sleepUntil(ctx, startNs+int64(m)) {
				return
			}
			s := readSample(pid)
			s.at = m
			s.gc, s.gcs, s.hasGC = d.lastGC(time.Now())
			s.requests = count()
			res.samples = append(res.samples, s)
			logf("t=%-6s RSS %6.1f MB  live heap %3d MB  threads %2d  fds %3d  requests ~%d",
				m.Round(time.Second), float64(s.rssKB)/1024, s.gc.liveMB, s.threads, s.fds, s.requests)
		}
	}()
	wg.Wait()
	d.loadEnd.Store(time.Now().UnixNano())
	res.loadSeconds = time.Since(start).Seconds()
	<-sampled
	res.interrupted = ctx.Err() != nil
	if res.interrupted {
		return nil, fmt.Errorf("interrupted after %.0fs", res.loadSeconds)
	}
	return res, nil
}
