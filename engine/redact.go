package engine

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/pipeline"
)

var _ engram.RedactService = (*Engine)(nil)

// Redact implements engram.RedactService. It finds the turns holding a
// span in their content, speaker or meta (those named, or of the session
// or namespace, or of every namespace), rewrites their archive lines with
// the spans replaced by the marker (engram.Turn.RedactSpans, and a
// Redaction recording when, why and how many), then the palace's copies
// of their text (palace.RedactTurns) and the corrections journal, and
// embeds the turns again with every model that had a vector of them (see
// reembedRedacted). The layer jobs do not run meanwhile, and the workers
// that embed turns (the vector side's, a re-embed's, a reindex's) write no
// vector meanwhile, nor after it a vector of a turn they read before it
// (work.Scheduler.Exclusive): they read it again.
func (e *Engine) Redact(ctx context.Context, req engram.RedactRequest) (engram.RedactReport, error) {
	start := time.Now()
	rep := engram.RedactReport{Turns: []string{}, DryRun: req.DryRun}
	if err := req.Validate(); err != nil {
		return rep, err
	}
	if err := e.indexer.WaitCurrent(ctx); err != nil {
		return rep, err
	}
	if testHooks.redactStart != nil {
		testHooks.redactStart()
	}
	marker := req.MarkerOrDefault()
	spans := engram.NewSpans(req.Texts) // made once: every turn is looked through in one pass
	edit := redactEdit(spans, marker, req.Reason)
	ids, current, warnings, err := e.redactTargets(ctx, req, spans, marker)
	if err != nil {
		return rep, err
	}
	rep.Warnings = append(rep.Warnings, warnings...)
	rep.Warnings = append(rep.Warnings, unreached(current, spans)...)
	if req.DryRun {
		for _, t := range current {
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

	// An exclusive section of the engine's work: no vector of a turn, nor
	// anything a layer job derived from one, read before it is written
	// from here on, nor after it (the workers read the turns again).
	err = e.work.Exclusive(ctx, func() error { return e.redactIDs(ctx, req, ids, edit, marker, &rep) })
	if err != nil {
		return rep, err
	}
	rep.TookMS = msSince(start)
	return rep, nil
}

// redactIDs rewrites the turns ids in the archive with edit, then the
// palace's copies, the corrections journal and the turns' vectors, adding
// what it did to rep: Redact's work, in an exclusive section of e.work.
func (e *Engine) redactIDs(ctx context.Context, req engram.RedactRequest, ids []string, edit func(engram.Turn) (engram.Turn, bool), marker string, rep *engram.RedactReport) error {
	res, err := e.archive.Redact(ctx, ids, edit, req.Texts, marker, req.Reason)
	if err != nil {
		return err
	}
	e.rewrites.own(res.Journal)
	if res, err = e.rewriteDamaged(ctx, res, edit); err != nil {
		return err
	}
	rep.ArchiveFiles = res.Files
	// A turn the indexer read before the rewrite (one archived while this
	// began) reaches the palace with its old text: let it arrive, so that
	// RedactTurns finds it there.
	if testHooks.redactRewritten != nil {
		testHooks.redactRewritten()
	}
	if err := e.indexer.WaitCurrent(ctx); err != nil {
		return fmt.Errorf("the archive holds the redacted turns, the palace failed (engram rebuild repairs it): %w", err)
	}
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
		return fmt.Errorf("the archive holds the redacted turns, the palace failed (engram rebuild repairs it): %w", err)
	}
	rep.Memories, rep.Scenes = pr.Memories, pr.Scenes
	if err := e.redactCorrections(ctx, req.Texts, marker); err != nil {
		return err
	}
	warnings, err := e.reembedRedacted(ctx, turns, pr)
	if err != nil {
		return err
	}
	rep.Warnings = append(rep.Warnings, warnings...)
	if rep.PreviousPalace, err = e.dropPreviousPalace(); err != nil {
		return err
	}
	return nil
}

// archiveKnows returns which of ids the archive holds as live turns.
func (e *Engine) archiveKnows(ctx context.Context, ids []string) (map[string]bool, error) {
	known := make(map[string]bool, len(ids))
	for _, id := range ids {
		ok, err := e.archive.Known(ctx, id)
		if err != nil {
			return nil, err
		}
		known[id] = ok
	}
	return known, nil
}

// redactTargets returns the turns a redaction reaches as they are now (the
// palace's copies, of damaged lines too, and the archived turns the palace
// skipped) with their ids: those req names, which must be archived, or
// else every turn holding one of its texts. A turn the palace holds whose
// line the archive can neither read nor write again is left out, with a
// warning.
func (e *Engine) redactTargets(ctx context.Context, req engram.RedactRequest, spans *engram.Spans, marker string) (ids []string, current []engram.Turn, warnings []string, err error) {
	ids = req.IDs
	if len(ids) > 0 {
		known, err := e.archiveKnows(ctx, ids)
		if err != nil {
			return nil, nil, nil, err
		}
		var unknown []string
		for _, id := range ids {
			if !known[id] {
				unknown = append(unknown, id)
			}
		}
		// A turn whose archive line is damaged is redacted from the
		// palace's copy.
		damaged, err := e.damagedTurns(ctx, unknown)
		if err != nil {
			return nil, nil, nil, err
		}
		for i, id := range ids {
			forgotten, err := e.archive.Forgotten(ctx, id)
			if err != nil {
				return nil, nil, nil, err
			}
			if forgotten || !known[id] && damaged[id].ID == "" {
				return nil, nil, nil, &engram.Error{Code: engram.ENOTFOUND, Field: fmt.Sprintf("ids[%d]", i), Message: fmt.Sprintf("no archived turn has the id %q", id)}
			}
		}
	}
	// The turns the palace skipped hold text only in the archive.
	var skipped []engram.Turn
	all, err := e.skippedTurns(ctx, req.Namespace, req.Session)
	if err != nil {
		return nil, nil, nil, err
	}
	named := map[string]bool{}
	for _, id := range ids {
		named[id] = true
	}
	for _, t := range all {
		if _, n := t.RedactWith(spans, marker); named[t.ID] || len(ids) == 0 && (n > 0 || len(t.Unredactable(spans)) > 0) {
			skipped = append(skipped, t)
		}
	}
	if len(ids) == 0 {
		// A span only in an id, a namespace or a session finds the turn
		// too: the report warns of it.
		if ids, err = e.palace.TurnIDsHolding(ctx, req.Namespace, req.Session, req.Texts, true); err != nil {
			return nil, nil, nil, err
		}
		for _, t := range skipped {
			if !slices.Contains(ids, t.ID) {
				ids = append(ids, t.ID)
			}
		}
	}
	// The turns as they are now: the palace's copies (of damaged lines
	// too), and the archived skipped ones.
	current, err = e.palace.GetTurns(ctx, ids)
	if err != nil {
		return nil, nil, nil, err
	}
	have := make(map[string]bool, len(current))
	for _, t := range current {
		have[t.ID] = true
	}
	for _, t := range skipped {
		if !have[t.ID] { // not a copy of a stored turn
			current = append(current, t)
		}
	}
	// A turn the palace holds whose line the archive cannot read nor write
	// again (a damaged last line) is left by the run: the dry run leaves
	// it too, and both say so.
	currentIDs := make([]string, len(current))
	for i, t := range current {
		currentIDs[i] = t.ID
	}
	known, err := e.archiveKnows(ctx, currentIDs)
	if err != nil {
		return nil, nil, nil, err
	}
	var unread []string
	for _, t := range current {
		if !known[t.ID] {
			unread = append(unread, t.ID)
		}
	}
	if len(unread) > 0 {
		damaged, err := e.damagedTurns(ctx, unread)
		if err != nil {
			return nil, nil, nil, err
		}
		var left []string
		current = slices.DeleteFunc(current, func(t engram.Turn) bool {
			gone := !known[t.ID] && damaged[t.ID].ID == ""
			if gone {
				left = append(left, strconv.Quote(t.ID))
			}
			return gone
		})
		if len(left) > 0 {
			warnings = append(warnings, fmt.Sprintf("%d %s the palace holds %s no archive line that can be written again (%s): see engram doctor",
				len(left), noun(len(left), "turn", "turns"), noun(len(left), "has", "have"), strings.Join(left[:min(len(left), 5)], ", ")))
		}
	}
	return ids, current, warnings, nil
}

// redactEdit returns the edit of a turn that a redaction makes: every span
// replaced by marker, the redaction recorded (added to an earlier one's);
// false when the turn holds none.
func redactEdit(spans *engram.Spans, marker, reason string) func(engram.Turn) (engram.Turn, bool) {
	return func(t engram.Turn) (engram.Turn, bool) {
		if t.IsTombstone() {
			return t, false
		}
		t, n := t.RedactWith(spans, marker)
		if n == 0 {
			return t, false
		}
		r := engram.Redaction{At: time.Now().UTC(), Spans: n, Reason: reason}
		if t.Redacted != nil {
			r.Spans += t.Redacted.Spans
			r.Rules = t.Redacted.Rules
		}
		t.Redacted = &r
		return t, true
	}
}

// unreached is the warning for the turns of ts that hold a span where a
// redaction does not reach (engram.Turn.Unredactable), naming the fields
// and the first turns, and pointing to forget; nil when none does.
func unreached(ts []engram.Turn, spans *engram.Spans) []string {
	var ids, fields []string
	for _, t := range ts {
		fs := t.Unredactable(spans)
		if len(fs) == 0 {
			continue
		}
		ids = append(ids, t.ID)
		for _, f := range fs {
			if !slices.Contains(fields, f) {
				fields = append(fields, f)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	order := []string{"id", "namespace", "session", "meta keys"}
	slices.SortFunc(fields, func(a, b string) int { return slices.Index(order, a) - slices.Index(order, b) })
	first := ids[:min(len(ids), 5)]
	quoted := make([]string, len(first))
	for i, id := range first {
		quoted[i] = strconv.Quote(id)
	}
	more := ""
	if len(ids) > len(first) {
		more = fmt.Sprintf(" and %d more", len(ids)-len(first))
	}
	return []string{fmt.Sprintf("a span is also in the %s of %d %s (%s%s), which a redaction does not change: forget %s to remove it (engram forget --turn ID, DELETE /v1/turns/{id})",
		strings.Join(fields, ", "), len(ids), noun(len(ids), "turn", "turns"), strings.Join(quoted, ", "), more, noun(len(ids), "that turn", "those turns"))}
}

// reembedRedacted drops the removed vectors from the active model's
// in-memory index and Chroma (an error: the old text's vectors must go),
// embeds the redacted turns with the active model, and embeds them with
// every other model that had a vector of them into the palace. A model
// that cannot embed them now (its server down, a builtin embedder of
// another version) is left without them and named in the warnings
// returned, with the command that makes them; the redaction stands. The
// palace moved such a model's watermark back, so that it embeds them when
// it catches up next (a re-embed into it, its restart as the active one).
func (e *Engine) reembedRedacted(ctx context.Context, turns []engram.Turn, pr engram.RedactResult) ([]string, error) {
	side, err := e.dropVectors(ctx, pr.Removed, "redacted")
	if err != nil {
		return nil, err
	}
	var warnings []string
	warn := func(model string, n int, err error, hint string) {
		warnings = append(warnings, fmt.Sprintf("the %s vectors of %d redacted %s are deleted and not made again: %s; %s",
			model, n, noun(n, "turn", "turns"), engram.ErrorMessage(err), hint))
		e.logger.Info("the vectors of redacted turns are not made again", "model", model, "turns", n, "err", err) // the report warns
	}
	if side != nil {
		items, err := pipeline.EmbedTurns(ctx, side.vx.Embedder(), turns)
		if err == nil {
			err = side.store.PutTurnVectors(ctx, items, pr.Watermarks[side.model])
		}
		if err != nil {
			warn(side.model, len(turns), err, "`engram reindex vectors` makes them")
		}
	}
	for _, model := range slices.Sorted(maps.Keys(pr.TurnVectors)) {
		if side != nil && model == side.model {
			continue
		}
		ids := pr.TurnVectors[model]
		if err := e.embedInto(ctx, model, pickTurns(turns, ids), pr.Watermarks[model]); err != nil {
			hint := "`engram reembed --model " + model + "` makes them"
			if model == e.palaceActive(ctx) {
				hint = "they are made when its embedder is back (engram doctor says why it is off)"
			}
			warn(model, len(ids), err, hint)
		}
	}
	return warnings, nil
}

// embedInto embeds turns with model into its palace index and advances
// its watermark to wm.
func (e *Engine) embedInto(ctx context.Context, model string, turns []engram.Turn, wm int64) error {
	emb, dim, err := e.newEmbedder(ctx, model)
	if err != nil {
		return err
	}
	if c, ok := emb.(io.Closer); ok {
		defer c.Close()
	}
	store, err := e.palace.Vectors(ctx, model, dim)
	if err != nil {
		return err
	}
	items, err := pipeline.EmbedTurns(ctx, emb, turns)
	if err != nil {
		return err
	}
	return store.PutTurnVectors(ctx, items, wm)
}

// palaceActive is the palace's active vector model, "" when none is or it
// cannot be read.
func (e *Engine) palaceActive(ctx context.Context) string {
	model, _, _, _ := e.palace.ActiveModel(ctx)
	return model
}

// pickTurns returns the turns of ts whose ids are in ids, in order.
func pickTurns(ts []engram.Turn, ids []string) []engram.Turn {
	var out []engram.Turn
	for _, t := range ts {
		if slices.Contains(ids, t.ID) {
			out = append(out, t)
		}
	}
	return out
}
