package engine

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/postgres"
)

// rewriteJournal is an archive other servers rewrite (the PostgreSQL one):
// Rewrites is closed when one of them next forgets or redacts turns, and
// RewritesSince reads its journal of those rewrites.
type rewriteJournal interface {
	Rewrites() <-chan struct{}
	RewritesSince(ctx context.Context, n int64) ([]postgres.Rewrite, error)
	TurnsAt(ctx context.Context, seqs []int64) ([]engram.Turn, error)
}

// rewriteRetry is the wait before trying again to bring the palace up to
// the archive's rewrites after a failure.
const rewriteRetry = time.Second

// rewriteWorker is the palace watermark (WorkerSeq) of the rewrite
// journal: the number of its last entry applied to the palace.
const rewriteWorker = "rewrites"

// rewriteFollower brings this server's palace up to the forgets and
// redactions other servers made in the shared archive.
type rewriteFollower struct {
	follower
	applied atomic.Int64 // turns forgotten or redacted elsewhere and so in this palace

	mu   sync.Mutex
	mine map[int64]bool // the journal entries of this server's forgets and redactions not passed yet
}

// own records that this server made the journal entry n (0: none) and
// applied it to its palace itself. It is called in the exclusive section
// of the forget or redaction, so the follower, which reads the journal in
// one too, sees it before it can read the entry.
func (f *rewriteFollower) own(n int64) {
	if n == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mine == nil {
		f.mine = map[int64]bool{}
	}
	f.mine[n] = true
}

// mineOnce reports whether n is an entry of this server's, forgetting it.
func (f *rewriteFollower) mineOnce(n int64) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	ok := f.mine[n]
	delete(f.mine, n)
	return ok
}

// followRewrites starts, when other servers share the archive, the
// goroutine that applies their forgets and redactions to this palace: at
// Open and at each of the archive's rewrite notifications, it reads the
// journal's entries after the palace's watermark and applies each, in
// order, by the engine's own paths (forgetInPalace; RedactTurns with the
// spans read off this palace's copies, the corrections and the vectors,
// as Redact does), in an exclusive section of e.work as the local
// operations, then advances the watermark. The watermark is what makes it
// miss nothing: a notification lost while the listener reconnected (which
// wakes it too), or a rewrite made while this server was down. This
// server's own entries are skipped (it applied them itself). An entry
// whose turns this palace already holds forgotten or redacted is passed
// by without work: a palace shared with the server that made it (palace =
// "postgres"), or an entry this server made before a restart. One this
// server made and stopped before its palace held is applied, which
// repairs that palace.
func (e *Engine) followRewrites() {
	rj, ok := e.archive.(rewriteJournal)
	if !ok {
		return
	}
	e.rewrites.start(e.logger, "forgets and redactions", rj.Rewrites, func(ctx context.Context) error { return e.applyRewrites(ctx, rj) })
}

// follower runs the goroutine that brings this palace up to what other
// servers sharing the database did (their forgets and redactions, their
// corrections): apply runs at once, then at each close of the channel
// wake returns (taken before each run, so that nothing done meanwhile is
// missed), and again after rewriteRetry when it failed; stop ends it.
type follower struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (f *follower) start(logger *slog.Logger, what string, wake func() <-chan struct{}, apply func(context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	f.cancel = cancel
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			ch := wake()
			var retry <-chan time.Time
			if err := apply(ctx); err != nil && ctx.Err() == nil {
				logger.Warn("could not bring the palace up to the "+what+" of the other servers; retrying", "err", err)
				retry = time.After(rewriteRetry)
			}
			select {
			case <-ctx.Done():
				return
			case <-ch:
			case <-retry:
			}
		}
	}()
}

// stop stops the goroutine of start, if it runs, and waits for it.
func (f *follower) stop() {
	if f.cancel != nil {
		f.cancel()
		f.wg.Wait()
	}
}

// applyRewrites applies to the palace the journal's entries after its
// watermark, each in an exclusive section of e.work.
func (e *Engine) applyRewrites(ctx context.Context, rj rewriteJournal) error {
	for {
		wm, err := e.palace.WorkerSeq(ctx, rewriteWorker)
		if err != nil {
			return err
		}
		entries, err := rj.RewritesSince(ctx, wm)
		if err != nil || len(entries) == 0 {
			return err
		}
		for _, r := range entries {
			if err := e.work.Exclusive(ctx, func() error { return e.applyRewrite(ctx, rj, r) }); err != nil {
				return err
			}
		}
	}
}

// applyRewrite applies the journal entry r to the palace, unless this
// server made it, and advances the watermark past it.
func (e *Engine) applyRewrite(ctx context.Context, rj rewriteJournal, r postgres.Rewrite) error {
	if !e.rewrites.mineOnce(r.N) {
		var err error
		switch r.Kind {
		case postgres.RewriteForget:
			err = e.applyForget(ctx, r)
		case postgres.RewriteRedact:
			err = e.applyRedact(ctx, rj, r)
		default:
			e.logger.Warn("a rewrite journal entry of an unknown kind is skipped (a newer engram wrote it)", "n", r.N, "kind", r.Kind)
		}
		if err != nil {
			return err
		}
	}
	return e.palace.SetWorkerSeq(ctx, rewriteWorker, r.N)
}

