package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver, for CREATE/DROP DATABASE

	"github.com/berthhq/berth/internal/store/sqlstore"
)

// openSQLite opens berth.db in the configured data dir, or in a temp dir removed on close.
func (b *bench) openSQLite(ctx context.Context) error {
	dir, temp := b.cfg.dir, b.cfg.dir == ""
	if temp {
		d, err := os.MkdirTemp("", "berth-metering-bench.")
		if err != nil {
			return err
		}
		dir = d
	}
	removeTemp := func() error {
		if temp {
			return os.RemoveAll(dir)
		}
		return nil
	}
	db, err := sqlstore.OpenSQLite(ctx, dir)
	if err != nil {
		return errors.Join(err, removeTemp())
	}
	b.cfg.dir, b.db = dir, db
	b.close = func() error { return errors.Join(db.Close(), removeTemp()) }
	return nil
}

// openPostgres creates a database of the round's own on the configured server and
// opens it as berthd does (sqlstore.OpenPostgres); closing drops it.
func (b *bench) openPostgres(ctx context.Context) error {
	admin, err := sql.Open("pgx", b.cfg.database)
	if err != nil {
		return err
	}
	u, err := url.Parse(b.cfg.database)
	if err != nil {
		admin.Close()
		return fmt.Errorf("database URL %s: %w", sqlstore.Redact(b.cfg.database), err)
	}
	r := make([]byte, 4)
	_, _ = rand.Read(r)
	name := "berth_metering_" + time.Now().UTC().Format("20060102_150405") + "_" + hex.EncodeToString(r)
	if _, err := admin.ExecContext(ctx, `CREATE DATABASE `+name); err != nil {
		admin.Close()
		return fmt.Errorf("create database %s on %s: %w", name, sqlstore.Redact(b.cfg.database), err)
	}
	drop := func() error {
		// Not ctx: an interrupted run drops its database too.
		dctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := admin.ExecContext(dctx, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
		return errors.Join(err, admin.Close())
	}
	u.Path = "/" + name
	db, err := sqlstore.OpenPostgres(ctx, u.String())
	if err != nil {
		return errors.Join(err, drop())
	}
	b.db = db
	b.close = func() error { return errors.Join(db.Close(), drop()) }
	if pg := serverCPU(ctx, db.WriteDB(), name); pg != nil {
		b.cpu = func() time.Duration { return cpuTime() + pg() }
		b.cpuWhat = "this process and the PostgreSQL server's processes (all of them: other sessions on it count too)"
	} else {
		b.cpuWhat = "this process only (the PostgreSQL server's processes are not on this machine, or not readable)"
	}
	return nil
}

// describeStore prints which database the round runs on.
func (b *bench) describeStore(ctx context.Context) error {
	w := b.db.WriteDB()
	if !b.db.Postgres() {
		var v string
		if err := w.QueryRowContext(ctx, `SELECT sqlite_version()`).Scan(&v); err != nil {
			return err
		}
		fmt.Fprintf(b.out, "store: SQLite %s in %s\n", v, b.cfg.dir)
		return nil
	}
	var version, fsync, syncCommit, buffers string
	if err := w.QueryRowContext(ctx, `SELECT current_setting('server_version'), current_setting('fsync'),
		current_setting('synchronous_commit'), current_setting('shared_buffers')`).Scan(&version, &fsync, &syncCommit, &buffers); err != nil {
		return err
	}
	var name string
	if err := w.QueryRowContext(ctx, `SELECT current_database()`).Scan(&name); err != nil {
		return err
	}
	fmt.Fprintf(b.out, "store: PostgreSQL %s (fsync %s, synchronous_commit %s, shared_buffers %s), database %s, created for this run\n",
		version, fsync, syncCommit, buffers, name)
	return nil
}

// dbSize prints the database's size: on SQLite its pages and its files on disk.
func (b *bench) dbSize(ctx context.Context) error {
	w := b.db.WriteDB()
	if b.db.Postgres() {
		var size int64
		if err := w.QueryRowContext(ctx, `SELECT pg_database_size(current_database())`).Scan(&size); err != nil {
			return err
		}
		fmt.Fprintf(b.out, "database: %.1f MiB (pg_database_size)\n", float64(size)/(1<<20))
		return nil
	}
	var pages, size int64
	if err := w.QueryRowContext(ctx, `PRAGMA page_count`).Scan(&pages); err != nil {
		return err
	}
	if err := w.QueryRowContext(ctx, `PRAGMA page_size`).Scan(&size); err != nil {
		return err
	}
	file := func(name string) float64 {
		st, err := os.Stat(filepath.Join(b.cfg.dir, name))
		if err != nil {
			return 0
		}
		return float64(st.Size()) / (1 << 20)
	}
	fmt.Fprintf(b.out, "database: %.1f MiB (%d pages of %d bytes); berth.db %.1f MiB, berth.db-wal %.1f MiB\n",
		float64(pages*size)/(1<<20), pages, size, file(sqlstore.DBFile), file(sqlstore.DBFile+"-wal"))
	return nil
}

// cpuTime is the CPU time (user and system) this process has used. SQLite runs in
// it (pure Go), so on a machine shared with other work this stays comparable when
// wall time does not.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is the unit of the CPU times in /proc/PID/stat (Linux's USER_HZ, 100).
const clockTick = 10 * time.Millisecond

// serverCPU returns what reads the CPU time the PostgreSQL server has used, when it
// runs on this machine: its postmaster's, that of its children that ended, and that of
// its processes now running (backends, parallel workers, the writers, autovacuum).
// The server is found as the parent of this connection's backend, whose command line
// names database; nil when it is not here or /proc does not show it.
func serverCPU(ctx context.Context, db *sql.DB, database string) func() time.Duration {
	var backend int
	if err := db.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&backend); err != nil {
		return nil
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", backend))
	if err != nil || !strings.HasPrefix(string(cmdline), "postgres:") || !strings.Contains(string(cmdline), " "+database+" ") {
		return nil
	}
	st, err := procStat(backend)
	if err != nil {
		return nil
	}
	postmaster := int(st.ppid)
	return func() time.Duration {
		pm, err := procStat(postmaster)
		if err != nil {
			return 0
		}
		ticks := pm.utime + pm.stime + pm.cutime + pm.cstime
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			if st, err := procStat(pid); err == nil && st.ppid == int64(postmaster) {
				ticks += st.utime + st.stime
			}
		}
		return time.Duration(ticks) * clockTick
	}
}

// stat is what serverCPU reads of /proc/PID/stat (proc(5)): the parent, and the CPU
// ticks of the process and of its children it has waited for.
type stat struct{ ppid, utime, stime, cutime, cstime int64 }

func procStat(pid int) (stat, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, err
	}
	// After "pid (comm) ": state ppid pgrp session tty tpgid flags minflt cminflt
	// majflt cmajflt utime stime cutime cstime ...; comm may hold spaces and parens.
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 15 {
		return stat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var v [5]int64
	for i, k := range []int{1, 11, 12, 13, 14} {
		if v[i], err = strconv.ParseInt(f[k], 10, 64); err != nil {
			return stat{}, err
		}
	}
	return stat{ppid: v[0], utime: v[1], stime: v[2], cutime: v[3], cstime: v[4]}, nil
}
