package archive

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/idmap"
)

// DefaultTailCache is the number of recent turns an Archive keeps in memory
// so that Stream can serve a caller that is nearly caught up (the palace
// indexer, after each commit) without reading files.
const DefaultTailCache = 16384

const (
	dirPerm  fs.FileMode = 0o700 // turns are private conversations
	filePerm fs.FileMode = 0o600

	fileExt       = ".jsonl"
	quarantineDir = "quarantine"
	tempSuffix    = ".tmp"

	// maxBatchRequests bounds how many Append calls one group commit
	// answers, so that one batch cannot grow without end under load.
	maxBatchRequests = 4096
)

// Log attribute keys.
const (
	logKeyComponent = "component"
	logKeyPath      = "path"
	logKeyLine      = "line"
	logKeyErr       = "err"
	logKeyBytes     = "bytes"
	logKeyTo        = "to"
	logKeySeq       = "seq"
	logKeyID        = "id"
)

// Options tune an Archive. Zero values mean the defaults.
type Options struct {
	// Now returns the current time; it stamps received_at, picks the day
	// file and times generated ids. Default time.Now.
	Now func() time.Time
	// Logger receives warnings about damaged files. Default slog.Default().
	Logger *slog.Logger
	// FS is the file system the archive works on. Default OSFS{}. The LOCK
	// file always uses the real file system.
	FS FS
	// TailCache is the number of recent turns kept in memory for Stream.
	// 0 means DefaultTailCache; a negative value keeps none.
	TailCache int
	// LoadWorkers is the number of goroutines that decode the day files'
	// lines at Open (they are applied in order by one). 0 means
	// GOMAXPROCS: a start or a recovery uses every core.
	LoadWorkers int
}

// Archive is the L0 archive: one append-only JSONL file per UTC day under
// a directory, owned by one process at a time. It implements engram.Archive.
// Its methods are safe for concurrent use.
type Archive struct {
	dir  string
	fs   FS
	now  func() time.Time
	log  *slog.Logger
	lock *lockFile

	ctx    context.Context // cancelled by Close; stops the writer
	cancel context.CancelFunc
	wg     sync.WaitGroup
	reqs   chan *request // unbuffered: a request is either taken by the writer or refused

	closeOnce sync.Once
	closeErr  error

	// Owned by the writer goroutine (and by Open before it starts it).
	ids idSeqs // id -> seq of every archived turn, for idempotency
	// goneIDs holds the ids whose latest line is a tombstone; the writer
	// changes it under mu.
	goneIDs map[string]struct{}
	// copies holds, for an id archived on more than one line (a hand edit
	// or a copied file), the seqs of the lines after the first: a rewrite
	// of the id rewrites them too.
	copies  map[string][]int64
	loaders int // goroutines decoding lines at Open
	// fromCheckpoint: Open took the state from the checkpoint.
	fromCheckpoint bool
	// idsReady is closed once ids is complete: at Open when it read every
	// file, after a background load when it took the checkpoint (so that a
	// start answers before a million ids are hashed). The writer, Known and
	// Tombstones wait for it; idsErr, set before it closes, says the id
	// map could not be had, and every write then fails with it.
	idsReady chan struct{}
	idsErr   error
	// ckGone is the checkpoint's tombstones (id -> seq), which are the
	// archive's until its first write, and no write comes before idsReady.
	ckGone   map[string]int64
	cur      File // the open file of curDay, nil before the first write
	curDay   string
	lastRecv time.Time // received_at of the last turn; later ones are never earlier
	entropy  *ulid.MonotonicEntropy
	poison   error // set when an fsync failed; every later Append fails
	lineBuf  []byte

	// mu guards what readers share with the writer. The writer changes it
	// only after a batch is on disk, so readers see committed turns only.
	mu      sync.RWMutex
	files   []fileInfo // in name order, which is also seq order
	lastSeq int64
	tail    tailCache
	notify  chan struct{} // closed at the next commit, then replaced
	closed  bool
	stats   Stats

	// rwMu keeps a Rewrite from replacing a file while a Backup copies
	// it: Backup holds it shared, a rewrite exclusively.
	rwMu sync.RWMutex
}

var _ engram.Archive = (*Archive)(nil)

// Rewriter is an archive whose turns can be forgotten and rewritten, in
// the form every archive can give it: a ctx and an error where the
// PostgreSQL one asks its database (this one answers from memory; the
// engine and the conformance suite wrap it in this form).
type Rewriter interface {
	engram.Archive
	// Notify returns a channel closed when LastSeq next rises.
	Notify() <-chan struct{}
	Known(ctx context.Context, id string) (bool, error)
	Forgotten(ctx context.Context, id string) (bool, error)
	Tombstones(ctx context.Context) (map[string]int64, error)
	Forget(ctx context.Context, ids []string, f engram.Forgotten) (RewriteResult, error)
	Rewrite(ctx context.Context, ids []string, edit Edit) (RewriteResult, error)
	Verify(ctx context.Context) (Report, error)
}

