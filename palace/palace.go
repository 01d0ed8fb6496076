package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime/trace"
	"sync/atomic"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/work"
	"github.com/engram-dev/engram/migrations"

	"modernc.org/sqlite" // registers the "sqlite" driver
)

var _ engram.TurnIndex = (*DB)(nil)

// Errors callers can branch on with errors.Is.
var (
	// ErrClosed is returned (inside an EUNAVAILABLE *engram.Error) by every
	// method called after Close.
	ErrClosed = errors.New("palace is closed")
	// ErrSchemaTooNew is returned by Open when the database was written by a
	// newer engram whose schema this binary does not know.
	ErrSchemaTooNew = errors.New("palace schema is newer than this binary")
)

// DefaultReaders is the default size of the reader connection pool.
const DefaultReaders = 4

// loadReaders is the size of the pool of the reads that fill an
// in-memory index from a whole table (a million turns, their vectors): the
// longest reads there are, they hold their connection for their whole
// scan. Apart from the readers' pool, they never leave a request waiting
// for a connection (a server's first answers come while they run).
const loadReaders = 2

// Options tune a DB. The zero value is ready to use.
type Options struct {
	// Readers is the number of read connections (DefaultReaders if zero).
	// Reads run concurrently with each other and with the one writer.
	Readers int
	// Now returns the current time, used to stamp applied migrations
	// (time.Now if nil).
	Now func() time.Time
	// Work, if set, is the process's scheduler of background work: each
	// of the full-text merger's steps is a task of class Upkeep, and so
	// is each background checkpoint, so that the merges and the
	// checkpoints' copying and fsyncs count among the background work a
	// process bounds. Nil: they run whenever they have work.
	Work *work.Scheduler
	// DeferSecondary leaves the session units and substring rows of the
	// turns stored before Open without them (a process that stopped
	// before IndexSecondary caught up, or an `engram ingest`) to the
	// caller's IndexSecondary, from SecondarySeq: the engine's indexer
	// writes them behind a server's listener. False: Open writes them.
	DeferSecondary bool
}

// DB is the palace: engram's SQLite store of derived, rebuildable indexes.
// It has one writer connection, so writes are serialised in the process,
// and a pool of read connections that WAL lets run beside the writer.
type DB struct {
	path   string
	now    func() time.Time
	w      *sql.DB // exactly one connection; every write goes through it
	gate   writeGate
	r      *sql.DB // query_only connections
	load   *sql.DB // query_only connections of the index loads (viewLoad)
	closed atomic.Bool

	vectors vectorCache   // the VectorStore of each model, made by Vectors
	stmts   stmtCache     // prepared read statements (stmts.go)
	wstmts  stmtCache     // prepared write statements
	ckpt    *checkpointer // copies the WAL into the file, beside the writer (checkpoint.go)
	merge   *merger       // merges the full-text segments behind the writes (merger.go)

	// The in-memory keyword indexes (keyword.go): the turns', and the
	// units', the scenes' and the memories'.
	kw            *kwindex.GenCache
	ukw, skw, mkw *kwindex.SeqCache

	splitWrites bool // tests: a background write that can commit early does at every step (yieldWriter)
	// closeWaiting, when set (by tests), is called while Close waits for
	// a read in flight.
	closeWaiting func()

	// parallelRank is the count of turns above which the keyword ranking is
	// cut into rowid ranges: parallelRankRows, lowered by tests so that a
	// small palace takes that path.
	parallelRank int64
}

// Open opens (creating it if needed, with mode 0600) the palace database at
// path, which must be in an existing directory, and applies the migrations it
// lacks. It fails with an error wrapping ErrSchemaTooNew if the database has
// a schema version this binary does not know.
func Open(path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, engram.Errorf(engram.EINVALID, "palace: no database path given")
	}
	if opts.Readers <= 0 {
		opts.Readers = DefaultReaders
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("palace: %w", err)
	}
	// SQLite would create the file with 0644 (less the umask); the palace
	// holds conversation text, so create it private first. SQLite gives the
	// -wal and -shm files the database file's mode.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("palace: open: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("palace: open: %w", err)
	}

	db := &DB{path: abs, now: opts.Now, parallelRank: parallelRankRows}
	db.openKeyword()
	if db.w, err = sqlrow.OpenPool(dsn(abs, true), 1); err != nil {
		return nil, fmt.Errorf("palace: open: %w", err)
	}
	if err := db.persistWAL(); err != nil {
		db.w.Close()
		return nil, err
	}

	list, err := migrations.All()
	if err == nil {
		err = db.migrate(context.Background(), list)
	}
	if err == nil {
		// After the migrations: its VACUUM gives back what they freed too.
		err = db.convertPageSize(context.Background())
	}
	if err == nil && !opts.DeferSecondary {
		err = db.backfillSecondary(context.Background())
	}
	if err == nil {
		err = db.prepareWrites(context.Background())
	}
	if err != nil {
		db.w.Close()
		return nil, err
	}

	var begin func(context.Context) (func(), error)
	if opts.Work != nil {
		begin = func(ctx context.Context) (func(), error) { return opts.Work.Begin(ctx, work.Upkeep) }
	}
	if db.ckpt, err = newCheckpointer(abs, &db.gate, begin); err != nil {
		db.w.Close()
		return nil, fmt.Errorf("palace: open: %w", err)
	}
	db.ckpt.start()
	if db.r, err = sqlrow.OpenPool(readDSN(abs, readMmapSize), opts.Readers); err != nil {
		db.ckpt.close()
		db.w.Close()
		return nil, fmt.Errorf("palace: open: %w", err)
	}
	if db.load, err = sqlrow.OpenPool(readDSN(abs, 0), loadReaders); err != nil {
		db.r.Close()
		db.ckpt.close()
		db.w.Close()
		return nil, fmt.Errorf("palace: open: %w", err)
	}
	db.merge = newMerger(db, begin)
	db.merge.start()
	return db, nil
}

