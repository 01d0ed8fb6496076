package postgres

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oklog/ulid/v2"

	"github.com/engram-dev/engram"
)

// EnvURL names the environment variable the connection URL of engram's
// PostgreSQL comes from (postgres://user:password@host:port/db): the
// password is read from the environment only, never from a config file.
const EnvURL = "ENGRAM_POSTGRES_URL"

// Log attribute keys.
const (
	logKeyComponent = "component"
	logKeySeq       = "seq"
	logKeyErr       = "err"
)

// maxBatchRequests bounds how many Append calls one transaction answers,
// as in the file archive.
const maxBatchRequests = 4096

// Options tune an Archive. Zero values mean the defaults.
type Options struct {
	// Now returns the current time; it stamps received_at and times
	// generated ids. Default time.Now.
	Now func() time.Time
	// Logger receives warnings about unreadable rows. Default
	// slog.Default().
	Logger *slog.Logger
}

// Archive is the L0 archive in a PostgreSQL table: the turns of every
// server that shares the database, each row holding the same line, with
// the same checksum, as the file archive's JSONL. It implements
// engram.Archive. Its methods are safe for concurrent use, and several
// Archives (in one process or many) may append to one database at once.
type Archive struct {
	pool *pgxpool.Pool
	now  func() time.Time
	log  *slog.Logger

	ctx    context.Context // cancelled by Close; stops the writer
	cancel context.CancelFunc
	wg     sync.WaitGroup
	reqs   chan *request // unbuffered: a request is either taken by the writer or refused

	closeOnce sync.Once
	closed    atomic.Bool

	entropy *ulid.MonotonicEntropy // the writer's only

	lastSeq atomic.Int64 // the highest seq this Archive has seen committed
	// notifyMu guards notify, closed when lastSeq rises (and at Close),
	// then replaced.
	notifyMu sync.Mutex
	notify   chan struct{}
	rewrites chan struct{} // closed at another rewrite's notification, then replaced (see Rewrites)
	// corrections is closed at an append to the corrections journal,
	// then replaced (see Corrections.Changed).
	corrections chan struct{}

	commits atomic.Int64
	batches atomic.Int64
	corrupt atomic.Int64

	schemaFound int // the schema version Open found, before it migrated
}

var _ engram.Archive = (*Archive)(nil)

// Open connects to the database at url, applies the archive's migrations
// and starts the writer. The caller reads url from EnvURL (or a flag);
// Open never logs it.
//
// Errors: EINVALID for an empty or malformed url; EUNAVAILABLE when the
// database cannot be reached; ErrSchemaTooNew (wrapped) when a newer
// engram migrated the database.
func Open(ctx context.Context, url string, opts Options) (*Archive, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	pool, err := Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	found, err := Migrate(ctx, pool, component, migrations, backfills)
	if err != nil {
		pool.Close()
		return nil, err
	}
	a := &Archive{
		pool:        pool,
		schemaFound: found,
		now:         opts.Now,
		log:         opts.Logger.With(logKeyComponent, "archive", "store", "postgres"),
		reqs:        make(chan *request),
		entropy:     ulid.Monotonic(rand.Reader, 0),
		notify:      make(chan struct{}),
		// Closed by the first LISTEN: what was rewritten before it
		// was not notified.
		rewrites:    make(chan struct{}),
		corrections: make(chan struct{}),
	}
	if _, err := a.Refresh(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.wg.Add(2)
	go a.run()
	go a.listen()
	return a, nil
}

// Connect opens a pool of connections to the database at url and checks
// that it answers. It never logs url. Errors: EINVALID for an empty or
// malformed url; EUNAVAILABLE when the database cannot be reached.
func Connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if url == "" {
		return nil, engram.Errorf(engram.EINVALID, "no PostgreSQL URL: set %s to postgres://user:password@host:port/database", EnvURL)
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx masks the password in the URL it quotes.
		return nil, &engram.Error{Code: engram.EINVALID, Message: "the PostgreSQL URL does not parse", Err: err}
	}
	where := Where(url)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot connect to PostgreSQL at " + where, Err: err}
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot reach PostgreSQL at " + where, Err: err}
	}
	return pool, nil
}

// Close stops the writer after the transaction in flight and closes the
// connections. Appends waiting to be taken fail with EUNAVAILABLE, as do
// all later calls. Close may be called more than once.
func (a *Archive) Close() error {
	a.closeOnce.Do(func() {
		a.closed.Store(true)
		a.cancel()
		a.wg.Wait()
		a.pool.Close()
		a.notifyMu.Lock()
		close(a.notify)
		close(a.rewrites)
		close(a.corrections)
		a.notifyMu.Unlock()
	})
	return nil
}

// LastSeq returns the highest seq this Archive knows to be committed: its
// own appends', those of other servers as their notifications arrive (see
// Notify), and the highest Open, Refresh, Stream and ScanTime saw. It
// never asks the database itself, since the indexers call it in loops.
func (a *Archive) LastSeq() int64 { return a.lastSeq.Load() }

