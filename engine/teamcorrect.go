package engine

import (
	"context"

	"github.com/engram-dev/engram"
)

// correctionWorker is the palace watermark (WorkerSeq) of the shared
// corrections journal: the number of its last entry applied to the
// palace.
const correctionWorker = "corrections"

// followCorrections starts, when the corrections journal is shared (in
// PostgreSQL), the goroutine that applies the other servers' corrections
// to this palace: at each of the journal's notifications (and once the
// listener listens again after a lost connection), it applies the entries
// after the palace's watermark in an exclusive section of e.work, as
// Correct does (applyJournal), and drops the corrections another
// server's forget took out of the journal (pruneCorrections). The
// watermark makes it miss nothing: a notification lost, or a correction
// made while this server was down (Open applies those first).
func (e *Engine) followCorrections() {
	sj, ok := e.journal.(sharedJournal)
	if !ok {
		return
	}
	e.corrections.start(e.logger, "corrections", sj.Changed, func(ctx context.Context) error {
		return e.work.Exclusive(ctx, func() error {
			if err := e.applyJournal(ctx, sj); err != nil {
				return err
			}
			return e.pruneCorrections(ctx)
		})
	})
}

// applyJournal applies to the palace the shared journal's entries after
// its watermark, in the journal's order (every server applies them in
// it, so the last correction of a memory or a fact is the same on each),
// a page at a time: the palace records each (ApplyCorrections, which
// skips one it holds, and keeps one whose memory or fact it has not
// derived yet for when it does); the personas are folded again when a
// memory was marked wrong or restored; then the watermark passes the
// page. A failure before the watermark leaves the page to be applied
// again, which changes nothing the first time did. The caller holds an
// exclusive section of e.work, or runs before anything else does (Open,
// Rebuild).
func (e *Engine) applyJournal(ctx context.Context, sj sharedJournal) error {
	for {
		wm, err := e.palace.WorkerSeq(ctx, correctionWorker)
		if err != nil {
			return err
		}
		page, err := sj.Since(ctx, wm)
		if err != nil || len(page) == 0 {
			return err
		}
		cs := make([]engram.Correction, len(page))
		refold := false
		for i, c := range page {
			cs[i] = c.Correction
			if c.Target == engram.CorrectMemory && (c.Wrong || c.Restore) {
				refold = true
			}
		}
		n, err := e.palace.ApplyCorrections(ctx, cs)
		if err != nil {
			return err
		}
		if refold {
			if err := e.refoldPersonas(ctx); err != nil {
				return err
			}
		}
		if err := e.palace.SetWorkerSeq(ctx, correctionWorker, page[len(page)-1].N); err != nil {
			return err
		}
		if n > 0 {
			e.logger.Info("applied corrections from the shared journal", "corrections", n, "journal", page[len(page)-1].N)
		}
	}
}

// pruneCorrections drops from the palace the corrections the shared
// journal no longer holds: another server's forget took them out after
// this server applied that forget (or without this server holding what
// they corrected), and their text holds the forgotten turns' words.
func (e *Engine) pruneCorrections(ctx context.Context) error {
	ids, err := e.droppedCorrections(ctx)
	if err != nil || len(ids) == 0 {
		return err
	}
	if err := e.palace.DropCorrections(ctx, ids); err != nil {
		return err
	}
	e.logger.Info("dropped the corrections another server took out of the shared journal", "corrections", len(ids))
	return nil
}