// persistWAL keeps the WAL file (emptied) and its index, palace.db-shm,
// when the writer, the last connection, closes (SQLITE_FCNTL_PERSIST_WAL;
// journal_size_limit makes the close truncate the WAL to 0 bytes). SQLite
// would otherwise delete both, and the next open would have to allocate the
// index again: on a full disk that fails (SQLITE_IOERR_SHMSIZE), and engram
// could not start at all, where it can start degraded (recall from what is
// indexed, ingest refused with 507) while the palace keeps its files. A
// leftover empty WAL is harmless beside any database file.
func (db *DB) persistWAL() error {
	ctx := context.Background()
	conn, err := db.w.Conn(ctx)
	if err != nil {
		return fmt.Errorf("palace: open: %w", err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		fc, ok := dc.(sqlite.FileControl)
		if !ok {
			return nil // another driver: SQLite's default
		}
		if _, err := fc.FileControlPersistWAL("main", 1); err != nil {
			return fmt.Errorf("palace: persist the WAL: %w", err)
		}
		return nil
	})
}

// readMmapSize is how much of the database file a reader of View maps
// into memory. A recall reads a few hundred rows scattered over the file,
// mostly pages new to the connection it gets: through the map each is the
// kernel's cached page, without a read call or a copy into the
// connection's cache. The loads that fill the in-memory indexes read whole
// tables once and do not map the file (their pages would stay counted in
// the server's resident memory until the kernel needs them), nor does the
// writer. The price of a map is SQLite's: a disk that fails under a mapped
// page stops the process (SIGBUS) where a read call would return an error.
const readMmapSize = 1 << 30

// readDSN returns the data source name of a read connection to the
// database file at abs that maps up to mmap bytes of it.
func readDSN(abs string, mmap int64) string {
	q := dsnQuery(false)
	if mmap > 0 {
		q.Add("_pragma", fmt.Sprintf("mmap_size(%d)", mmap))
	}
	return sqlrow.FileDSN(abs, q)
}

// dsn returns the modernc data source name for the database file at abs.
func dsn(abs string, writer bool) string { return sqlrow.FileDSN(abs, dsnQuery(writer)) }

