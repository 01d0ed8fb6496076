package palace

import (
	"context"
	"database/sql"
	"slices"
	"sync/atomic"
	"time"
)

// mergeTables are the full-text indexes (FTS5) whose segments the merger
// merges: every one of the palace's.
var mergeTables = append(slices.Clone(ftsTables), "vault_chunks_fts", "vault_chunks_trigram")

const (
	// mergePages is the work of one merge step: FTS5 writes about this
	// many leaf pages (1,000 bytes each, migration 0014) of merged
	// segments: small enough that a write queued behind a step waits
	// little; the trigram index's steps, whose terms are many, are the
	// longest.
	mergePages = 64
	// mergeEvery is the least time between two merge passes: a pass
	// looks at every table (one transaction when none has work), and a
	// pass after every single-turn write would double the writer's
	// transactions; wait much longer, and a stream of such writes makes
	// the 16 segments of a crisis merge before the next pass.
	mergeEvery = 10 * time.Millisecond
)

// merger merges the full-text indexes' segments behind the writes. Every
// commit of the palace's writer adds a segment to each full-text table it
// wrote; FTS5 merged them inside that commit (automerge), and one commit in
// some fifty paid for a merge step over every level, which a POST's
// acknowledgement waited for. Migration 0017 turned that off; after
// commits, at most every mergeEvery, this goroutine runs a pass: for each
// table, FTS5 'merge' steps of mergePages pages, each in a transaction of
// its own that takes the writer behind every other write (the write gate;
// the tables with nothing to merge are looked at in one), until no table
// has a level of four segments or more (usermerge) left to merge. So a
// POST waits at most for one step, not for a merge, and the layer jobs'
// transactions no longer carry merges either. Should the
// merger fall behind, FTS5 merges a level of 16 segments in the commit that
// makes it (crisismerge): slower, never wrong.
type merger struct {
	*background
	db    *DB
	begin func(context.Context) (func(), error) // Options.Work; nil: none

	steps  atomic.Int64 // merge steps that merged something
	pokes  atomic.Int64 // commits that woke the merger
	merged atomic.Int64 // the pokes a finished pass has seen to
}

// newMerger makes the merger of db; start starts it. Its first pass
// follows the process's first write: a process that only reads never
// takes the writer (another process, engram serve, may hold it), and
// segments a process left unmerged when it stopped wait for the next
// write.
func newMerger(db *DB, begin func(context.Context) (func(), error)) *merger {
	m := &merger{db: db, begin: begin}
	m.background = newBackground(mergeEvery, func(context.Context) {
		seen := m.pokes.Load()
		if m.pass() {
			m.merged.Store(seen)
		}
	})
	return m
}

// poke tells the merger that the writer committed. It never blocks.
func (m *merger) poke() {
	m.pokes.Add(1)
	m.background.poke()
}

// pass merges every table until none has work left, and reports whether it
// got so far (false when a step failed or the merger is stopping: the next
// commit's poke tries again).
func (m *merger) pass() bool {
	for from := 0; from < len(mergeTables); {
		if m.ctx.Err() != nil {
			return false
		}
		next, err := m.step(from)
		if err != nil {
			return false
		}
		if next < len(mergeTables) {
			m.steps.Add(1)
		}
		from = next
	}
	return true
}

// step runs FTS5 'merge' of mergePages pages on the tables from mergeTables[from]
// on, in one transaction, until one of them merges something, and returns
// the index of that table (its next step starts there), len(mergeTables)
// when none did. FTS5 changes two rows or more when it merges (its
// documentation's test), so a table with nothing to merge costs a look at
// its structure. It is a step of the process's background work
// (Options.Work), begun before it waits for the writer.
func (m *merger) step(from int) (int, error) {
	if m.begin != nil {
		done, err := m.begin(m.ctx)
		if err != nil {
			return 0, err
		}
		defer done()
	}
	next := len(mergeTables)
	err := m.db.write(m.ctx, false, func(tx *sql.Tx) error {
		var before, after int64
		if err := tx.QueryRowContext(m.ctx, `SELECT total_changes()`).Scan(&before); err != nil {
			return err
		}
		for i := from; i < len(mergeTables); i++ {
			table := mergeTables[i]
			if _, err := tx.ExecContext(m.ctx, `INSERT INTO `+table+` (`+table+`, rank) VALUES ('merge', ?)`, mergePages); err != nil {
				return err
			}
			if err := tx.QueryRowContext(m.ctx, `SELECT total_changes()`).Scan(&after); err != nil {
				return err
			}
			if after-before >= 2 {
				next = i
				return nil
			}
			before = after
		}
		return nil
	})
	return next, err
}

// idle reports whether a pass has finished since the last commit.
func (m *merger) idle() bool { return m.merged.Load() == m.pokes.Load() }
