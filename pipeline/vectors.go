package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/work"
)

// DefaultEmbedBatch is how many turns are embedded and written per batch.
const DefaultEmbedBatch = 256

// VectorStore is where embedded turns go: the palace's copy of one model's
// vectors, whose watermark advances in the same transaction as the vectors.
type VectorStore interface {
	// PutTurnVectors upserts items and records that every turn up to
	// throughSeq is embedded, atomically.
	PutTurnVectors(ctx context.Context, items []engram.VectorItem, throughSeq int64) error
	// Watermark returns the last turn seq embedded.
	Watermark(ctx context.Context) (int64, error)
}

// SharedVectors holds turn vectors by model and seq for every server of one
// archive (package postgres implements it).
type SharedVectors interface {
	// RewriteMark dates a read of turns: taken before it, it lets
	// PutTurnVectors leave out the turns rewritten since.
	RewriteMark(ctx context.Context) (int64, error)
	// TurnVectors returns the stored vectors of model and dimension dim of
	// the turns of seqs, by seq.
	TurnVectors(ctx context.Context, model string, dim int, seqs []int64) (map[int64][]float32, error)
	// PutTurnVectors stores vecs[i] as model's vector of the turn seqs[i],
	// unless a rewrite after mark changed the turn; it returns how many
	// it stored.
	PutTurnVectors(ctx context.Context, model string, mark int64, seqs []int64, vecs [][]float32) (int, error)
}

// VectorIndexer embeds archived turns with one model, in sequence order,
// into a VectorStore. It follows the archive like the Indexer; a failing
// embedder (an Ollama server down, say) only delays vectors: it retries with
// backoff and never blocks ingest or keyword recall.
type VectorIndexer struct {
	archive  engram.Archive
	embedder engram.Embedder
	store    VectorStore

	// BatchSize is the most turns embedded and written at once.
	BatchSize  int
	RetryDelay time.Duration
	Logger     *slog.Logger
	// Work, if set, runs each batch's embedding and its store as tasks of
	// class Embed, which give way to the client writes in flight (the
	// turns' keyword index, which they wait for, goes first). The store
	// is guarded (Work.DoSince): a batch read before a redaction (an
	// exclusive section) that ended since is not stored, and the indexer
	// reads the turns again, so that it never writes the vector of a
	// replaced text.
	Work *work.Scheduler
	// Shared, when set, is the store of turn vectors shared with the other
	// servers of the archive: a turn whose vector another server stored
	// is not embedded again, and the vectors embedded here are stored
	// there. A failing Shared only warns: the turns are embedded here.
	Shared SharedVectors

	prog *progress
	f    *follower
}

// NewVectorIndexer returns a vector indexer; call Open to start it, or
// CatchUp to run it once.
func NewVectorIndexer(a engram.Archive, emb engram.Embedder, store VectorStore) *VectorIndexer {
	return &VectorIndexer{
		archive: a, embedder: emb, store: store,
		BatchSize: DefaultEmbedBatch, RetryDelay: DefaultRetryDelay, Logger: slog.Default(),
		prog: newProgress(0),
	}
}

// Open reads the watermark and starts following the archive in the
// background (catching up first). It does not wait for the catch-up: with a
// slow embedder that can take long, and keyword recall works meanwhile.
func (vx *VectorIndexer) Open(ctx context.Context) error {
	if err := vx.Init(ctx); err != nil {
		return err
	}
	vx.Follow()
	return nil
}

// Follow starts following the archive in the background from the
// watermark Init read (Open is Init and Follow): a caller that reports the
// watermark before the indexer starts calls Init first, and Follow later.
func (vx *VectorIndexer) Follow() {
	vx.f = &follower{name: "embedding " + vx.embedder.Model(), source: archiveSignal(vx.archive),
		step: func(ctx context.Context) error { return vx.CatchUp(ctx, nil) }, retryDelay: vx.RetryDelay, logger: vx.Logger}
	vx.f.start()
}

// Init reads the watermark, for CatchUp without Open.
func (vx *VectorIndexer) Init(ctx context.Context) error {
	seq, err := vx.store.Watermark(ctx)
	if err != nil {
		return fmt.Errorf("read vector watermark: %w", err)
	}
	vx.prog = newProgress(seq)
	return nil
}

// Close stops following.
func (vx *VectorIndexer) Close() error {
	if vx.f != nil {
		vx.f.stop()
	}
	return nil
}

// Notify returns a channel closed at the next progress (or failure).
func (vx *VectorIndexer) Notify() <-chan struct{} { return vx.prog.notify() }

// Model is the embedder's model.
func (vx *VectorIndexer) Model() string { return vx.embedder.Model() }

// Embedder returns the indexer's embedder.
func (vx *VectorIndexer) Embedder() engram.Embedder { return vx.embedder }

// Embedded returns the watermark: every turn up to this seq has a vector.
func (vx *VectorIndexer) Embedded() int64 {
	seq, _ := vx.prog.get()
	return seq
}

// Err returns the last batch's error, nil once a later batch succeeded.
func (vx *VectorIndexer) Err() error {
	_, err := vx.prog.get()
	return err
}

// Lag returns how many archived turns have no vector yet.
func (vx *VectorIndexer) Lag() int64 {
	return max(vx.archive.LastSeq()-vx.Embedded(), 0)
}

// WaitCurrent waits until every turn archived when it was called has its
// vector. While the embedder is failing it returns the error at once rather
// than holding the caller for nothing.
func (vx *VectorIndexer) WaitCurrent(ctx context.Context) error {
	if err := vx.Err(); err != nil {
		return err
	}
	return vx.prog.wait(ctx, vx.archive.LastSeq())
}