// applyForget forgets in the palace the turns of r it does not record as
// forgotten.
func (e *Engine) applyForget(ctx context.Context, r postgres.Rewrite) error {
	known, err := e.palace.ForgottenIDs(ctx, r.IDs)
	if err != nil {
		return err
	}
	var turns []engram.ForgetTurn
	for i, id := range r.IDs {
		if !known[id] && i < len(r.Seqs) {
			turns = append(turns, engram.ForgetTurn{ID: id, Seq: r.Seqs[i]})
		}
	}
	if len(turns) == 0 {
		return nil
	}
	var rep engram.ForgetReport
	if err := e.forgetInPalace(ctx, turns, r.At.UTC(), &rep); err != nil {
		return err
	}
	if _, err := e.dropPreviousPalace(); err != nil {
		return err
	}
	e.logger.Info("forgot in the palace the turns another server forgot", "turns", len(turns), "journal", r.N)
	e.rewrites.applied.Add(int64(len(turns)))
	return nil
}

// unredacted returns the turns (the archive's versions) whose copies in
// this palace do not read as they do yet, with the spans the redaction
// removed from those copies: the journal does not record the spans, so
// that no copy of what a redaction removed is left in the database. A
// turn whose copy already reads as the archive's was redacted here (a
// palace shared with the server that took the redaction, an entry of
// this server's own applied before a restart, a palace rebuilt since):
// RedactTurns changed its copy and its layers in one transaction and
// moved the vector watermarks back, so nothing of it is left to do.
func (e *Engine) unredacted(ctx context.Context, turns []engram.Turn, marker string) ([]engram.Turn, []string, error) {
	ids := make([]string, len(turns))
	for i, t := range turns {
		ids[i] = t.ID
	}
	old, err := e.palace.GetTurns(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	byID := make(map[string]engram.Turn, len(old))
	for _, t := range old {
		byID[t.ID] = t
	}
	seen := map[string]bool{}
	var pending []engram.Turn
	var texts []string
	for _, t := range turns {
		o, ok := byID[t.ID]
		if ok && o.Content == t.Content && o.Speaker == t.Speaker {
			continue
		}
		pending = append(pending, t)
		if !ok {
			continue
		}
		for _, f := range [][2]string{{o.Content, t.Content}, {o.Speaker, t.Speaker}} {
			spans, ok := engram.RemovedSpans(f[0], f[1], marker)
			if !ok {
				e.logger.Warn("a turn another server redacted does not read as this palace's copy with spans replaced; its layers keep what they hold until a rebuild", "id", t.ID)
				continue
			}
			for _, sp := range spans {
				if sp != "" && !seen[sp] {
					seen[sp] = true
					texts = append(texts, sp)
				}
			}
		}
	}
	return pending, texts, nil
}

// applyRedact redacts in the palace the turns of r as the server that
// took the request did (redactIDs): the archive's versions of the turns
// (a turn forgotten since is left to that forget's entry, one this
// palace holds redacted already is passed by) with the spans removed
// from this palace's copies and the recorded marker, then the
// corrections journal and the vectors. A model that cannot embed the turns again is logged, as
// Redact's report would warn.
func (e *Engine) applyRedact(ctx context.Context, rj rewriteJournal, r postgres.Rewrite) error {
	// A turn the indexer read before the rewrite reaches the palace with
	// its old text: let it arrive, so that RedactTurns finds it there.
	if err := e.indexer.WaitCurrent(ctx); err != nil {
		return err
	}
	all, err := rj.TurnsAt(ctx, r.Seqs)
	if err != nil {
		return err
	}
	turns := all[:0]
	for _, t := range all {
		if !t.IsTombstone() {
			turns = append(turns, t)
		}
	}
	if len(turns) == 0 {
		return nil
	}
	marker := ""
	if r.Redaction != nil {
		marker = r.Redaction.Marker
	}
	turns, texts, err := e.unredacted(ctx, turns, marker)
	if err != nil || len(turns) == 0 {
		return err
	}
	pr, err := e.palace.RedactTurns(ctx, turns, texts, marker)
	if err != nil {
		return err
	}
	if len(texts) > 0 {
		if err := e.redactCorrections(ctx, texts, marker); err != nil {
			return err
		}
	}
	warnings, err := e.reembedRedacted(ctx, turns, pr)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		e.logger.Warn("redaction of another server", "journal", r.N, "warning", w)
	}
	if _, err := e.dropPreviousPalace(); err != nil {
		return err
	}
	e.logger.Info("redacted in the palace the turns another server redacted", "turns", len(turns), "journal", r.N)
	e.rewrites.applied.Add(int64(len(turns)))
	return nil
}
