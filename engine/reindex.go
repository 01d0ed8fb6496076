package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/internal/work"
	"github.com/engram-dev/engram/pipeline"
)

// reindexPoll is how often the layer phase of a reindex looks whether the
// layer-vector job finished.
const reindexPoll = 500 * time.Millisecond

// Phases of a reindex, as ReindexStatus.Phase names them.
const (
	phaseCheck  = "check"  // drop unusable vectors
	phaseEmbed  = "embed"  // embed the turns that lack a vector (all of them with --reembed)
	phaseLayers = "layers" // embed memories, facts, scenes and vault chunks again
	phaseLoad   = "load"   // rebuild the in-memory matrix
	phasePush   = "push"   // recreate the Chroma collection and push every vector
)

// reindexRun is one reindex: its status, and a hook told of every change
// (a progress bar).
type reindexRun struct {
	mu      sync.Mutex
	st      engram.ReindexStatus
	changed func(engram.ReindexStatus)
}

func newReindexRun(reembed bool, changed func(engram.ReindexStatus)) *reindexRun {
	return &reindexRun{st: engram.ReindexStatus{Reembed: reembed, State: engram.ReindexRunning,
		Phase: phaseCheck, Started: time.Now().UTC()}, changed: changed}
}

func (r *reindexRun) update(f func(*engram.ReindexStatus)) {
	r.mu.Lock()
	f(&r.st)
	st := r.st
	r.mu.Unlock()
	if r.changed != nil {
		r.changed(st)
	}
}

// finish ends the run: done, or failed with err.
func (r *reindexRun) finish(err error) {
	r.update(func(st *engram.ReindexStatus) {
		st.Ended = time.Now().UTC()
		if err != nil {
			st.State, st.Error = engram.ReindexFailed, engram.ErrorText(err)
			return
		}
		st.State = engram.ReindexDone
	})
}

func (r *reindexRun) status() engram.ReindexStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.st
}

// phase starts a phase of total steps.
func (r *reindexRun) phase(name string, total int64) {
	r.update(func(st *engram.ReindexStatus) { st.Phase, st.Done, st.Total = name, 0, total })
}

// reindexer serves POST and GET /v1/reindex for the engine of a server:
// one reindex at a time, in the background, its last status kept.
type reindexer struct {
	e *Engine

	mu   sync.Mutex
	last *reindexRun
}

var _ engram.ReindexService = (*reindexer)(nil)

// Reindexer returns the service of POST and GET /v1/reindex on the engine:
// one reindex at a time, in the background, its last status kept.
func (e *Engine) Reindexer() engram.ReindexService { return &reindexer{e: e} }

