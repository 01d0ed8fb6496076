package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/chroma"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/internal/backoff"
	"github.com/engram-dev/engram/ollama"
	"github.com/engram-dev/engram/openai"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/vecindex"
)

// checkTimeout bounds the probe that learns an Ollama model's dimension.
const checkTimeout = 30 * time.Second

// vectorSide is the engine's vector machinery for the active model: the
// embedder, the palace's copy of the vectors and the in-process index over
// it, the worker that embeds new turns, and, with a ChromaDB backend, the
// sync that pushes vectors there.
type vectorSide struct {
	model   string
	backend string
	store   vectorRows
	index   *vecindex.Index // recall's index unless the backend is chroma
	vx      *pipeline.VectorIndexer
	ext     *pipeline.ExternalSync // nil unless the backend is chroma
	// external is the Chroma index ext pushes to (deletes go to it
	// directly: the palace does not journal them).
	external engram.VectorIndex
	// loading is set while the embedded index loads in the background
	// (see openVectors); guarded by vectorState.mu.
	loading bool
}

func (v *vectorSide) close() {
	if v == nil {
		return
	}
	if v.ext != nil {
		v.ext.Close()
	}
	v.vx.Close()
}

// vectorState guards the engine's vector side, which a re-embed swaps.
type vectorState struct {
	mu      sync.Mutex
	side    *vectorSide
	problem string // why vectors are off, if they are
	// loadFailed is set when the embedded index failed to load at start.
	loadFailed bool
	pending    string // the config asks for another model than the active one
	reembed    *engram.ReembedStatus
	// bg is the context of background work (a re-embed, retries of a vector
	// side that failed to start); closeVectors cancels it and waits on wg.
	bg   context.Context
	stop context.CancelFunc
	wg   sync.WaitGroup

	// imu guards indexes, the in-process index of each model's store: one
	// a store, so that a model's matrix loads once however often its store
	// is opened (a re-embed loads it before the side that serves it starts).
	imu     sync.Mutex
	indexes map[vectorRows]*vecindex.Index
}

// indexOf returns the in-process vector index over store.
func (e *Engine) indexOf(store vectorRows) *vecindex.Index {
	e.vec.imu.Lock()
	defer e.vec.imu.Unlock()
	x := e.vec.indexes[store]
	if x == nil {
		x = vecindex.New(store)
		if e.vec.indexes == nil {
			e.vec.indexes = make(map[vectorRows]*vecindex.Index)
		}
		e.vec.indexes[store] = x
	}
	return x
}

// CheckModel makes sure the model of key can embed before work starts on
// it: an Ollama model must be on the server (ENOTFOUND on model, with the
// ollama pull hint) and embed (EINVALID), an OpenAI-compatible server must
// embed with the model; an unreachable server is EUNAVAILABLE. The builtin
// embedder always can.
func (e *Engine) CheckModel(ctx context.Context, key string) error {
	if name, ok := strings.CutPrefix(key, config.OpenAIPrefix); ok {
		oc := e.cfg.OpenAIConfig(name)
		oc.Timeout, oc.MaxRetries = probeTimeout, -1 // an answer now, not after the retries
		emb, err := openai.NewEmbedder(openai.EmbedderConfig{Config: oc})
		if err != nil {
			return err
		}
		defer emb.Close()
		_, err = emb.Check(ctx)
		return err
	}
	name, ok := strings.CutPrefix(key, config.OllamaPrefix)
	if !ok {
		return nil
	}
	emb, err := ollama.NewEmbedder(ollama.Config{Host: e.cfg.OllamaHost, Model: name, Timeout: probeTimeout})
	if err != nil {
		return err
	}
	defer emb.Close()
	return emb.Present(ctx)
}

