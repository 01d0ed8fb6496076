package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/homedir"
)

var _ engram.ForgetService = (*Engine)(nil)

// Forget implements engram.ForgetService. It resolves the turns to forget
// (ids as given; a session's or a namespace's from the palace, once the
// index has caught up with the archive), rewrites their archive lines as
// tombstones, then removes them and what stood only on them from the
// palace and its vectors, the active model's in-memory matrix and, with
// Chroma, the server's collection, in an exclusive section of the engine's
// work: no layer job stores anything derived from a turn read before it.
func (e *Engine) Forget(ctx context.Context, req engram.ForgetRequest) (engram.ForgetReport, error) {
	start := time.Now()
	var rep engram.ForgetReport
	if err := req.Validate(); err != nil {
		return rep, err
	}
	ids := req.IDs
	if len(ids) == 0 {
		ns := req.Namespace
		if ns == "" {
			ns = engram.DefaultNamespace
		}
		if err := e.indexer.WaitCurrent(ctx); err != nil {
			return rep, err
		}
		var err error
		if ids, err = e.palace.TurnIDs(ctx, ns, req.Session); err != nil {
			return rep, err
		}
		skipped, err := e.skippedTurns(ctx, ns, req.Session)
		if err != nil {
			return rep, err
		}
		for _, t := range skipped {
			ids = append(ids, t.ID)
		}
		if len(ids) == 0 {
			what := fmt.Sprintf("namespace %q", ns)
			if req.Session != "" {
				what = fmt.Sprintf("session %q of namespace %q", req.Session, ns)
			}
			return rep, engram.Errorf(engram.ENOTFOUND, "%s holds no turn to forget", what)
		}
	}
	rep.DryRun = req.DryRun
	if req.DryRun {
		var unknown []string
		for _, id := range ids {
			forgotten, err := e.archive.Forgotten(ctx, id)
			if err != nil {
				return rep, err
			}
			known, err := e.archive.Known(ctx, id)
			if err != nil {
				return rep, err
			}
			switch {
			case forgotten:
				rep.Already = append(rep.Already, id)
			case known:
				rep.Turns = append(rep.Turns, id)
			default:
				unknown = append(unknown, id)
			}
		}
		damaged, err := e.damagedTurns(ctx, unknown)
		if err != nil {
			return rep, err
		}
		for _, id := range unknown {
			if damaged[id].ID != "" {
				rep.Turns = append(rep.Turns, id)
			} else {
				rep.Unknown = append(rep.Unknown, id)
			}
		}
		rep.Turns = nonNilIDs(rep.Turns)
		rep.TookMS = msSince(start)
		return rep, e.noneFound(rep)
	}

	// An exclusive section of the engine's work: no layer job stores what
	// it derived from the turns before the forget (it reads them again).
	if err := e.work.Exclusive(ctx, func() error { return e.forgetIDs(ctx, ids, req.Reason, &rep) }); err != nil {
		return rep, err
	}
	rep.TookMS = msSince(start)
	return rep, e.noneFound(rep)
}

// forgetIDs tombstones the turns ids in the archive and removes them from
// the palace, adding what it did to rep: Forget's work, in an exclusive
// section of e.work.
func (e *Engine) forgetIDs(ctx context.Context, ids []string, reason string, rep *engram.ForgetReport) error {
	at := time.Now().UTC()
	forgotten := engram.Forgotten{At: at, Reason: reason}
	res, err := e.archive.Forget(ctx, ids, forgotten)
	if err != nil {
		return err
	}
	e.rewrites.own(res.Journal)
	if res, err = e.rewriteDamaged(ctx, res, func(t engram.Turn) (engram.Turn, bool) {
		return archive.Tombstone(t, forgotten), true
	}); err != nil {
		return err
	}
	rep.Already, rep.Unknown, rep.ArchiveFiles = res.Unchanged, res.Unknown, res.Files
	turns := make([]engram.ForgetTurn, 0, len(res.Changed))
	for _, c := range res.Changed {
		rep.Turns = append(rep.Turns, c.New.ID)
		turns = append(turns, engram.ForgetTurn{ID: c.New.ID, Seq: c.New.Seq})
	}
	rep.Turns = nonNilIDs(rep.Turns)
	if err := e.forgetInPalace(ctx, turns, at, rep); err != nil {
		return err
	}
	if len(turns) > 0 {
		if rep.PreviousPalace, err = e.dropPreviousPalace(); err != nil {
			return err
		}
	}
	return nil
}

