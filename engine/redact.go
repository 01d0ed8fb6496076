package engine

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/pipeline"
)

var _ engram.RedactService = (*Engine)(nil)

// Redact implements engram.RedactService. It finds the turns holding a
// span (those named, or of the session or namespace, or of every
// namespace), rewrites their archive lines with the spans replaced by the
// marker (and a Redaction recording when, why and how many), then the
// palace's copies of their text (palace.RedactTurns), and embeds the turns
// again. The layer jobs do not run meanwhile.
func (e *Engine) Redact(ctx context.Context, req engram.RedactRequest) (engram.RedactReport, error) {
	start := time.Now()
	rep := engram.RedactReport{Turns: []string{}, DryRun: req.DryRun}
	if err := req.Validate(); err != nil {
		return rep, err
	}
	if err := e.indexer.WaitCurrent(ctx); err != nil {
		return rep, err
	}
	marker := req.MarkerOrDefault()
	ids := req.IDs
	if len(ids) > 0 {
		for i, id := range ids {
			if !e.archive.Known(id) || e.archive.Forgotten(id) {
				return rep, &engram.Error{Code: engram.ENOTFOUND, Field: fmt.Sprintf("ids[%d]", i), Message: fmt.Sprintf("no archived turn has the id %q", id)}
			}
		}
	} else {
		var err error
		if ids, err = e.palace.TurnIDsHolding(ctx, req.Namespace, req.Session, req.Texts); err != nil {
			return rep, err
		}
	}
	edit := func(t engram.Turn) (engram.Turn, bool) {
		if t.IsTombstone() {
			return t, false
		}
		n := 0
		for _, s := range req.Texts {
			n += strings.Count(t.Content, s)
			t.Content = strings.ReplaceAll(t.Content, s, marker)
		}
		if n == 0 {
			return t, false
		}
		r := engram.Redaction{At: time.Now().UTC(), Spans: n, Reason: req.Reason}
		if t.Redacted != nil {
			r.Spans += t.Redacted.Spans
			r.Rules = t.Redacted.Rules
		}
		t.Redacted = &r
		return t, true
	}
	if req.DryRun {
		turns, err := e.palace.GetTurns(ctx, ids)
		if err != nil {
			return rep, err
		}
		for _, t := range turns {
			if nt, ok := edit(t); ok {
				rep.Turns = append(rep.Turns, t.ID)
				rep.Spans += nt.Redacted.Spans
				if t.Redacted != nil {
					rep.Spans -= t.Redacted.Spans
				}
			}
		}
		rep.TookMS = msSince(start)
		return rep, nil
	}
	if len(ids) == 0 {
		rep.TookMS = msSince(start)
		return rep, nil
	}

	e.forgetMu.Lock()
	defer e.forgetMu.Unlock()
	res, err := e.archive.Rewrite(ctx, ids, edit)
	if err != nil {
		return rep, err
	}
	rep.ArchiveFiles = res.Files
	turns := make([]engram.Turn, 0, len(res.Changed))
	for _, c := range res.Changed {
		rep.Turns = append(rep.Turns, c.New.ID)
		rep.Spans += c.New.Redacted.Spans
		if c.Old.Redacted != nil {
			rep.Spans -= c.Old.Redacted.Spans
		}
		turns = append(turns, c.New)
	}
	pr, err := e.palace.RedactTurns(ctx, turns, req.Texts, marker)
	if err != nil {
		return rep, fmt.Errorf("the archive holds the redacted turns, the palace failed (engram rebuild repairs it): %w", err)
	}
	rep.Memories, rep.Scenes = pr.Memories, pr.Scenes
	if err := e.redactCorrections(req.Texts, marker); err != nil {
		return rep, err
	}
	if err := e.reembedRedacted(ctx, turns, pr.Removed); err != nil {
		return rep, err
	}
	rep.TookMS = msSince(start)
	return rep, nil
}

// reembedRedacted drops the removed vectors from the in-memory index and
// Chroma, and embeds the redacted turns with the active model.
func (e *Engine) reembedRedacted(ctx context.Context, turns []engram.Turn, removed []string) error {
	e.vec.mu.Lock()
	side := e.vec.side
	e.vec.mu.Unlock()
	if side == nil {
		return nil
	}
	if err := side.store.Delete(ctx, removed); err != nil {
		return err
	}
	if side.ext != nil {
		if err := side.ext.WaitCurrent(ctx); err != nil {
			return fmt.Errorf("chroma: %w", err)
		}
		if err := side.external.Delete(ctx, removed); err != nil {
			return fmt.Errorf("delete the redacted vectors from chroma: %w", err)
		}
	}
	items, err := pipeline.EmbedTurns(ctx, side.vx.Embedder(), turns)
	if err != nil {
		return fmt.Errorf("embed the redacted turns (engram reindex vectors embeds them later): %w", err)
	}
	return side.store.Upsert(ctx, items)
}