// fileInfo is what the archive knows about one day file.
type fileInfo struct {
	day      string // YYYY-MM-DD
	path     string
	size     int64 // committed bytes: readers never read past them
	turns    int64 // readable turns
	firstSeq int64 // 0 while the file holds no readable turn
	lastSeq  int64
	minTS    time.Time
	maxTS    time.Time
	hasTS    bool  // minTS and maxTS are set: the file holds a live turn
	gone     int64 // tombstones among turns
	gen      int   // rewrites of the file since Open
}

func (fi *fileInfo) add(t *engram.Turn) {
	if fi.turns == 0 {
		fi.firstSeq = t.Seq
	}
	fi.turns++
	fi.lastSeq = t.Seq
	if t.IsTombstone() {
		fi.gone++
		return
	}
	fi.addTS(t.TS)
}

// addTS widens the file's span of live turns' times to ts.
func (fi *fileInfo) addTS(ts time.Time) {
	if !fi.hasTS {
		fi.minTS, fi.maxTS, fi.hasTS = ts, ts, true
	}
	if ts.Before(fi.minTS) {
		fi.minTS = ts
	}
	if ts.After(fi.maxTS) {
		fi.maxTS = ts
	}
}

// Stats counts what an Archive holds and did since Open.
type Stats struct {
	Turns        int64 // readable turns in the archive, tombstones left out
	Forgotten    int64 // tombstones of forgotten turns
	Files        int   // day files
	Bytes        int64 // committed bytes in the day files
	Fsyncs       int64 // fsyncs of files and directories since Open
	Batches      int64 // group commits that wrote turns since Open
	Commits      int64 // Append calls acknowledged since Open
	CorruptLines int64 // complete lines found unreadable (or with a seq out of order) at Open
	TornTails    int64 // torn last lines moved to quarantine at Open
	// Redacted counts the readable turns whose content was redacted;
	// Secrets the spans the ingest filter replaced in them, by rule.
	Redacted int64
	Secrets  map[string]int64
}

// countRedaction adds (d = 1) or takes away (d = -1) the redaction of t
// in the counters.
func (s *Stats) countRedaction(t *engram.Turn, d int64) {
	if t.Redacted == nil || t.IsTombstone() {
		return
	}
	s.Redacted += d
	for rule, n := range t.Redacted.Rules {
		if s.Secrets == nil {
			s.Secrets = map[string]int64{}
		}
		s.Secrets[rule] += d * n
		if s.Secrets[rule] <= 0 {
			delete(s.Secrets, rule)
		}
	}
}

// Open opens the archive in dir (<home>/archive), creating it if need be,
// takes its lock and reads every file: it checks each line, builds the id
// map and recovers from a crash in the middle of a write (see the package
// documentation).
//
// Open returns an *engram.Error with code ELOCKED when another Archive (in
// this process or another) holds dir.
func Open(dir string, opts Options) (*Archive, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.FS == nil {
		opts.FS = OSFS{}
	}
	switch {
	case opts.TailCache == 0:
		opts.TailCache = DefaultTailCache
	case opts.TailCache < 0:
		opts.TailCache = 0
	}
	if opts.LoadWorkers <= 0 {
		opts.LoadWorkers = runtime.GOMAXPROCS(0)
	}
	a := &Archive{
		dir:     filepath.Clean(dir),
		fs:      opts.FS,
		now:     opts.Now,
		log:     opts.Logger.With(logKeyComponent, "archive"),
		reqs:    make(chan *request),
		ids:     idSeqs{rows: idmap.New(0)},
		goneIDs: make(map[string]struct{}),
		copies:  make(map[string][]int64),
		entropy: ulid.Monotonic(rand.Reader, 0),
		tail:    newTailCache(opts.TailCache),
		loaders: opts.LoadWorkers,
		notify:  make(chan struct{}),

		idsReady: make(chan struct{}),
	}
	if err := a.ensureDir(a.dir); err != nil {
		return nil, fmt.Errorf("archive: create %s: %w", a.dir, err)
	}
	lock, err := acquireLock(a.dir)
	if err != nil {
		return nil, err
	}
	a.lock = lock
	if err := a.load(); err != nil {
		lock.release()
		return nil, err
	}
	a.ctx, a.cancel = context.WithCancel(context.Background())
	a.wg.Add(1)
	go a.run()
	return a, nil
}