// damagedTurns returns, by id, the palace's copies of the turns of ids
// whose archive lines are damaged (archive.DamagedLines): the archive
// skips those lines and does not know the ids, but recall finds the turns,
// so a forget or a redaction must reach them.
func (e *Engine) damagedTurns(ctx context.Context, ids []string) (map[string]engram.Turn, error) {
	out := map[string]engram.Turn{}
	if len(ids) == 0 {
		return out, nil
	}
	turns, err := e.palace.GetTurns(ctx, ids)
	if err != nil || len(turns) == 0 {
		return out, err
	}
	lines, err := e.archive.DamagedLines(ctx, turns)
	if err != nil {
		return nil, fmt.Errorf("find the damaged archive lines of the turns: %w", err)
	}
	for _, byLine := range lines {
		for _, t := range byLine {
			out[t.ID] = t
		}
	}
	return out, nil
}

// rewriteDamaged writes again, as edit makes them, the damaged archive
// lines of the ids res (a Rewrite's result) found on no readable line,
// from the palace's copies of their turns (archive.RewriteDamaged), as
// `engram repair` does, and adds what it did to res. The ids no damaged
// line holds stay Unknown.
func (e *Engine) rewriteDamaged(ctx context.Context, res archive.RewriteResult, edit archive.Edit) (archive.RewriteResult, error) {
	if len(res.Unknown) == 0 {
		return res, nil
	}
	turns, err := e.palace.GetTurns(ctx, res.Unknown)
	if err != nil || len(turns) == 0 {
		return res, err
	}
	dres, err := e.archive.RewriteDamaged(ctx, turns, edit)
	if err != nil {
		return res, err
	}
	if len(dres.Changed) > 0 {
		e.logger.Info("wrote damaged archive lines again from the palace's copies", "turns", len(dres.Changed))
	}
	done := map[string]bool{}
	for _, c := range dres.Changed {
		done[c.New.ID] = true
	}
	for _, id := range dres.Unchanged {
		done[id] = true
	}
	unknown := res.Unknown[:0:0]
	for _, id := range res.Unknown {
		if !done[id] {
			unknown = append(unknown, id)
		}
	}
	res.Unknown = unknown
	res.Changed = append(res.Changed, dres.Changed...)
	res.Unchanged = append(res.Unchanged, dres.Unchanged...)
	res.Files += dres.Files
	return res, nil
}