// Wait waits until every turn up to seq has its vector. While the
// embedder is failing it returns the error at once.
func (vx *VectorIndexer) Wait(ctx context.Context, seq int64) error {
	if err := vx.Err(); err != nil {
		return err
	}
	return vx.prog.wait(ctx, seq)
}

// CatchUp embeds every archived turn after the watermark. progress, if
// set, is called after each batch with the watermark.
func (vx *VectorIndexer) CatchUp(ctx context.Context, progress func(seq int64)) error {
	for {
		err := vx.catchUp(ctx, progress)
		if !errors.Is(err, errStale) {
			return err
		}
		vx.Logger.Debug("turns were rewritten while a batch was embedded; reading them again", "model", vx.embedder.Model())
	}
}

// catchUp is one pass of CatchUp: one read of the archive from the
// watermark, errStale when an exclusive section (a redaction) ended
// during it.
func (vx *VectorIndexer) catchUp(ctx context.Context, progress func(seq int64)) error {
	size := vx.BatchSize
	if size <= 0 {
		size = DefaultEmbedBatch
	}
	mark := vx.Work.Epoch() // before the archive's snapshot is taken
	shared := vx.sharedMark(ctx)
	return streamBatches(ctx, vx.archive, vx.Embedded(), size, func(batch []engram.Turn) error {
		last := batch[len(batch)-1].Seq
		var items []engram.VectorItem
		if live := engram.IndexableTurns(batch); len(live) > 0 { // tombstones get no vector, nor a time the index cannot hold
			err := vx.Work.Do(ctx, work.Embed, func() (err error) {
				items, err = vx.embed(ctx, live, shared)
				return err
			})
			if err != nil {
				vx.prog.fail(err)
				return err
			}
		}
		ok, err := vx.Work.DoSince(ctx, work.Embed, mark, func() error { return vx.store.PutTurnVectors(ctx, items, last) })
		if err != nil {
			vx.prog.fail(err)
			return err
		}
		if !ok {
			return errStale
		}
		vx.prog.advance(last)
		if progress != nil {
			progress(last)
		}
		return nil
	})
}

// sharedMark is the shared store's rewrite mark, taken before the archive
// is read; -1 when there is no shared store, or it failed (then this pass
// neither reads nor stores shared vectors).
func (vx *VectorIndexer) sharedMark(ctx context.Context) int64 {
	if vx.Shared == nil {
		return -1
	}
	mark, err := vx.Shared.RewriteMark(ctx)
	if err != nil {
		vx.Logger.Warn("the shared turn vectors could not be read; embedding here", "err", err)
		return -1
	}
	return mark
}

// embed returns the vector items of turns (indexable ones, as catchUp
// passes them): those the shared store holds (with shared, its mark, at 0
// or above), the rest embedded here and then stored there.
func (vx *VectorIndexer) embed(ctx context.Context, turns []engram.Turn, shared int64) ([]engram.VectorItem, error) {
	if shared < 0 {
		return EmbedTurns(ctx, vx.embedder, turns)
	}
	seqs := make([]int64, len(turns))
	for i, t := range turns {
		seqs[i] = t.Seq
	}
	model := vx.embedder.Model()
	have, err := vx.Shared.TurnVectors(ctx, model, vx.embedder.Dim(), seqs)
	if err != nil {
		vx.Logger.Warn("the shared turn vectors could not be read; embedding here", "err", err)
		have = nil
	}
	var missing []engram.Turn
	for _, t := range turns {
		if have[t.Seq] == nil {
			missing = append(missing, t)
		}
	}
	embedded, err := EmbedTurns(ctx, vx.embedder, missing)
	if err != nil {
		return nil, err
	}
	if len(embedded) > 0 {
		vecs := make([][]float32, len(embedded))
		put := make([]int64, len(embedded))
		for i, it := range embedded {
			vecs[i], put[i] = it.Vector, missing[i].Seq
		}
		if _, err := vx.Shared.PutTurnVectors(ctx, model, shared, put, vecs); err != nil {
			vx.Logger.Warn("the turn vectors embedded here could not be shared", "err", err)
		}
	}
	items := make([]engram.VectorItem, 0, len(turns))
	next := 0
	for _, t := range turns {
		if v := have[t.Seq]; v != nil {
			items = append(items, turnItem(t, v))
		} else {
			items = append(items, embedded[next])
			next++
		}
	}
	return items, nil
}

// EmbedTurns embeds turns (their EmbedText) with emb in one call and
// returns their vector items, of kind turn: the embedding of a batch of
// the VectorIndexer, and of a reindex's turns that lost their vector.
// Tombstones and turns with a time the index cannot hold are left out
// (engram.IndexableTurns).
func EmbedTurns(ctx context.Context, emb engram.Embedder, turns []engram.Turn) ([]engram.VectorItem, error) {
	if turns = engram.IndexableTurns(turns); len(turns) == 0 {
		return nil, nil
	}
	texts := make([]string, len(turns))
	for i, t := range turns {
		texts[i] = t.EmbedText()
	}
	vecs, err := emb.Embed(ctx, texts)
	if err == nil && len(vecs) != len(turns) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(turns))
	}
	if err != nil {
		return nil, fmt.Errorf("embed turns %d..%d with %s: %w", turns[0].Seq, turns[len(turns)-1].Seq, emb.Model(), err)
	}
	items := make([]engram.VectorItem, len(turns))
	for i, t := range turns {
		items[i] = turnItem(t, vecs[i])
	}
	return items, nil
}

// turnItem is t's vector item with vector v.
func turnItem(t engram.Turn, v []float32) engram.VectorItem {
	return engram.VectorItem{ID: t.ID, Kind: engram.KindTurn, Namespace: t.Namespace, TS: t.TS, Vector: v}
}