// Close stops the writer after the batch in flight, fsyncs and closes the
// current file and releases the lock. Appends waiting to be taken fail with
// EUNAVAILABLE, as do all later calls. Close may be called more than once.
func (a *Archive) Close() error {
	a.closeOnce.Do(func() {
		a.mu.Lock()
		a.closed = true
		a.mu.Unlock()

		a.cancel()
		a.wg.Wait()

		var errs []error
		if a.cur != nil {
			// Every batch is fsynced before it is answered; this one only
			// matters if that ever changes. A poisoned file is not retried.
			if a.poison == nil {
				errs = append(errs, a.sync(a.cur))
			}
			errs = append(errs, a.cur.Close())
			a.cur = nil
		}
		if a.poison == nil && errors.Join(errs...) == nil {
			if err := a.writeCheckpoint(); err != nil {
				// Only the next start's speed is lost: it reads every file.
				a.log.Warn("archive: cannot write the checkpoint; the next start reads every file", logKeyErr, err)
			}
		}
		errs = append(errs, a.lock.release())

		a.mu.Lock()
		close(a.notify) // wake waiters; their next call says the archive is closed
		a.mu.Unlock()
		if err := errors.Join(errs...); err != nil {
			a.closeErr = fmt.Errorf("archive: close: %w", err)
		}
	})
	return a.closeErr
}

// LastSeq returns the highest sequence number archived so far.
func (a *Archive) LastSeq() int64 {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.lastSeq
}

// Notify returns a channel that is closed at the next successful commit
// (and at Close). Every caller holding it is woken: it is a broadcast.
// To wait for turns after seq n without missing one, take the channel
// first, then check LastSeq:
//
//	for {
//		ch := a.Notify()
//		if a.LastSeq() > n {
//			break
//		}
//		select {
//		case <-ch:
//		case <-ctx.Done():
//			return ctx.Err()
//		}
//	}
func (a *Archive) Notify() <-chan struct{} {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return a.notify
}

// Stats returns counters of what the archive holds and did since Open.
func (a *Archive) Stats() Stats {
	a.mu.RLock()
	defer a.mu.RUnlock()
	s := a.stats
	s.Secrets = maps.Clone(a.stats.Secrets)
	s.Files = len(a.files)
	for _, fi := range a.files {
		s.Bytes += fi.size
	}
	return s
}

// errClosed is what Append and the readers return after Close.
func errClosed() error {
	return engram.Errorf(engram.EUNAVAILABLE, "the archive is closed")
}

// dayPath returns the file of a day: <dir>/YYYY/MM/YYYY-MM-DD.jsonl.
func (a *Archive) dayPath(day string) string {
	return filepath.Join(a.dir, day[0:4], day[5:7], day+fileExt)
}

// syncError marks an fsync that failed. Unlike a failed write it cannot be
// retried: after a failed fsync the kernel may have dropped the dirty pages
// and marked them clean, so a second fsync can succeed while data is lost.
type syncError struct{ err error }

func (e *syncError) Error() string { return "fsync: " + e.err.Error() }
func (e *syncError) Unwrap() error { return e.err }

// sync fsyncs f and counts it.
func (a *Archive) sync(f File) error {
	if err := f.Sync(); err != nil {
		return &syncError{err}
	}
	a.countFsync()
	return nil
}

// syncDir fsyncs dir and counts it.
func (a *Archive) syncDir(dir string) error {
	if err := syncDir(a.fs, dir); err != nil {
		return &syncError{err}
	}
	a.countFsync()
	return nil
}

func (a *Archive) countFsync() {
	a.mu.Lock()
	a.stats.Fsyncs++
	a.mu.Unlock()
}

// ensureDir creates dir and any missing parents with mode 0700, fsyncing
// the parent of each directory it creates so that the new name is durable.
func (a *Archive) ensureDir(dir string) error {
	if _, err := a.fs.Stat(dir); err == nil {
		return nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := a.ensureDir(parent); err != nil {
			return err
		}
	}
	if err := a.fs.MkdirAll(dir, dirPerm); err != nil {
		return err
	}
	return a.syncDir(parent)
}

// createFile creates a new file (it must not exist) and fsyncs its
// directory, creating directories as needed.
func (a *Archive) createFile(path string, flag int) (File, error) {
	dir := filepath.Dir(path)
	if err := a.ensureDir(dir); err != nil {
		return nil, err
	}
	f, err := a.fs.OpenFile(path, flag|os.O_CREATE|os.O_EXCL, filePerm)
	if err != nil {
		return nil, err
	}
	if err := a.syncDir(dir); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// isNoSpace reports whether err says the disk or the quota is full.
func isNoSpace(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}

// idSeqs maps every archived id to its seq: an idmap.Map of the ids and
// their seqs by row, a third of the memory of a map[string]int64 (about 4
// MB at 100,000 turns where the map took 11).
type idSeqs struct {
	rows idmap.Map
	seqs []int64 // by row
}

// get returns id's seq.
func (m *idSeqs) get(id string) (int64, bool) {
	r, ok := m.rows.Row(id)
	if !ok {
		return 0, false
	}
	return m.seqs[r], true
}

// set records seq as id's.
func (m *idSeqs) set(id string, seq int64) {
	if r, ok := m.rows.Row(id); ok {
		m.seqs[r] = seq
		return
	}
	m.rows.Add(id)
	m.seqs = append(m.seqs, seq)
}

// trim gives the map's memory its length as capacity: for after a load.
func (m *idSeqs) trim() {
	m.rows.Trim()
	if cap(m.seqs) > len(m.seqs) {
		m.seqs = slices.Clone(m.seqs)
	}
}