// newEmbedder builds the embedder of a model key and learns its dimension.
func (e *Engine) newEmbedder(ctx context.Context, key string) (engram.Embedder, int, error) {
	if b := embedder.New(); key == b.Model() {
		return b, b.Dim(), nil
	}
	if strings.HasPrefix(key, "builtin-") {
		return nil, 0, engram.Errorf(engram.EUNSUPPORTED,
			"the vectors were made by the builtin embedder %s, but this engram has %s: run `engram reembed --model builtin`", key, embedder.New().Model())
	}
	if model, ok := strings.CutPrefix(key, config.OpenAIPrefix); ok {
		emb, err := openai.NewEmbedder(openai.EmbedderConfig{Config: e.cfg.OpenAIConfig(model)})
		if err != nil {
			return nil, 0, err
		}
		return withDim(ctx, emb)
	}
	model, ok := strings.CutPrefix(key, config.OllamaPrefix)
	if !ok {
		return nil, 0, engram.Errorf(engram.EINVALID, "unknown vector model %q", key)
	}
	emb, err := ollama.NewEmbedder(ollama.Config{Host: e.cfg.OllamaHost, Model: model})
	if err != nil {
		return nil, 0, err
	}
	return withDim(ctx, emb)
}

// checkedEmbedder is an embedder that can learn its dimension from its
// server.
type checkedEmbedder interface {
	engram.Embedder
	Check(ctx context.Context) (dim int, err error)
}

// withDim returns emb with the dimension its server reports, asked within
// checkTimeout.
func withDim(ctx context.Context, emb checkedEmbedder) (engram.Embedder, int, error) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	dim, err := emb.Check(ctx)
	if err != nil {
		return nil, 0, err
	}
	return emb, dim, nil
}

// openVectors starts the vector side at engine open. It never fails the
// open: without vectors, recall degrades to keyword search and health says
// why.
func (e *Engine) openVectors(ctx context.Context) error {
	e.vec.bg, e.vec.stop = context.WithCancel(context.Background())
	if e.cfg.Embedder == config.EmbedderNone {
		return nil
	}
	want := e.cfg.ModelKey()
	active, _, ok, err := e.palace.ActiveModel(ctx)
	if err != nil {
		return err
	}
	key := want
	if ok && active != want {
		// Never brick the store on a model switch: keep serving the vectors
		// we have until a re-embed into the new model completes.
		key = active
		e.vec.pending = fmt.Sprintf("the config asks for %s but the vectors are %s: run `engram reembed` to switch", want, active)
		e.logger.Warn("re-embed pending", "active", active, "configured", want)
	}
	side, err := e.buildSide(ctx, key, !ok)
	if err == nil && e.cfg.BackgroundLoad && e.cfg.VectorIndex == config.VectorsEmbedded && !side.index.Loaded() && e.largeIndex(ctx, side.store) {
		// Loading the matrix takes seconds per hundred thousand vectors:
		// the server answers meanwhile, recall by keyword with a warning,
		// and health tells the progress. The indexer starts once it is
		// loaded, from its watermark, so turns written meanwhile get their
		// vectors then.
		side.loading = true
		e.vec.side = side
		e.recall.SetVectors(&recall.Vectors{Unavailable: vectorsLoading})
		e.vec.wg.Add(1)
		go func() {
			defer e.vec.wg.Done()
			e.loadSide(e.vec.bg, side)
		}()
		return nil
	}
	if err == nil {
		var v *recall.Vectors
		if v, err = e.runSide(ctx, side); err == nil {
			e.recall.SetVectors(v)
			e.vec.side = side
			return nil
		}
		side.close()
	}
	e.vec.problem = "vector recall is off, retrying: " + err.Error()
	e.recall.SetVectors(&recall.Vectors{Unavailable: "vector recall is off (" + engram.ErrorMessage(err) + ")"})
	e.logger.Warn("vector recall is off; recall answers with keyword search until it starts", "model", key, "err", err)
	if engram.ErrorCode(err) == engram.EUNSUPPORTED {
		return nil // retrying cannot help: the model needs a re-embed
	}
	// The embedder or Chroma may come up later (a laptop starting Ollama
	// after engram): keep trying in the background.
	e.vec.wg.Add(1)
	go func() {
		defer e.vec.wg.Done()
		e.retryVectors(e.vec.bg, key, !ok)
	}()
	return nil
}