// skippedTurns returns the archived turns of the namespace (every one
// when empty) and session (every one when empty) that the palace skipped
// (engram.TurnSkips: a time it cannot store, a copy of an id), read from
// the archive: a forget or a redaction by session or namespace must reach
// them too, though no palace query finds them.
func (e *Engine) skippedTurns(ctx context.Context, namespace, session string) ([]engram.Turn, error) {
	sk, err := e.palace.TurnSkips(ctx, -1)
	if err != nil || sk.Count == 0 {
		return nil, err
	}
	seqs := make(map[int64]bool, len(sk.Latest))
	from, to := sk.Latest[0].Seq, sk.Latest[0].Seq
	for _, s := range sk.Latest {
		seqs[s.Seq] = true
		from, to = min(from, s.Seq), max(to, s.Seq)
	}
	var out []engram.Turn
	err = e.archive.Stream(ctx, from-1, func(t engram.Turn) error {
		if t.Seq > to {
			return errStopStream
		}
		if seqs[t.Seq] && !t.IsTombstone() && (namespace == "" || t.Namespace == namespace) && (session == "" || t.Session == session) {
			out = append(out, t)
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopStream) {
		return nil, fmt.Errorf("read the turns the palace skipped from the archive: %w", err)
	}
	return out, nil
}

// errStopStream ends an archive.Stream early.
var errStopStream = errors.New("stop")

// dropPreviousPalace removes the palace an earlier rebuild replaced and
// kept (palace.db.before-rebuild): it holds the turns as they were before a
// forget or a redaction, which must leave their text in no file of the
// home. It reports whether there was one.
func (e *Engine) dropPreviousPalace() (bool, error) {
	f, ok := e.file()
	if !ok {
		return false, nil
	}
	p := f.Path() + homedir.PreviousSuffix
	err := os.Remove(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("remove the palace a rebuild replaced, which holds the old text: %w", err)
	}
	e.logger.Info("removed the palace a rebuild replaced: it held the forgotten or redacted text", "path", p)
	return true, nil
}

// noneFound is ENOTFOUND when a forget named only unknown ids.
func (e *Engine) noneFound(rep engram.ForgetReport) error {
	if len(rep.Turns) == 0 && len(rep.Already) == 0 {
		return &engram.Error{Code: engram.ENOTFOUND, Field: "ids", Message: fmt.Sprintf("no archived turn has the id %q", rep.Unknown[0])}
	}
	return nil
}

// forgetInPalace removes forgotten turns from the palace, the in-memory
// vectors and Chroma.
func (e *Engine) forgetInPalace(ctx context.Context, turns []engram.ForgetTurn, at time.Time, rep *engram.ForgetReport) error {
	if len(turns) == 0 {
		return nil
	}
	held, err := e.factMemoriesHeld(ctx)
	if err != nil {
		return err
	}
	pr, err := e.palace.ForgetTurns(ctx, turns, at, e.sceneWorker().Config.Regroup)
	if err != nil {
		return fmt.Errorf("the archive forgot the turns, the palace failed (engram doctor finds them, a restart finishes it): %w", err)
	}
	gone := make(map[string]bool, len(turns))
	for _, t := range turns {
		gone[t.ID] = true
	}
	if err := e.forgetCorrections(ctx, gone, true, held); err != nil {
		return err
	}
	rep.Memories, rep.MemoriesKept, rep.Scenes, rep.ScenesRemade = pr.Memories, pr.MemoriesKept, pr.Scenes, pr.ScenesRemade
	rep.Facts, rep.Facets, rep.Units = pr.Facts, pr.Facets, pr.Units
	rep.Vectors = len(pr.Removed)
	_, err = e.dropVectors(ctx, pr.Removed, "forgotten")
	return err
}

// dropVectors deletes ids, whose rows the palace deleted, from the active
// model's in-memory index and, with Chroma, from its collection (what
// names them: "forgotten"). It returns the vector side, nil when vectors
// are off.
func (e *Engine) dropVectors(ctx context.Context, ids []string, what string) (*vectorSide, error) {
	e.vec.mu.Lock()
	side := e.vec.side
	e.vec.mu.Unlock()
	if side == nil {
		return nil, nil
	}
	if err := side.store.Delete(ctx, ids); err != nil {
		return nil, err
	}
	if side.ext != nil {
		// What the sync may have pushed before the palace deleted it.
		if err := side.ext.WaitCurrent(ctx); err != nil {
			return nil, fmt.Errorf("chroma: %w", err)
		}
		if err := side.external.Delete(ctx, ids); err != nil {
			return nil, fmt.Errorf("delete the %s vectors from chroma: %w", what, err)
		}
	}
	return side, nil
}

// finishForgets removes from the palace the turns the archive holds as
// tombstones but the palace does not record as forgotten: a forget that
// stopped between the two (a crash), or an archive restored over a newer
// palace. It runs at Open.
func (e *Engine) finishForgets(ctx context.Context) error {
	gone, err := e.archive.Tombstones(ctx)
	if err != nil {
		return err
	}
	if len(gone) == 0 {
		return nil
	}
	ids := make([]string, 0, len(gone))
	for id := range gone {
		ids = append(ids, id)
	}
	known, err := e.palace.ForgottenIDs(ctx, ids)
	if err != nil {
		return err
	}
	var turns []engram.ForgetTurn
	for _, id := range ids {
		if !known[id] {
			turns = append(turns, engram.ForgetTurn{ID: id, Seq: gone[id]})
		}
	}
	if len(turns) == 0 {
		return nil
	}
	e.logger.Warn("finishing forgets the palace missed", "turns", len(turns))
	_, err = e.palace.ForgetTurns(ctx, turns, time.Now(), e.sceneWorker().Config.Regroup)
	return err
}

// guardLayers wraps a layer job so that the loaded keyword indexes of what
// it wrote catch up after its run, and so that the memory its run left is
// given back (memReleaser). A forget, a redaction or a correction needs no
// lock against it: they are exclusive sections of e.work, and each store
// of a layer job a guarded task of it.
func (e *Engine) guardLayers(run func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		defer e.memory.begin()()
		err := run(ctx)
		if cerr := e.palace.CatchUpKeywordIndexes(ctx); cerr != nil && ctx.Err() == nil {
			// Searches use FTS5 until the indexes catch up.
			e.logger.Warn("keyword indexes did not catch up after a layer job", "err", cerr)
		}
		return err
	}
}

func nonNilIDs(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// VerifyArchive rereads every line of the archive (see archive.Verify).
func (e *Engine) VerifyArchive(ctx context.Context) (archive.Report, error) {
	return e.archive.Verify(ctx)
}
