package pipeline_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/vecindex"
)

func mustOpen(t *testing.T) (*archive.Archive, *palace.DB, string) {
	t.Helper()
	dir := t.TempDir()
	a, err := archive.Open(filepath.Join(dir, "archive"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a, mustOpenPalace(t, filepath.Join(dir, "palace.db")), dir
}

func mustOpenPalace(t *testing.T, path string) *palace.DB {
	t.Helper()
	p, err := palace.Open(path, palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func appendTurns(t *testing.T, a *archive.Archive, n int) {
	t.Helper()
	turns := make([]engram.Turn, n)
	for i := range turns {
		turns[i] = engram.Turn{Namespace: "default", Session: "s", Role: engram.RoleUser, Speaker: "Ana",
			Content: fmt.Sprintf("turn number %d about topic%d", i, i%7), TS: time.Now().UTC()}
	}
	if _, err := a.Append(context.Background(), turns); err != nil {
		t.Fatal(err)
	}
}

func waitCtx(t *testing.T) context.Context {
	// No wall-clock limit of its own: on a loaded machine the workers may
	// take long, and a hang is caught by go test's -timeout.
	return t.Context()
}

func TestIndexerCatchUpAndFollow(t *testing.T) {
	a, p, dir := mustOpen(t)
	appendTurns(t, a, 25) // archived before the indexer runs: caught up at Open
	ix := pipeline.NewIndexer(a, p)
	ix.BatchSize = 10
	if err := ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if ix.Indexed() != 25 || ix.Lag() != 0 {
		t.Fatalf("after Open: indexed %d, lag %d", ix.Indexed(), ix.Lag())
	}
	appendTurns(t, a, 7) // followed through the archive's commit notification
	if err := ix.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n, _ := p.CountTurns(context.Background(), ""); n != 32 {
		t.Fatalf("palace holds %d turns, want 32", n)
	}
	ix.Close()

	// A new, empty palace (palace.db deleted) is filled from the archive.
	p2 := mustOpenPalace(t, filepath.Join(dir, "palace2.db"))
	ix2 := pipeline.NewIndexer(a, p2)
	if err := ix2.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	if n, _ := p2.CountTurns(context.Background(), ""); n != 32 {
		t.Fatalf("rebuilt palace holds %d turns, want 32", n)
	}
}

func TestIndexerRefusesForeignPalace(t *testing.T) {
	a, p, _ := mustOpen(t)
	appendTurns(t, a, 3)
	ix := pipeline.NewIndexer(a, p)
	if err := ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	ix.Close()
	a2, err := archive.Open(filepath.Join(t.TempDir(), "archive"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a2.Close()
	err = pipeline.NewIndexer(a2, p).Open(context.Background())
	if engram.ErrorCode(err) != engram.ECONFLICT {
		t.Fatalf("a palace ahead of its archive must be refused with ECONFLICT, got %v", err)
	}
}

// TestIngestWaitsForSearchable: with PutSearchable an acknowledged write
// waits for its turns to be searchable, not for their session units
// (Secondary); Wait (and recall's sync through WaitCurrent) waits for
// those too.
func TestIngestWaitsForSearchable(t *testing.T) {
	a, p, _ := mustOpen(t)
	ix := pipeline.NewIndexer(a, p)
	release := make(chan struct{})
	ix.PutSearchable = p.PutTurnsSearchable
	ix.Secondary = func(ctx context.Context, seq int64, stop func() bool) (bool, error) {
		<-release // the session units wait
		return p.IndexSecondary(ctx, seq, 0, stop)
	}
	if err := ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	g := &pipeline.Ingester{Archive: a, Indexer: ix}
	res, err := g.Ingest(waitCtx(t), []engram.Turn{{Namespace: "default", Session: "s", Role: engram.RoleUser, Content: "the kafka consumer lags"}})
	if err != nil || len(res.Warnings) > 0 {
		t.Fatalf("Ingest: %+v, %v; want an acknowledgement without warnings", res, err)
	}
	seq := res.Turns[0].Seq
	hits, err := p.SearchTurns(context.Background(), engram.TextQuery{Text: "kafka", Limit: 5})
	if err != nil || len(hits) != 1 {
		t.Fatalf("search after the acknowledgement: %d hits, %v", len(hits), err)
	}
	if units, err := p.TurnUnits(context.Background(), []int64{seq}); err != nil || len(units[seq]) != 0 {
		t.Fatalf("the units were written before the acknowledgement: %v, %v", units, err)
	}
	if ix.Indexed() != seq || ix.Lag() != 0 {
		t.Fatalf("indexed %d, lag %d while the units wait; want %d, 0 (searchable)", ix.Indexed(), ix.Lag(), seq)
	}
	wctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ix.Wait(wctx, seq); err == nil {
		t.Fatal("Wait returned while the units wait")
	}
	close(release)
	if err := ix.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if units, err := p.TurnUnits(context.Background(), []int64{seq}); err != nil || len(units[seq]) != 1 {
		t.Fatalf("after WaitCurrent: units %v, %v; want one", units, err)
	}
}

// TestIndexerSecondaryYields: the secondary steps are steps of the
// indexer's Yield; while the layer jobs hold every step, a new turn is
// still made searchable at once (the indexer stops waiting for a step when
// a turn is archived), and its session units wait for a step, but never
// longer than the Yield's MaxWait: then a step runs without one.
func TestIndexerSecondaryYields(t *testing.T) {
	a, p, _ := mustOpen(t)
	y := &pipeline.Yield{Steps: 1, MaxWait: time.Second}
	ix := pipeline.NewIndexer(a, p)
	ix.PutSearchable = p.PutTurnsSearchable
	ix.Secondary = func(ctx context.Context, seq int64, stop func() bool) (bool, error) {
		return p.IndexSecondary(ctx, seq, 0, stop)
	}
	ix.Yield = y
	var clock atomic.Int64 // seconds after t0
	t0 := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	pipeline.SetIndexerNow(ix, func() time.Time { return t0.Add(time.Duration(clock.Load()) * time.Second) })
	if err := ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	job, err := y.Step(context.Background()) // the layer jobs compute
	if err != nil {
		t.Fatal(err)
	}
	defer job()
	g := &pipeline.Ingester{Archive: a, Indexer: ix}
	var seqs []int64
	ingest := func(text string) {
		t.Helper()
		res, err := g.Ingest(waitCtx(t), []engram.Turn{{Namespace: "default", Session: "s", Role: engram.RoleUser, Content: text}})
		if err != nil || len(res.Warnings) > 0 {
			t.Fatalf("Ingest %q while the jobs hold the step: %+v, %v; want an acknowledgement without warnings", text, res, err)
		}
		seqs = append(seqs, res.Turns[0].Seq)
	}
	ingest("the kafka consumer lags")
	ingest("the kafka broker restarted")
	if hits, err := p.SearchTurns(context.Background(), engram.TextQuery{Text: "kafka", Limit: 5}); err != nil || len(hits) != 2 {
		t.Fatalf("search while the jobs hold the step: %d hits, %v; want 2", len(hits), err)
	}
	if units, err := p.TurnUnits(context.Background(), seqs); err != nil || len(units) != 0 {
		t.Fatalf("units written while the jobs held the step: %v, %v", units, err)
	}
	// The jobs still hold the step, longer than MaxWait: the next turn's
	// round runs its steps without one.
	testutil.WaitUntil(t, "the indexer to wait for a step", func() bool { return pipeline.YieldStepWaiters(y) == 1 })
	clock.Store(2)
	ingest("the kafka cluster is healthy again")
	if err := ix.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if units, err := p.TurnUnits(context.Background(), seqs); err != nil || len(units) != 3 {
		t.Fatalf("after MaxWait without a step: units %v, %v; want the three turns'", units, err)
	}
}

// failingPalace is a palace whose writes fail while down is set, like a
// full disk (a process edge misbehaving).
type failingPalace struct {
	*palace.DB
	down atomic.Bool
}

func (f *failingPalace) PutTurns(ctx context.Context, turns []engram.Turn) error {
	if f.down.Load() {
		return engram.Errorf(engram.ENOSPACE, "disk full")
	}
	return f.DB.PutTurns(ctx, turns)
}

// TestIndexerOpensWhileWritesFail: a catch-up that fails at Open does not
// fail it (an engine starts degraded, not at all); the error is reported
// and the indexer catches up by itself once writes succeed.
func TestIndexerOpensWhileWritesFail(t *testing.T) {
	for _, split := range []bool{false, true} {
		t.Run(fmt.Sprintf("searchable_first=%v", split), func(t *testing.T) { testIndexerOpensWhileWritesFail(t, split) })
	}
}

func testIndexerOpensWhileWritesFail(t *testing.T, split bool) {
	a, p, _ := mustOpen(t)
	appendTurns(t, a, 5)
	idx := &failingPalace{DB: p}
	idx.down.Store(true)
	ix := pipeline.NewIndexer(a, idx)
	ix.RetryDelay = time.Millisecond
	if split {
		ix.PutSearchable = func(ctx context.Context, turns []engram.Turn) error {
			if idx.down.Load() {
				return engram.Errorf(engram.ENOSPACE, "disk full")
			}
			return p.PutTurnsSearchable(ctx, turns)
		}
		ix.Secondary = func(ctx context.Context, seq int64, stop func() bool) (bool, error) {
			return p.IndexSecondary(ctx, seq, 0, stop)
		}
	}
	if err := ix.Open(context.Background()); err != nil {
		t.Fatalf("Open while the palace cannot be written: %v, want nil (degraded)", err)
	}
	defer ix.Close()
	if ix.Err() == nil || engram.ErrorCode(ix.Err()) != engram.ENOSPACE || ix.Lag() != 5 {
		t.Fatalf("after Open: err %v, lag %d; want the write error and 5 behind", ix.Err(), ix.Lag())
	}
	idx.down.Store(false)
	if err := ix.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if ix.Err() != nil || ix.Indexed() != 5 {
		t.Fatalf("after the disk recovered: err %v, indexed %d", ix.Err(), ix.Indexed())
	}
}

// flakyEmbedder fails while down is set, like an embedding server that is
// restarting (a process edge misbehaving); otherwise it is the builtin one.
type flakyEmbedder struct {
	*embedder.Builtin
	down  atomic.Bool
	calls atomic.Int64
}

func (f *flakyEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	if f.down.Load() {
		return nil, engram.Errorf(engram.EUNAVAILABLE, "embedding server down")
	}
	return f.Builtin.Embed(ctx, texts)
}

func TestVectorIndexerRetriesThenCatchesUp(t *testing.T) {
	a, p, _ := mustOpen(t)
	emb := &flakyEmbedder{Builtin: embedder.New()}
	store, err := p.Vectors(context.Background(), emb.Model(), emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	vx := pipeline.NewVectorIndexer(a, emb, store)
	vx.RetryDelay = 5 * time.Millisecond
	vx.BatchSize = 8
	emb.down.Store(true)
	appendTurns(t, a, 20)
	if err := vx.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer vx.Close()
	// While the embedder is down, WaitCurrent reports the failure at once.
	for vx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := vx.WaitCurrent(waitCtx(t)); err == nil || vx.Embedded() != 0 {
		t.Fatalf("down: err %v, embedded %d", err, vx.Embedded())
	}
	emb.down.Store(false) // the server is back: the retry catches up
	deadline := time.Now().Add(30 * time.Second)
	for vx.Embedded() < 20 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if vx.Embedded() != 20 || vx.Err() != nil {
		t.Fatalf("after recovery: embedded %d, err %v", vx.Embedded(), vx.Err())
	}
	if n, _ := store.Count(context.Background()); n != 20 {
		t.Fatalf("%d vectors stored, want 20", n)
	}
	if wm, _ := store.Watermark(context.Background()); wm != 20 {
		t.Fatalf("watermark %d, want 20", wm)
	}
	appendTurns(t, a, 3)
	if err := vx.WaitCurrent(waitCtx(t)); err != nil || vx.Embedded() != 23 {
		t.Fatalf("follow: %v, embedded %d", err, vx.Embedded())
	}
}

// failingIndex wraps a real index and fails upserts while down is set, like
// a Chroma server that is stopped.
type failingIndex struct {
	engram.VectorIndex
	down atomic.Bool
}

func (f *failingIndex) Upsert(ctx context.Context, items []engram.VectorItem) error {
	if f.down.Load() {
		return engram.Errorf(engram.EUNAVAILABLE, "chroma server not reachable")
	}
	return f.VectorIndex.Upsert(ctx, items)
}

var _ pipeline.VectorJournal = (*palace.VectorStore)(nil)

func TestExternalSyncPushesMissedVectors(t *testing.T) {
	a, p, _ := mustOpen(t)
	emb := embedder.New()
	store, err := p.Vectors(context.Background(), emb.Model(), emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	other, err := p.Vectors(context.Background(), "external-copy", emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	target := &failingIndex{VectorIndex: vecindex.New(other)}
	vx := pipeline.NewVectorIndexer(a, emb, store)
	if err := vx.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer vx.Close()
	sync := pipeline.NewExternalSync(store, target)
	sync.RetryDelay = 5 * time.Millisecond
	sync.BatchSize = 4
	if err := sync.Open(context.Background(), vx.Notify); err != nil {
		t.Fatal(err)
	}
	defer sync.Close()

	appendTurns(t, a, 10)
	if err := vx.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := sync.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	if n, _ := other.Count(context.Background()); n != 10 {
		t.Fatalf("external index holds %d, want 10", n)
	}

	target.down.Store(true) // the server stops; ingest and embedding go on
	appendTurns(t, a, 6)
	if err := vx.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
	}
	for sync.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := sync.WaitCurrent(waitCtx(t)); err == nil {
		t.Fatal("WaitCurrent must report the failing push")
	}
	target.down.Store(false) // back: the missed vectors are pushed
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, _ := other.Count(context.Background())
		if n == 16 && sync.Err() == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("external index holds %d after recovery, want 16 (err %v)", n, sync.Err())
		}
		time.Sleep(time.Millisecond)
	}
}
