package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
)

// openJournal opens the home's corrections journal and gives the palace
// the corrections it lacks: every one after a rebuild or a restore of an
// older palace, the last one after a crash between the journal and the
// palace.
func (e *Engine) openJournal(ctx context.Context) error {
	j, err := archive.OpenJournal(filepath.Join(e.cfg.Home, archive.CorrectionsFile))
	if err != nil {
		return err
	}
	e.journal = j
	if all := j.All(); len(all) > 0 {
		n, err := e.palace.ApplyCorrections(ctx, all)
		if err != nil {
			return err
		}
		if n > 0 {
			e.logger.Info("applied corrections from the journal", "corrections", n)
		}
	}
	return nil
}

// Correct implements engram.CorrectService: it checks the request, finds
// the memory or fact, appends the correction to the journal (fsynced), and
// applies it to the palace. The layer jobs do not run meanwhile.
func (e *Engine) Correct(ctx context.Context, req engram.CorrectionRequest) (engram.Correction, error) {
	if err := req.Validate(); err != nil {
		return engram.Correction{}, err
	}
	c := engram.Correction{ID: newCorrectionID(), At: time.Now().UTC(), Target: req.Target, Of: req.ID,
		Text: req.Text, Object: req.Object, Wrong: req.Wrong, Restore: req.Restore, Reason: req.Reason}
	e.forgetMu.Lock()
	defer e.forgetMu.Unlock()
	switch req.Target {
	case engram.CorrectMemory:
		m, err := e.palace.MemoryToCorrect(ctx, req.ID)
		if err != nil {
			return c, err
		}
		c.Namespace, c.Type, c.Sources = m.Namespace, m.Type, m.Sources
		c.Original = m.Text
		if m.Extracted != "" {
			c.Original = m.Extracted
		}
		if req.Restore && m.Corrected == "" {
			return c, engram.FieldError("restore", "memory %s has no correction to take back", req.ID)
		}
	case engram.CorrectFact:
		tr, key, mems, err := e.palace.FactToCorrect(ctx, req.ID)
		if err != nil {
			return c, err
		}
		c.Namespace, c.Subject, c.Predicate, c.Original, c.Key, c.Memories = tr.Namespace, tr.Subject, tr.Predicate, tr.Object, key, mems
	}
	if err := e.journal.Append(c); err != nil {
		return c, err
	}
	if _, err := e.palace.ApplyCorrections(ctx, []engram.Correction{c}); err != nil {
		return c, fmt.Errorf("the journal holds the correction, the palace failed (the next start applies it): %w", err)
	}
	return c, nil
}

// Corrections returns every correction of the journal, oldest first.
func (e *Engine) Corrections() []engram.Correction { return e.journal.All() }

func newCorrectionID() string {
	var b [8]byte
	rand.Read(b[:])
	return "cor-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}