// retryVectors starts the vector side of key with backoff until it starts
// or ctx ends.
func (e *Engine) retryVectors(ctx context.Context, key string, activate bool) {
	delay := backoff.Backoff{Base: time.Second, Max: time.Minute}
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay.Next()):
		}
		side, err := e.startSide(ctx, key, activate)
		if err != nil {
			e.vec.mu.Lock()
			e.vec.problem = "vector recall is off, retrying: " + err.Error()
			e.vec.mu.Unlock()
			e.recall.SetVectors(&recall.Vectors{Unavailable: "vector recall is off (" + engram.ErrorMessage(err) + ")"})
			continue
		}
		e.vec.mu.Lock()
		e.vec.side, e.vec.problem = side, ""
		e.vec.mu.Unlock()
		e.logger.Info("vector recall is on", "model", key)
		return
	}
}

// loadAtOnce is the most vectors (by their change numbers, a bound on
// their count) a server loads before it listens: a small index loads in a
// moment, and recall has it from the first request.
var loadAtOnce int64 = 20_000

// largeIndex reports whether store may hold more than loadAtOnce vectors.
func (e *Engine) largeIndex(ctx context.Context, store vectorRows) bool {
	last, err := store.LastChange(ctx)
	return err != nil || last > loadAtOnce
}

// vectorsLoading is recall's warning while the embedded vector index loads.
const vectorsLoading = "the vector index is still loading (see /v1/health)"

// loadSide loads side's embedded index in the background, then starts its
// indexer and points recall at it, unless the engine closed or swapped the
// side meanwhile.
func (e *Engine) loadSide(ctx context.Context, side *vectorSide) {
	if testHooks.vectorLoad != nil {
		testHooks.vectorLoad(ctx)
	}
	v, err := e.runSide(ctx, side)
	e.vec.mu.Lock()
	side.loading = false
	switch {
	case e.vec.side != side || ctx.Err() != nil:
		err = nil // closing, or a re-embed replaced it: stop what runSide started
	case err != nil:
		e.vec.side, e.vec.loadFailed = nil, true
		e.vec.problem = "vector recall is off: the vector index failed to load: " + err.Error()
		e.recall.SetVectors(&recall.Vectors{Unavailable: "vector recall is off (" + engram.ErrorMessage(err) + ")"})
	default:
		e.recall.SetVectors(v)
		e.vec.mu.Unlock()
		read, _ := side.index.LoadProgress()
		e.logger.Info("the vector index is loaded", "model", side.model, "vectors", read)
		return
	}
	e.vec.mu.Unlock()
	side.close() // outside the lock: its indexer's batch in flight may take it
	if err != nil {
		e.logger.Error("the vector index failed to load; recall answers with keyword search", "model", side.model, "err", err)
	}
}

// startSide builds and starts the vector side of model key, and points
// recall at it. activate makes key the palace's active model first.
func (e *Engine) startSide(ctx context.Context, key string, activate bool) (*vectorSide, error) {
	side, err := e.buildSide(ctx, key, activate)
	if err != nil {
		return nil, err
	}
	v, err := e.runSide(ctx, side)
	if err != nil {
		side.close()
		return nil, err
	}
	e.recall.SetVectors(v)
	return side, nil
}

// buildSide builds the vector side of model key, its indexer not started
// (its watermark read); activate makes key the palace's active model first.
func (e *Engine) buildSide(ctx context.Context, key string, activate bool) (*vectorSide, error) {
	emb, dim, err := e.newEmbedder(ctx, key)
	if err != nil {
		return nil, err
	}
	store, err := e.palace.Vectors(ctx, key, dim)
	if err != nil {
		return nil, err
	}
	if activate {
		if err := e.palace.ActivateModel(ctx, key); err != nil {
			return nil, err
		}
	}
	side := &vectorSide{model: key, backend: e.cfg.VectorIndex, store: store, index: e.indexOf(store)}
	side.vx = pipeline.NewVectorIndexer(e.archive, emb, store)
	side.vx.Logger = e.logger.With("component", "vectors")
	side.vx.Work = e.work
	side.vx.Shared = e.sharedVectors()
	if e.cfg.VectorIndex == config.VectorsChroma {
		ci, err := chroma.Open(ctx, chroma.Config{URL: e.cfg.ChromaURL, Database: e.cfg.ChromaDatabase, Model: key, Dim: dim})
		if err != nil {
			return nil, fmt.Errorf("chroma: %w", err)
		}
		side.ext = pipeline.NewExternalSync(store, ci)
		side.external = ci
		side.ext.Logger = e.logger.With("component", "chroma-sync")
	}
	if err := side.vx.Init(ctx); err != nil { // health tells the watermark before the indexer starts
		return nil, err
	}
	return side, nil
}

