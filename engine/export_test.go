package engine

import (
	"context"
	"errors"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/work"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// activeSide returns the running vector side.
func (e *Engine) activeSide() (*vectorSide, error) {
	e.vec.mu.Lock()
	defer e.vec.mu.Unlock()
	if e.vec.side == nil {
		return nil, errors.New("vectors are off: " + e.vec.problem)
	}
	return e.vec.side, nil
}

// WaitVectors waits until the active model's indexer has embedded every
// turn archived when it was called.
func (e *Engine) WaitVectors(ctx context.Context) error {
	side, err := e.activeSide()
	if err != nil {
		return err
	}
	return side.vx.WaitCurrent(ctx)
}

// StoredVectors returns the active model's vectors as the palace stores
// them, by id.
func (e *Engine) StoredVectors(ctx context.Context) (map[string]palace.StoredVector, error) {
	side, err := e.activeSide()
	if err != nil {
		return nil, err
	}
	svs, err := side.store.(*palace.VectorStore).VectorsSince(ctx, 0, 1<<20)
	if err != nil {
		return nil, err
	}
	out := make(map[string]palace.StoredVector, len(svs))
	for _, sv := range svs {
		out[sv.ID] = sv
	}
	return out, nil
}

// SetTestHooks sets the engine's test hooks (see testHooks) for the engines
// opened until the test ends: index is called before the indexer stores a
// batch, redactStart when Redact has waited for the index, redactRewritten
// when it has rewritten the archive and waits for the index again.
func SetTestHooks(t testing.TB, index func([]engram.Turn), redactStart, redactRewritten func()) {
	hooks.before, testHooks.redactStart, testHooks.redactRewritten = index, redactStart, redactRewritten
	testHooks.index = wrapIndex
	t.Cleanup(func() {
		hooks.before, testHooks.index, testHooks.redactStart, testHooks.redactRewritten = nil, nil, nil, nil
	})
}

// hooks are the indexer's hooks of SetTestHooks and SetSecondaryHook.
var hooks struct {
	before    func([]engram.Turn)
	secondary func(ctx context.Context)
}

// wrapIndex is testHooks.index while a hook of the indexer is set.
func wrapIndex(index pipeline.SplitIndex) pipeline.SplitIndex {
	return hookedIndex{index, hooks.before, hooks.secondary}
}

// hookedIndex is the palace with before called before each batch and
// secondary before each secondary step (SetTestHooks, SetSecondaryHook).
type hookedIndex struct {
	pipeline.SplitIndex
	before    func([]engram.Turn)
	secondary func(ctx context.Context)
}

func (h hookedIndex) PutTurns(ctx context.Context, turns []engram.Turn) error {
	if h.before != nil {
		h.before(turns)
	}
	return h.SplitIndex.PutTurns(ctx, turns)
}

func (h hookedIndex) PutTurnsSearchable(ctx context.Context, turns []engram.Turn) error {
	if h.before != nil {
		h.before(turns)
	}
	return h.SplitIndex.PutTurnsSearchable(ctx, turns)
}

func (h hookedIndex) IndexSecondary(ctx context.Context, seq int64, limit int, stop func() bool) (bool, error) {
	if h.secondary != nil {
		h.secondary(ctx)
	}
	return h.SplitIndex.IndexSecondary(ctx, seq, limit, stop)
}

// SetVectorLoadHook sets, for the engines opened until the test ends, a
// function called before the embedded vector index loads in the background
// (BackgroundLoad): a test holds the load there.
// Every index loads in the background then, however small.
func SetVectorLoadHook(t testing.TB, hook func(ctx context.Context)) {
	old := loadAtOnce
	testHooks.vectorLoad, loadAtOnce = hook, -1
	t.Cleanup(func() { testHooks.vectorLoad, loadAtOnce = nil, old })
}

// HoldWork takes every worker of e's background work until release is
// called: the layer jobs' tasks wait meanwhile.
func HoldWork(t testing.TB, e *Engine) (release func()) {
	t.Helper()
	var dones []func()
	for range e.work.Workers() {
		done, err := e.work.Begin(t.Context(), work.Index)
		if err != nil {
			t.Fatal(err)
		}
		dones = append(dones, done)
	}
	return func() {
		for _, d := range dones {
			d()
		}
	}
}

// WorkWaiting reports how many tasks of the layer jobs (class derive)
// wait for a worker.
func WorkWaiting(e *Engine) int { return e.work.Stats().Waiting[work.Derive.String()] }

// SetSecondaryHook sets a function called before the indexer of the
// engines opened until the test ends writes secondary indexes.
func SetSecondaryHook(t testing.TB, hook func(ctx context.Context)) {
	hooks.secondary, testHooks.index = hook, wrapIndex
	t.Cleanup(func() { hooks.secondary, testHooks.index = nil, nil })
}

// SecondarySeq is the palace's SecondarySeq.
func (e *Engine) SecondarySeq(ctx context.Context) (int64, error) { return e.palace.SecondarySeq(ctx) }

// RewritesApplied counts the turns other servers forgot or redacted that
// this engine brought into its palace.
func (e *Engine) RewritesApplied() int64 { return e.rewrites.applied.Load() }

// PalaceCorrections returns the ids of the corrections the palace holds.
func (e *Engine) PalaceCorrections(ctx context.Context) ([]string, error) {
	return e.palace.CorrectionIDs(ctx)
}