// Refresh reads the highest committed seq from the database, makes it
// LastSeq's if it is higher, and returns it.
func (a *Archive) Refresh(ctx context.Context) (int64, error) {
	if a.closed.Load() {
		return 0, errClosed()
	}
	var seq int64
	if err := a.retryRead(ctx, func() error {
		return a.pool.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM archive_turns`).Scan(&seq)
	}); err != nil {
		return 0, readFailure(ctx, err)
	}
	a.advance(seq)
	return seq, nil
}

// advance raises lastSeq to seq and, when it rose, wakes Notify's
// waiters.
func (a *Archive) advance(seq int64) {
	for {
		cur := a.lastSeq.Load()
		if seq <= cur {
			return
		}
		if a.lastSeq.CompareAndSwap(cur, seq) {
			break
		}
	}
	a.notifyMu.Lock()
	defer a.notifyMu.Unlock()
	if !a.closed.Load() {
		close(a.notify)
		a.notify = make(chan struct{})
	}
}

// Stats counts what the archive's table holds and what this Archive did
// since Open.
type Stats struct {
	Turns     int64 // rows of turns, tombstones left out (as the file archive counts)
	Forgotten int64 // tombstones of forgotten turns
	Redacted  int64 // turns whose content was redacted
	Bytes     int64 // bytes of the lines of every row
	LastSeq   int64 // the highest seq in the table
	Commits   int64 // Append calls acknowledged since Open
	Batches   int64 // transactions that wrote turns since Open
	// CorruptRows counts the rows readers skipped since Open because
	// their line did not decode or did not match the row's seq, id or
	// crc.
	CorruptRows int64
}

// Stats counts the table's rows (a scan of the table: not for a hot path).
func (a *Archive) Stats(ctx context.Context) (Stats, error) {
	if a.closed.Load() {
		return Stats{}, errClosed()
	}
	var s Stats
	err := a.pool.QueryRow(ctx,
		`SELECT count(ts), count(*) - count(ts), count(*) FILTER (WHERE redacted AND ts IS NOT NULL),
			coalesce(sum(octet_length(line)), 0), coalesce(max(seq), 0) FROM archive_turns`).
		Scan(&s.Turns, &s.Forgotten, &s.Redacted, &s.Bytes, &s.LastSeq)
	if err != nil {
		return Stats{}, readFailure(ctx, err)
	}
	a.advance(s.LastSeq)
	s.Commits, s.Batches, s.CorruptRows = a.commits.Load(), a.batches.Load(), a.corrupt.Load()
	return s, nil
}

// SchemaFound returns the version of the archive's schema that Open found
// in the database before it migrated it (0 for a database without one).
func (a *Archive) SchemaFound() int { return a.schemaFound }

// CorruptRows counts the rows readers skipped since Open (Stats.CorruptRows)
// without reading the table.
func (a *Archive) CorruptRows() int64 { return a.corrupt.Load() }

// errClosed is what every call returns after Close.
func errClosed() error {
	return engram.Errorf(engram.EUNAVAILABLE, "the archive is closed")
}

// readFailure turns an error of a read into what the caller gets: ctx's
// own error when ctx ended, else EUNAVAILABLE.
func readFailure(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
		return cerr
	}
	if bad := RefusedText(err, "read the PostgreSQL archive"); bad != nil {
		return bad
	}
	return &engram.Error{Code: engram.EUNAVAILABLE, Message: "cannot read the PostgreSQL archive", Err: err}
}

// retryRead runs read, and once more after dropping the pool's idle
// connections when it failed on a lost one: after the database restarted,
// every idle connection is broken, and the pool checks only those idle for
// a while. A read is safe to repeat.
func (a *Archive) retryRead(ctx context.Context, read func() error) error {
	err := read()
	if err != nil && ctx.Err() == nil && connLost(err) {
		a.pool.Reset()
		err = read()
	}
	return err
}

// connLost reports whether err may be a lost connection: anything but an
// error the server answered with, or a fatal one (the server ends the
// connection after it).
func connLost(err error) bool {
	pe, server := isServerError(err)
	return !server || strings.EqualFold(pe.Severity, "FATAL")
}

// isServerError reports whether err is an error the server answered with
// (a constraint, a full disk), as opposed to a lost connection.
func isServerError(err error) (*pgconn.PgError, bool) {
	var pe *pgconn.PgError
	ok := errors.As(err, &pe)
	return pe, ok
}

// sqlDiskFull is PostgreSQL's SQLSTATE for a full disk.
const sqlDiskFull = "53100"

// RefusedText is EINVALID, naming what, when err is PostgreSQL refusing a
// value of the request for its bytes (SQLSTATE 22021: a NUL byte, which
// its text cannot hold): no id, name or key engram stores holds one, so
// the request named nothing there is. nil for any other error.
func RefusedText(err error, what string) error {
	if pe, ok := isServerError(err); ok && pe.Code == "22021" {
		return &engram.Error{Code: engram.EINVALID, Err: err,
			Message: what + ": a value given holds a NUL byte, which no id, name or key holds"}
	}
	return nil
}

// Where returns the host, port and database of url, for messages: never
// the user's password. A url that does not parse reads as such.
func Where(url string) string {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return "(a PostgreSQL URL that does not parse)"
	}
	return fmt.Sprintf("%s:%d/%s", cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Database)
}