// dsnQuery returns the parameters of dsn.
func dsnQuery(writer bool) url.Values {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	if writer {
		// Before WAL mode is set: a new database takes it; an existing
		// one keeps its own (see convertPageSize).
		q.Add("_pragma", fmt.Sprintf("page_size(%d)", pageSize))
	}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// synchronous=NORMAL: in WAL mode NORMAL never corrupts the database; a
	// power failure can only lose the last commits. Those are not lost to
	// engram: the L0 archive fsyncs every turn before it is acknowledged, and
	// the indexer catches up from IndexedSeq on start, re-deriving whatever
	// the palace lost. The archive, not SQLite, is the durability point, so
	// FULL would buy nothing but an fsync per commit.
	q.Add("_pragma", "synchronous(NORMAL)")
	if writer {
		// Bounds the WAL left on disk after a checkpoint resets it; with
		// the persistent WAL (persistWAL) it also empties it at close.
		// Twice the length at which the checkpointer restarts it at the
		// latest (forceRestartFrames): the truncation runs in the first
		// commit after a restart, and held it (ftruncate beside the
		// checkpointer's fsync) under a limit the WAL passed.
		q.Add("_pragma", "journal_size_limit(134217728)")
		// Deleted content is overwritten with zeros, so that a forgotten
		// turn's words do not linger in free pages (engram forget).
		q.Add("_pragma", "secure_delete(1)")
		// The WAL is checkpointed by a connection of its own (see
		// checkpointer), not inside the writer's commits.
		q.Add("_pragma", "wal_autocheckpoint(0)")
		// Take the write lock at BEGIN: a deferred transaction that upgrades
		// to a writer later can fail with SQLITE_BUSY without waiting out
		// busy_timeout, should another process (a CLI tool) write meanwhile.
		q.Set("_txlock", "immediate")
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	return q
}

// yieldWriter reports whether a background write transaction that can end
// early (PutMemories) should commit now: a write that an acknowledgement
// waits for queues for the writer.
func (db *DB) yieldWriter() bool { return db.splitWrites || db.gate.urgentWaiting() }

// checkpointDSN returns the data source name of the checkpointer's
// connection to the database file at abs.
func checkpointDSN(abs string) string {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	return sqlrow.FileDSN(abs, q)
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close closes the database. Calls after the first return nil; other methods
// called after Close fail with ErrClosed. Close waits for running queries.
func (db *DB) Close() error {
	if db.closed.Swap(true) {
		return nil
	}
	var errs []error
	// A keyword index catching up in the background reads on a read
	// connection: its next read fails now that the palace is closed, and
	// the pools are closed once it has stopped. A connection released
	// after its pool closed would close after the writer, and the last
	// connection to close, not the writer, would decide what happens to
	// the WAL (see persistWAL).
	if db.kw != nil {
		db.kw.Wait()
	}
	for _, u := range db.seqIndexes() {
		if u != nil {
			u.Wait()
		}
	}
	if db.merge != nil {
		db.merge.stop()
	}
	if db.ckpt != nil {
		errs = append(errs, db.ckpt.close())
	}
	if db.r != nil {
		errs = append(errs, db.stmts.close(), db.r.Close())
	}
	if db.load != nil {
		errs = append(errs, db.load.Close())
	}
	db.waitClosed(db.r, db.load)
	// The writer closes last: the last connection to close checkpoints the
	// WAL into the database file and removes it.
	errs = append(errs, db.wstmts.close(), db.w.Close())
	// A write in flight closes its connection when it ends: Close returns
	// after, with every file as the last connection left it.
	db.waitClosed(db.w)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("palace: close: %w", err)
	}
	return nil
}

// closeWait bounds how long Close waits for the reads and writes in
// flight (see waitClosed): past it Close goes on, and the last connection
// to close decides what becomes of the WAL files (the next open makes
// them again if they are gone).
const closeWait = 30 * time.Second

// waitClosed waits, after pools closed, for their connections still in
// use: a read or a write in flight keeps its connection when its pool
// closes, and closes it when it ends. A reader that closed after the
// writer would remove the WAL and its index (see persistWAL) after Close
// returned.
func (db *DB) waitClosed(pools ...*sql.DB) {
	deadline := time.Now().Add(closeWait)
	for _, p := range pools {
		for p != nil && p.Stats().OpenConnections > 0 && time.Now().Before(deadline) {
			if db.closeWaiting != nil {
				db.closeWaiting()
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func errClosed() error {
	return &engram.Error{Code: engram.EUNAVAILABLE, Message: "palace is closed", Err: ErrClosed}
}

// Update runs fn in a write transaction on the writer connection and commits
// it if fn returns nil; otherwise it rolls back and returns fn's error.
// Writes are serialised: Update waits for the writer to be free.
func (db *DB) Update(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.update(ctx, false, fn)
}

// update is Update; an urgent one (the turn index, which acknowledgements
// wait for) goes before every background write waiting for the writer.
//
// Under an execution trace (`engram bench scale --trace`), the wait for the
// writer is the region "palace.gate" and the transaction "palace.write".
func (db *DB) update(ctx context.Context, urgent bool, fn func(*sql.Tx) error) error {
	err := db.write(ctx, urgent, fn)
	if err == nil && db.merge != nil {
		db.merge.poke()
	}
	return err
}

// write is update without waking the merger: its own transactions.
func (db *DB) write(ctx context.Context, urgent bool, fn func(*sql.Tx) error) error {
	wait := trace.StartRegion(ctx, "palace.gate")
	err := db.gate.acquire(ctx, urgent)
	wait.End()
	if err != nil {
		return fmt.Errorf("palace: begin: %w", err)
	}
	defer db.gate.release()
	defer trace.StartRegion(ctx, "palace.write").End()
	err = db.run(ctx, db.w, nil, fn)
	if err == nil && db.ckpt != nil {
		db.ckpt.poke()
	}
	return err
}

// View runs fn in a read-only transaction on a reader connection: fn sees
// one consistent snapshot, and runs concurrently with writes.
func (db *DB) View(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.run(ctx, db.r, &sql.TxOptions{ReadOnly: true}, fn)
}

// viewLoad is View for a read that fills an in-memory index from a whole
// table, on connections of its own (loadReaders).
func (db *DB) viewLoad(ctx context.Context, fn func(*sql.Tx) error) error {
	return db.run(ctx, db.load, &sql.TxOptions{ReadOnly: true}, fn)
}

func (db *DB) run(ctx context.Context, conn *sql.DB, opts *sql.TxOptions, fn func(*sql.Tx) error) error {
	if db.closed.Load() {
		return errClosed()
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		if db.closed.Load() {
			return errClosed()
		}
		return fmt.Errorf("palace: begin: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			tx.Rollback()
			panic(p)
		}
	}()
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("palace: commit: %w", err)
	}
	return nil
}