// runSide loads side's embedded index (unless loaded), starts its indexer
// (and the sync to Chroma) and returns what recall searches with it.
func (e *Engine) runSide(ctx context.Context, side *vectorSide) (*recall.Vectors, error) {
	var index engram.VectorIndex = side.index
	if side.ext != nil {
		index = side.external
	} else if err := side.index.Load(ctx); err != nil {
		return nil, err
	}
	side.vx.Follow() // from the watermark buildSide read
	wait := side.vx.Wait
	if side.ext != nil {
		if err := side.ext.Open(ctx, side.store.Notify); err != nil {
			side.vx.Close()
			return nil, err
		}
		wait = func(ctx context.Context, seq int64) error {
			if err := side.vx.Wait(ctx, seq); err != nil {
				return err
			}
			return side.ext.WaitCurrent(ctx)
		}
	}
	sync := e.recallWait(side.vx.Embedded, wait)
	return &recall.Vectors{Embedder: side.vx.Embedder(), Index: index, Sync: sync}, nil
}

// closeVectors stops a running re-embed and the vector side.
func (e *Engine) closeVectors() {
	if e.vec.stop != nil {
		e.vec.stop()
	}
	e.vec.wg.Wait()
	e.vec.mu.Lock()
	defer e.vec.mu.Unlock()
	e.vec.side.close()
	e.vec.side = nil
}

