package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// DNSLockFile is the lock beside SQLite's database that a publish to PowerDNS takes
// (zoneLock): serve's jobs and `berthd admin dns resync` take turns on it.
const DNSLockFile = "dns-publish.lock"

// dnsPublishWorkers is how many publishing jobs one process runs at once (the DNS
// queue, ops.DNSQueue): each holds a connection of PostgreSQL's pool for its lock.
const dnsPublishWorkers = 4

// zoneLock runs fn while no other publish of zone runs in any process on the
// database (ops.ZoneLock): on PostgreSQL an advisory lock of a transaction that
// writes nothing, on SQLite the lock file DNSLockFile (one process serves SQLite, so
// its publishes simply take turns; the file lets an admin command's take its turn).
func (a *App) zoneLock(ctx context.Context, zone string, fn func(ctx context.Context) error) error {
	if a.DB.Postgres() {
		tx, err := a.DB.WriteDB().BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("dns publish lock: %w", err)
		}
		defer func() { _ = tx.Rollback() }()
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "berth.dns."+zone); err != nil {
			return fmt.Errorf("dns publish lock: %w", err)
		}
		return fn(ctx)
	}
	f, err := os.OpenFile(filepath.Join(a.cfg.DataDir, DNSLockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("dns publish lock: %w", err)
	}
	defer f.Close()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			return fmt.Errorf("dns publish lock: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	defer func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }()
	return fn(ctx)
}
