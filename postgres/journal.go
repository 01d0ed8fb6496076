package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
)

// The kinds of the rewrite journal's entries.
const (
	RewriteForget = "forget"
	RewriteRedact = "redact"
)

// Redaction is how a redaction replaced its spans, as its journal entry
// records it: by Marker, for Reason. The spans themselves are not
// recorded: the journal must not keep what the redaction removed. A
// server that applies the entry finds them by comparing its own copy of
// each turn with the archive's (engram.RemovedSpans).
type Redaction struct {
	Marker string `json:"marker"`
	Reason string `json:"reason,omitempty"`
}

// Rewrite is an entry of the rewrite journal: a Forget or a Rewrite
// (Redact) transaction that changed rows, numbered N in commit order.
type Rewrite struct {
	N    int64
	At   time.Time
	Kind string // RewriteForget or RewriteRedact
	// IDs and Seqs are the turns changed, in seq order.
	IDs  []string
	Seqs []int64
	// Redaction is nil for a forget, and for a Rewrite that did not say
	// what it replaced.
	Redaction *Redaction
}

// RewritesSince returns the journal's entries after n, in order, at most
// pageRows of them: a caller that got a full page asks again after the
// last. The entries are numbered in commit order (their transactions hold
// the append lock), so a reader that keeps the last number it applied
// misses none.
func (a *Archive) RewritesSince(ctx context.Context, n int64) ([]Rewrite, error) {
	if a.closed.Load() {
		return nil, errClosed()
	}
	var out []Rewrite
	err := a.retryRead(ctx, func() error {
		out = out[:0]
		rows, err := a.pool.Query(ctx, `SELECT n, at, kind, ids, seqs, redaction FROM archive_rewrites
			WHERE n > $1 ORDER BY n LIMIT $2`, n, pageRows)
		if err != nil {
			return err
		}
		var r Rewrite
		var red []byte
		_, err = pgx.ForEachRow(rows, []any{&r.N, &r.At, &r.Kind, &r.IDs, &r.Seqs, &red}, func() error {
			e := r
			if red != nil {
				e.Redaction = &Redaction{}
				if err := json.Unmarshal(red, e.Redaction); err != nil {
					return fmt.Errorf("rewrite journal entry %d: %w", r.N, err)
				}
			}
			out = append(out, e)
			r, red = Rewrite{}, nil
			return nil
		})
		return err
	})
	if err != nil {
		return nil, readFailure(ctx, err)
	}
	return out, nil
}

// TurnsAt returns the readable turns of the given seqs as the archive
// holds them now (tombstones included), in seq order.
func (a *Archive) TurnsAt(ctx context.Context, seqs []int64) ([]engram.Turn, error) {
	if a.closed.Load() {
		return nil, errClosed()
	}
	var out []engram.Turn
	err := a.retryRead(ctx, func() error {
		out = out[:0]
		rows, err := a.pool.Query(ctx, `SELECT seq, id, crc, line FROM archive_turns WHERE seq = ANY($1) ORDER BY seq`, seqs)
		if err != nil {
			return err
		}
		var seq, crc int64
		var id string
		var line []byte
		_, err = pgx.ForEachRow(rows, []any{&seq, &id, &crc, &line}, func() error {
			if t, err := a.decode(seq, id, crc, line); err == nil {
				out = append(out, t)
			} else {
				a.corrupt.Add(1)
				a.log.Warn("postgres archive: unreadable row skipped", logKeySeq, seq, logKeyErr, err)
			}
			line = nil
			return nil
		})
		return err
	})
	if err != nil {
		return nil, readFailure(ctx, err)
	}
	return out, nil
}