// indexHealth reports the in-memory indexes a server loads after it
// starts: the keyword indexes it warms (Warm) and the embedded vector
// index, with the vectors read so far.
func (e *Engine) indexHealth() map[string]engram.IndexHealth {
	out := map[string]engram.IndexHealth{}
	for name, state := range e.palace.KeywordIndexStates() {
		out["keywords-"+name] = engram.IndexHealth{State: state}
	}
	e.vec.mu.Lock()
	defer e.vec.mu.Unlock()
	if s := e.vec.side; s != nil && s.ext == nil {
		ih := engram.IndexHealth{State: palace.IndexLoading}
		if !s.loading {
			ih.State = palace.IndexReady
		}
		ih.Loaded, ih.Total = s.index.LoadProgress()
		out["vectors"] = ih
	} else if e.vec.loadFailed {
		out["vectors"] = engram.IndexHealth{State: palace.IndexFailed}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// vectorHealth reports the vector side for /v1/health.
func (e *Engine) vectorHealth(ctx context.Context) (*engram.VectorHealth, []string) {
	e.vec.mu.Lock()
	defer e.vec.mu.Unlock()
	if e.cfg.Embedder == config.EmbedderNone && e.vec.reembed == nil {
		return nil, nil
	}
	h := &engram.VectorHealth{Backend: e.cfg.VectorIndex, Pending: e.vec.pending}
	var problems []string
	if e.vec.problem != "" {
		problems = append(problems, e.vec.problem)
	}
	if s := e.vec.side; s != nil {
		h.Model, h.EmbeddedSeq, h.Lag = s.model, s.vx.Embedded(), s.vx.Lag()
		if err := s.vx.Err(); err != nil {
			problems = append(problems, "embedding new turns fails, retrying (shallow recall misses them meanwhile): "+err.Error())
		}
		if s.ext != nil {
			if err := s.ext.Err(); err != nil {
				problems = append(problems, "the chroma server is behind, retrying: "+err.Error())
			}
			if last, err := s.store.LastChange(ctx); err == nil {
				h.ChromaLag = max(last-s.ext.Synced(), 0)
			}
		}
	}
	if r := e.vec.reembed; r != nil {
		cp := *r
		cp.Done = min(cp.Done, cp.Total) // turns archived during the re-embed are past Total
		h.Reembed = &cp
		if r.State == engram.ReembedFailed {
			problems = append(problems, fmt.Sprintf("the re-embed into %s failed, recall keeps the old vectors (run engram reembed again to resume): %s", r.Model, r.Error))
		}
	}
	return h, problems
}

// StartReembed implements engram.ReembedService: it embeds every turn with
// model in the background, then switches recall to it atomically.
func (e *Engine) StartReembed(ctx context.Context, model string) (engram.ReembedStatus, error) {
	key, err := e.cfg.ParseModel(model)
	if err != nil {
		return engram.ReembedStatus{}, err
	}
	if e.ActiveModel() != key {
		if err := e.CheckModel(ctx, key); err != nil { // before the 202: a model the server lacks fails here, not in the background
			return engram.ReembedStatus{}, err
		}
	}
	e.vec.mu.Lock()
	defer e.vec.mu.Unlock()
	if r := e.vec.reembed; r != nil && r.State == engram.ReembedRunning {
		return *r, engram.Errorf(engram.ECONFLICT, "a re-embed into %s is running (%d of %d turns)", r.Model, r.Done, r.Total)
	}
	if e.vec.side != nil && e.vec.side.model == key {
		return engram.ReembedStatus{}, engram.Errorf(engram.ECONFLICT, "%s is already the active model", key)
	}
	st := &engram.ReembedStatus{Model: key, State: engram.ReembedRunning, Total: e.archive.LastSeq(), Started: time.Now().UTC()}
	e.vec.reembed = st
	if e.vec.bg == nil {
		return engram.ReembedStatus{}, engram.Errorf(engram.EUNAVAILABLE, "the engine is not open")
	}
	e.vec.wg.Add(1)
	go func() {
		defer e.vec.wg.Done()
		err := e.reembed(e.vec.bg, key, func(done int64) {
			e.vec.mu.Lock()
			st.Done = done
			e.vec.mu.Unlock()
		})
		e.vec.mu.Lock()
		defer e.vec.mu.Unlock()
		if err != nil {
			st.State, st.Error = engram.ReembedFailed, err.Error()
			e.logger.Error("re-embed failed; recall keeps the old vectors", "model", key, "err", err)
			return
		}
		st.State, st.Done = engram.ReembedDone, st.Total
		e.logger.Info("re-embed complete; recall now uses the new vectors", "model", key)
	}()
	return *st, nil
}

// ActiveModel returns the model recall searches now, "" when vectors are
// off.
func (e *Engine) ActiveModel() string {
	e.vec.mu.Lock()
	defer e.vec.mu.Unlock()
	if e.vec.side == nil {
		return ""
	}
	return e.vec.side.model
}

// Reembed embeds every archived turn with the model key (a ParseModel key)
// in the foreground, progress told of the seq embedded, then switches recall
// to it (see reembed). StartReembed does the same in the background.
func (e *Engine) Reembed(ctx context.Context, key string, progress func(done int64)) error {
	return e.reembed(ctx, key, progress)
}

// reembed embeds every archived turn with key into that model's index
// (state building), then activates it and swaps the vector side. Until the
// swap, recall keeps using the old index; an interrupted re-embed resumes
// from its watermark next time.
func (e *Engine) reembed(ctx context.Context, key string, progress func(done int64)) error {
	emb, dim, err := e.newEmbedder(ctx, key)
	if err != nil {
		return err
	}
	store, err := e.palace.Vectors(ctx, key, dim)
	if err != nil {
		return err
	}
	vx := pipeline.NewVectorIndexer(e.archive, emb, store)
	vx.Logger = e.logger.With("component", "reembed")
	vx.Work = e.work
	if err := vx.Init(ctx); err != nil {
		return err
	}
	if err := vx.CatchUp(ctx, progress); err != nil {
		return err
	}
	if e.cfg.VectorIndex == config.VectorsEmbedded {
		if err := e.indexOf(store).Load(ctx); err != nil { // before the switch, so no query waits for it
			return err
		}
	}
	if err := e.palace.ActivateModel(ctx, key); err != nil {
		return err
	}
	side, err := e.startSide(ctx, key, false)
	if err != nil {
		return fmt.Errorf("%s is active but could not start: %w", key, err)
	}
	e.vec.mu.Lock()
	old := e.vec.side
	e.vec.side, e.vec.problem, e.vec.loadFailed = side, "", false
	if key == e.cfg.ModelKey() {
		e.vec.pending = ""
	}
	e.vec.mu.Unlock()
	if old != nil {
		old.close()
		old.index.Unload() // the retired model's matrix; its vectors stay in SQLite
	}
	return nil
}
