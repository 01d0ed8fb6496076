package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/memrule"
	"github.com/engram-dev/engram/pipeline"
)

// openJournal opens the corrections journal (the home's file, or with
// store = "postgres" the database's, shared by every server) and gives
// the palace the corrections it lacks: every one after a rebuild or a
// restore of an older palace, the last one after a crash between the
// journal and the palace, and, with the shared journal, those other
// servers made since this palace last applied one (applyJournal).
func (e *Engine) openJournal(ctx context.Context) error {
	j, err := e.openCorrections()
	if err != nil {
		return err
	}
	e.journal = j
	// A forget that stopped before the journal (a crash), or an archive
	// restored with tombstones the journal predates.
	gone, err := e.archive.Tombstones(ctx)
	if err != nil {
		return fmt.Errorf("read the archive's tombstones: %w", err)
	}
	if len(gone) > 0 {
		ids := make(map[string]bool, len(gone))
		for id := range gone {
			ids[id] = true
		}
		if err := e.forgetCorrections(ctx, ids, false, nil); err != nil {
			return err
		}
	}
	if sj, ok := j.(sharedJournal); ok {
		// Nothing else runs yet: no exclusive section.
		if err := e.applyJournal(ctx, sj); err != nil {
			return err
		}
		return e.pruneCorrections(ctx)
	}
	all, err := j.All(ctx)
	if err != nil {
		return err
	}
	if len(all) > 0 {
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
// applies it to the palace. No layer job stores what it derived from the
// memories as they were before.
func (e *Engine) Correct(ctx context.Context, req engram.CorrectionRequest) (engram.Correction, error) {
	if err := req.Validate(); err != nil {
		return engram.Correction{}, err
	}
	c := engram.Correction{ID: newCorrectionID(), At: time.Now().UTC(), Target: req.Target, Of: req.ID,
		Text: req.Text, Object: req.Object, Wrong: req.Wrong, Restore: req.Restore, Reason: req.Reason}
	// An exclusive section of the engine's work: no layer job stores what
	// it derived from the memories as they were before.
	err := e.work.Exclusive(ctx, func() error { return e.correct(ctx, req, &c) })
	return c, err
}

// correct finds what req corrects, records c in the journal and applies
// it: Correct's work, in an exclusive section of e.work.
func (e *Engine) correct(ctx context.Context, req engram.CorrectionRequest, c *engram.Correction) error {
	switch req.Target {
	case engram.CorrectMemory:
		m, err := e.palace.MemoryToCorrect(ctx, req.ID)
		if err != nil {
			return err
		}
		c.Namespace, c.Type, c.Sources = m.Namespace, m.Type, m.Sources
		c.Original = m.Text
		if m.Extracted != "" {
			c.Original = m.Extracted
		}
		if req.Restore && m.Corrected == "" {
			return engram.FieldError("restore", "memory %s has no correction to take back", req.ID)
		}
	case engram.CorrectFact:
		tr, key, mems, err := e.palace.FactToCorrect(ctx, req.ID)
		if err != nil {
			return err
		}
		c.Namespace, c.Subject, c.Predicate, c.Original, c.Key, c.Memories = tr.Namespace, tr.Subject, tr.Predicate, tr.Object, key, mems
	}
	if err := e.journal.Append(ctx, *c); err != nil {
		return err
	}
	if sj, ok := e.journal.(sharedJournal); ok {
		// The corrections other servers made before this one are applied
		// first, in the journal's order, as every server applies them:
		// the last correction of a memory wins on each.
		if err := e.applyJournal(ctx, sj); err != nil {
			return fmt.Errorf("the journal holds the correction, the palace failed (the next start applies it): %w", err)
		}
		return nil
	}
	if _, err := e.palace.ApplyCorrections(ctx, []engram.Correction{*c}); err != nil {
		return fmt.Errorf("the journal holds the correction, the palace failed (the next start applies it): %w", err)
	}
	if req.Target == engram.CorrectMemory && (req.Wrong || req.Restore) {
		// The personas the memory was folded into (or left out of) are
		// folded again; the persona job's stores wait, and are refused
		// after (it reads the memories again).
		if err := e.refoldPersonas(ctx); err != nil {
			return fmt.Errorf("the correction is recorded, folding the personas again failed (the persona job finishes it): %w", err)
		}
	}
	return nil
}

// refoldPersonas folds the personas again from the memories: a memory
// marked wrong (or restored) leaves (or rejoins) the personas it was
// folded into. The persona job's stores wait, and are refused after (it
// reads the memories again).
func (e *Engine) refoldPersonas(ctx context.Context) error {
	if err := e.palace.ResetPersonas(ctx, pipeline.WorkerPersona); err != nil {
		return err
	}
	return (&pipeline.PersonaWorker{Store: e.palace}).Run(ctx)
}

// Corrections returns every correction of the journal, oldest first.
func (e *Engine) Corrections(ctx context.Context) ([]engram.Correction, error) {
	return e.journal.All(ctx)
}

func newCorrectionID() string {
	var b [8]byte
	rand.Read(b[:])
	return "cor-" + time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

// forgetCorrections takes forgotten turns out of the corrections journal:
// a correction of a memory that stood only on them, or (with facts) of a
// fact none of whose memories is left in the palace, goes (what it
// corrected is gone, and its text holds the turns' words); a memory's
// other sources keep it. At Open, facts is false: the layers of a rebuilt
// palace are not made yet. held, when not nil (the shared journal), is
// what factMemoriesHeld read before the forget: a fact correction none of
// whose memories it holds is kept.
func (e *Engine) forgetCorrections(ctx context.Context, gone map[string]bool, facts bool, held map[string]bool) error {
	if len(gone) == 0 {
		return nil
	}
	all, err := e.journal.All(ctx)
	if err != nil {
		return err
	}
	_, shared := e.journal.(sharedJournal)
	if len(all) == 0 && !shared {
		return nil
	}
	left := map[string]bool{} // the facts' memories still in the palace
	for _, c := range all {
		if facts && c.Target == engram.CorrectFact && len(c.Memories) > 0 {
			ms, err := e.palace.GetMemories(ctx, c.Memories)
			if err != nil {
				return err
			}
			for _, m := range ms {
				left[m.ID] = true
			}
		}
	}
	var dropped []string
	_, err = e.journal.Rewrite(ctx, func(c engram.Correction) (engram.Correction, bool) {
		keep := true
		defer func() {
			if !keep {
				dropped = append(dropped, c.ID)
			}
		}()
		switch {
		case len(c.Sources) > 0:
			var kept []string
			for _, id := range c.Sources {
				if !gone[id] {
					kept = append(kept, id)
				}
			}
			if len(kept) == 0 {
				keep = false
				return c, false
			}
			c.Sources = kept
		case facts && c.Target == engram.CorrectFact && len(c.Memories) > 0:
			if held != nil && !slices.ContainsFunc(c.Memories, func(id string) bool { return held[id] }) {
				return c, true // none of its memories was here: not this server's to judge
			}
			if !slices.ContainsFunc(c.Memories, func(id string) bool { return left[id] }) {
				keep = false
				return c, false
			}
		}
		return c, true
	})
	if err != nil {
		return fmt.Errorf("the palace forgot the turns, the corrections journal failed: %w", err)
	}
	if shared {
		// Another server may have taken them out of the journal first
		// (its own forget, or this one's as it applied it): the palace
		// drops every correction the journal no longer holds, which it
		// only ever got from the journal.
		if dropped, err = e.droppedCorrections(ctx); err != nil {
			return err
		}
	}
	return e.palace.DropCorrections(ctx, dropped)
}

// factMemoriesHeld returns, with the shared journal, which memories of
// its fact corrections the palace holds (before a forget): a fact
// correction is judged gone only where a memory it stands on was held and
// is no more, since a server that derives no layers, or has not derived
// these yet, holds none of them and cannot tell. nil with the home's
// journal, which judges every fact correction by the palace.
func (e *Engine) factMemoriesHeld(ctx context.Context) (map[string]bool, error) {
	if _, ok := e.journal.(sharedJournal); !ok {
		return nil, nil
	}
	all, err := e.journal.All(ctx)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range all {
		if c.Target == engram.CorrectFact {
			ids = append(ids, c.Memories...)
		}
	}
	held := map[string]bool{}
	if len(ids) == 0 {
		return held, nil
	}
	ms, err := e.palace.GetMemories(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		held[m.ID] = true
	}
	return held, nil
}

// droppedCorrections returns the ids of the corrections the palace holds
// that the journal no longer does.
func (e *Engine) droppedCorrections(ctx context.Context) ([]string, error) {
	all, err := e.journal.All(ctx)
	if err != nil {
		return nil, err
	}
	kept := make(map[string]bool, len(all))
	for _, c := range all {
		kept[c.ID] = true
	}
	have, err := e.palace.CorrectionIDs(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, id := range have {
		if !kept[id] {
			out = append(out, id)
		}
	}
	return out, nil
}

// redactCorrections replaces the spans by marker in every text of the
// corrections journal, as the palace does in its copy (a fact's key made
// again from the redacted names).
func (e *Engine) redactCorrections(ctx context.Context, spans []string, marker string) error {
	red := func(s string) string {
		for _, sp := range spans {
			s = strings.ReplaceAll(s, sp, marker)
		}
		return s
	}
	_, err := e.journal.Rewrite(ctx, func(c engram.Correction) (engram.Correction, bool) {
		return memrule.RedactCorrection(c, red), true
	})
	if err != nil {
		return fmt.Errorf("the palace holds the redacted turns, the corrections journal failed: %w", err)
	}
	return nil
}