// StartReindex implements engram.ReindexService.
func (x *reindexer) StartReindex(ctx context.Context, req engram.ReindexRequest) (engram.ReindexStatus, error) {
	e := x.e
	if err := e.ReindexAllowed(); err != nil {
		return engram.ReindexStatus{}, err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.last != nil {
		if st := x.last.status(); st.State == engram.ReindexRunning {
			return st, engram.Errorf(engram.ECONFLICT, "a reindex of %s is running (%s)", orNone(st.Model), PhaseText(st.Phase))
		}
	}
	// The work belongs to the engine's background context: closing the
	// engine cancels it and waits for it.
	e.vec.mu.Lock()
	bg := e.vec.bg
	if bg == nil || bg.Err() != nil {
		e.vec.mu.Unlock()
		return engram.ReindexStatus{}, engram.Errorf(engram.EUNAVAILABLE, "the engine is closing")
	}
	e.vec.wg.Add(1)
	e.vec.mu.Unlock()
	run := newReindexRun(req.Reembed, nil)
	x.last = run
	go func() {
		defer e.vec.wg.Done()
		err := e.reindexVectors(bg, run)
		run.finish(err)
		st := run.status()
		if err != nil {
			e.logger.Error("reindex of the vectors failed", "model", st.Model, "phase", st.Phase, "err", err)
			return
		}
		e.logger.Info("vectors reindexed", "model", st.Model, "dropped", st.Dropped, "embedded", st.Embedded, "indexed", st.Indexed)
	}()
	return run.status(), nil
}

// ReindexStatus implements engram.ReindexService.
func (x *reindexer) ReindexStatus(ctx context.Context) (engram.ReindexStatus, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.last == nil {
		return engram.ReindexStatus{}, engram.Errorf(engram.ENOTFOUND, "no reindex ran since the server started")
	}
	return x.last.status(), nil
}

// ReindexVectors rebuilds the vector index of the active model in the
// foreground (see reindexVectors), telling progress, if set, of every
// change, and returns the last status. It refuses what ReindexAllowed
// refuses.
func (e *Engine) ReindexVectors(ctx context.Context, reembed bool, progress func(engram.ReindexStatus)) (engram.ReindexStatus, error) {
	if err := e.ReindexAllowed(); err != nil {
		return engram.ReindexStatus{}, err
	}
	run := newReindexRun(reembed, progress)
	err := e.reindexVectors(ctx, run)
	run.finish(err)
	return run.status(), err
}

// ReindexAllowed refuses a reindex without vectors (EINVALID), or during a
// re-embed (ECONFLICT), which writes another model's vectors and swaps the
// vector side.
func (e *Engine) ReindexAllowed() error {
	if e.cfg.Embedder == config.EmbedderNone {
		return engram.Errorf(engram.EINVALID, "embedder = none: there is no vector index to rebuild")
	}
	e.vec.mu.Lock()
	defer e.vec.mu.Unlock()
	if r := e.vec.reembed; r != nil && r.State == engram.ReembedRunning {
		return engram.Errorf(engram.ECONFLICT, "a re-embed into %s is running: reindex when it is done", r.Model)
	}
	return nil
}

// reindexTarget returns the active model with its embedder and store: the
// running vector side's, or, when it is off (say, because a stored vector
// is unusable and the index refused to load), a new embedder for it.
func (e *Engine) reindexTarget(ctx context.Context) (string, engram.Embedder, vectorRows, error) {
	e.vec.mu.Lock()
	side, problem := e.vec.side, e.vec.problem
	e.vec.mu.Unlock()
	if side != nil {
		return side.model, side.vx.Embedder(), side.store, nil
	}
	active, _, found, err := e.palace.ActiveModel(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	if !found {
		return "", nil, nil, engram.Errorf(engram.EUNAVAILABLE, "no vector model is active yet (%s)", orNoReason(problem))
	}
	emb, dim, err := e.newEmbedder(ctx, active)
	if err != nil {
		return "", nil, nil, err
	}
	store, err := e.palace.Vectors(ctx, active, dim)
	if err != nil {
		return "", nil, nil, err
	}
	return active, emb, store, nil
}

// countingEmbedder counts the texts it embeds.
type countingEmbedder struct {
	engram.Embedder
	n *atomic.Int64
}

func (c countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := c.Embedder.Embed(ctx, texts)
	if err == nil {
		c.n.Add(int64(len(texts)))
	}
	return vecs, err
}

// fromStart is a model's store whose watermark reads 0, so that a
// VectorIndexer embeds every archived turn again. Its writes keep the real
// watermark: it never moves back.
type fromStart struct{ vectorRows }

func (fromStart) Watermark(context.Context) (int64, error) { return 0, nil }

// reindexVectors rebuilds the vector index of the active model, in phases:
//
//  1. check: drop the stored vectors that are unusable;
//  2. embed: embed the turns behind the watermark that have no vector (a
//     dropped or lost row), or, with Reembed, every turn, upserting over
//     the old vectors batch by batch;
//  3. layers: when a memory, fact, scene or chunk vector was dropped, or
//     with Reembed, reset the layer-vector and vault watermarks of the
//     model and embed those again;
//  4. load or push: rebuild the in-memory matrix from SQLite and swap it in,
//     or drop the Chroma collection and push every stored vector to a new
//     one.
//
// Each write is a transaction of its own: an interrupted reindex leaves
// every stored vector usable (the dropped ones missing), and running it
// again finishes the work. Recall goes on throughout; with Chroma it sees a
// partial collection while the push runs. A vault that fails to sync is
// reported after the index is rebuilt.
func (e *Engine) reindexVectors(ctx context.Context, run *reindexRun) error {
	key, emb, store, err := e.reindexTarget(ctx)
	if err != nil {
		return err
	}
	reembed := run.status().Reembed
	run.update(func(st *engram.ReindexStatus) { st.Model, st.Backend = key, e.cfg.VectorIndex })
	var embedded atomic.Int64
	emb = countingEmbedder{emb, &embedded}
	defer func() { run.update(func(st *engram.ReindexStatus) { st.Embedded = embedded.Load() }) }()

	run.phase(phaseCheck, 1)
	bad, err := store.DropBad(ctx)
	if err != nil {
		return err
	}
	layers := reembed
	for _, b := range bad {
		layers = layers || b.Kind != engram.KindTurn
		e.logger.Warn("dropped an unusable vector; its text is embedded again", "model", key, "id", b.ID, "kind", b.Kind, "reason", b.Reason)
	}
	run.update(func(st *engram.ReindexStatus) { st.Dropped, st.Done = len(bad), 1 })

	if reembed {
		err = e.reembedTurns(ctx, run, emb, store)
	} else {
		err = e.embedMissingTurns(ctx, run, emb, store)
	}
	if err != nil {
		return err
	}
	var vaultErr error // a vault that fails to sync does not hold up the index
	if layers {
		if err := e.reembedLayers(ctx, run, key, emb, store, &embedded); errors.Is(err, errVaults) {
			vaultErr = err
		} else if err != nil {
			return err
		}
	}

	switch e.cfg.VectorIndex {
	case config.VectorsChroma:
		if err := e.pushChroma(ctx, run, key, store); err != nil {
			return err
		}
	default:
		run.phase(phaseLoad, 1)
		n, err := e.indexOf(store).Reload(ctx)
		if err != nil {
			return err
		}
		run.update(func(st *engram.ReindexStatus) { st.Done, st.Indexed = 1, int64(n) })
	}
	return vaultErr
}

// errVaults marks the failure of a vault's sync in a reindex.
var errVaults = errors.New("index the vaults again")

// reembedTurns embeds every archived turn again.
func (e *Engine) reembedTurns(ctx context.Context, run *reindexRun, emb engram.Embedder, store vectorRows) error {
	run.phase(phaseEmbed, e.archive.LastSeq())
	vx := pipeline.NewVectorIndexer(e.archive, emb, fromStart{store})
	vx.Logger = e.logger.With("component", "reindex")
	vx.Work = e.work // no shared vectors: a reindex embeds every turn again
	if err := vx.Init(ctx); err != nil {
		return err
	}
	return vx.CatchUp(ctx, func(seq int64) {
		run.update(func(st *engram.ReindexStatus) { st.Done, st.Total = seq, max(st.Total, seq) })
	})
}

// embedMissingTurns embeds the turns up to the watermark that have no
// vector. The turns after it are the vector indexer's.
func (e *Engine) embedMissingTurns(ctx context.Context, run *reindexRun, emb engram.Embedder, store vectorRows) error {
	wm, err := store.Watermark(ctx)
	if err != nil {
		return err
	}
	indexed, err := e.palace.IndexedSeq(ctx)
	if err != nil {
		return err
	}
	through := min(wm, indexed)
	run.phase(phaseEmbed, through)
	var after int64
	for {
		mark := e.work.Epoch()
		turns, err := store.TurnsWithoutVector(ctx, after, through, pipeline.DefaultEmbedBatch)
		if err != nil || len(turns) == 0 {
			return err
		}
		var items []engram.VectorItem
		err = e.work.Do(ctx, work.Embed, func() (err error) {
			items, err = pipeline.EmbedTurns(ctx, emb, turns)
			return err
		})
		if err != nil {
			return err
		}
		ok, err := e.work.DoSince(ctx, work.Embed, mark, func() error { return store.Upsert(ctx, items) })
		if err != nil {
			return err
		}
		if !ok {
			continue // a redaction replaced text read: read the turns again
		}
		after = turns[len(turns)-1].Seq
		run.update(func(st *engram.ReindexStatus) { st.Done = after })
	}
}

// reembedLayers resets the model's layer-vector and vault watermarks and
// embeds the memories, facts, scenes and vault chunks again. The layers are
// embedded by the layer-vector job when the vector side runs, through the
// scheduler, so that a scheduled run cannot interleave and move the
// watermark back up (by the worker itself otherwise); the vaults by a full
// sync under the vault lock.
func (e *Engine) reembedLayers(ctx context.Context, run *reindexRun, key string, emb engram.Embedder, store vectorRows, embedded *atomic.Int64) error {
	run.phase(phaseLayers, 2)
	e.vec.mu.Lock()
	side := e.vec.side
	e.vec.mu.Unlock()
	viaJob := false
	if side != nil && side.model == key {
		for _, j := range e.sched.Status() {
			viaJob = viaJob || j.Name == pipeline.WorkerLayerVectors
		}
	}
	for {
		if _, err := e.palace.ResetWorkerSeqs(ctx, "vec:"+key+":"); err != nil {
			return err
		}
		if !viaJob {
			w := &pipeline.LayerVectorWorker{Layers: e.palace, Embedder: emb, Store: store, Units: e.palace}
			// As the job: never beside a forget or a redaction, whose
			// memories it would embed from the text they replace.
			if err := e.guardLayers(w.Run)(ctx); err != nil {
				return fmt.Errorf("embed the layers again: %w", err)
			}
			break
		}
		res, err := e.sched.Run(ctx, pipeline.WorkerLayerVectors)
		if engram.ErrorCode(err) == engram.ECONFLICT {
			// Running on its schedule: let it end, then reset again.
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(reindexPoll):
			}
			continue
		}
		if err == nil {
			err = res.Err
		}
		if err != nil {
			return fmt.Errorf("embed the layers again: %w", err)
		}
		// The job embedded with its own embedder: count what it wrote.
		kinds, err := store.CountByKind(ctx)
		if err != nil {
			return err
		}
		embedded.Add(int64(kinds[engram.KindMemory] + kinds[engram.KindFact] + kinds[engram.KindScene] + kinds[engram.KindSessionUnit] + kinds[engram.KindSceneUnit]))
		break
	}
	run.update(func(st *engram.ReindexStatus) { st.Done = 1 })
	if err := e.resyncVaults(ctx, key, emb, store); err != nil {
		return err
	}
	run.update(func(st *engram.ReindexStatus) { st.Done = 2 })
	return nil
}

// resyncVaults indexes every configured vault again, whole, embedding its
// chunks with emb into store, as the one vault sync running (so that no
// hook, watcher or reconcile job syncs meanwhile), and marks each as embedded with key.
// A vault that fails to sync (its folder gone, say) keeps its chunks and
// stays marked for a full sync; the others are synced, and the error names
// it.
func (e *Engine) resyncVaults(ctx context.Context, key string, emb engram.Embedder, store vectorRows) error {
	return e.work.Serial(ctx, serialVaults, func() error { return e.resyncVaultsNow(ctx, key, emb, store) })
}

// resyncVaultsNow is resyncVaults, the other syncs excluded.
func (e *Engine) resyncVaultsNow(ctx context.Context, key string, emb engram.Embedder, store vectorRows) error {
	if _, err := e.palace.ResetWorkerSeqs(ctx, vaultMarkerPrefix(key)); err != nil {
		return err
	}
	syncer := e.newSyncer(store, emb)
	syncer.Full = true
	var errs []error
	for _, v := range e.cfg.Vaults {
		root := filepath.Clean(v.Path)
		if _, err := syncer.Sync(ctx, root, v.NamespaceOrDefault()); err != nil {
			errs = append(errs, fmt.Errorf("vault %s: %w", root, err))
			continue
		}
		// The marker SyncVaults reads: this vault is embedded with key.
		if err := e.palace.SetWorkerSeq(ctx, vaultMarker(key, root), 1); err != nil {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %w", errVaults, err)
	}
	return nil
}

// pushChroma drops the model's Chroma collection, creates it again and
// pushes every stored vector, then records them as synced. Vectors written
// meanwhile get later change numbers, which the running sync pushes.
func (e *Engine) pushChroma(ctx context.Context, run *reindexRun, key string, store vectorRows) error {
	total, err := store.Count(ctx)
	if err != nil {
		return err
	}
	run.phase(phasePush, int64(total))
	ci, err := chroma.Open(ctx, chroma.Config{URL: e.cfg.ChromaURL, Database: e.cfg.ChromaDatabase, Model: key, Dim: store.Dim()})
	if err != nil {
		return fmt.Errorf("chroma: %w", err)
	}
	defer ci.Close()
	if err := ci.DropCollection(ctx); err != nil {
		return err
	}
	var after, pushed int64
	for {
		items, last, err := store.Since(ctx, after, pipeline.DefaultSyncBatch)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			break
		}
		if err := ci.Upsert(ctx, items); err != nil {
			return fmt.Errorf("push %d vectors to %s: %w", len(items), ci.Collection(), err)
		}
		after = last
		pushed += int64(len(items))
		run.update(func(st *engram.ReindexStatus) { st.Done, st.Total, st.Indexed = pushed, max(st.Total, pushed), pushed })
	}
	if after > 0 {
		if err := store.SetSyncedSeq(ctx, after); err != nil {
			return err
		}
	}
	return nil
}

// PhaseText says what a reindex does in phase, for a progress bar or a
// message.
func PhaseText(phase string) string {
	switch phase {
	case phaseCheck:
		return "checking stored vectors"
	case phaseEmbed:
		return "embedding turns"
	case phaseLayers:
		return "embedding memories, scenes and vault chunks"
	case phaseLoad:
		return "loading the in-memory index"
	case phasePush:
		return "pushing vectors to Chroma"
	}
	return phase
}
