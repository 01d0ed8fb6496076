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
	"github.com/engram-dev/engram/internal/work"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/vecindex"
)

var _ pipeline.SplitIndex = heldSecondary{}

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

// heldSecondary is a palace whose secondary indexing waits for release.
type heldSecondary struct {
	*palace.DB
	release chan struct{}
}

func (h heldSecondary) IndexSecondary(ctx context.Context, seq int64, limit int, stop func() bool) (bool, error) {
	<-h.release
	return h.DB.IndexSecondary(ctx, seq, limit, stop)
}

// TestIngestWaitsForSearchable: with a SplitIndex an acknowledged write
// waits for its turns to be searchable, not for their session units
// (IndexSecondary); Wait (and recall's sync through WaitCurrent) waits for
// those too.
func TestIngestWaitsForSearchable(t *testing.T) {
	a, p, _ := mustOpen(t)
	release := make(chan struct{})
	ix := pipeline.NewSplitIndexer(a, heldSecondary{p, release})
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

// TestIndexerSecondaryFirst: the secondary steps are tasks of the
// indexer's work.Scheduler, of the highest class. While the layer jobs
// hold the only worker, new turns are still made searchable at once, and
// their session units wait for the worker; once it is free they go before
// the layer jobs' task that waited longer.
func TestIndexerSecondaryFirst(t *testing.T) {
	a, p, _ := mustOpen(t)
	s := work.New(1)
	ix := pipeline.NewSplitIndexer(a, p)
	ix.Work = s
	if err := ix.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	job, err := s.Begin(context.Background(), work.Derive) // the layer jobs compute
	if err != nil {
		t.Fatal(err)
	}
	// The next task of the jobs waits for the worker too.
	var unitsBeforeJob atomic.Int64
	jobDone := make(chan error, 1)
	go func() {
		jobDone <- s.Do(context.Background(), work.Derive, func() error {
			units, err := p.TurnUnits(context.Background(), []int64{1, 2})
			unitsBeforeJob.Store(int64(len(units)))
			return err
		})
	}()
	testutil.WaitUntil(t, "the job's next task to wait", func() bool { return s.Stats().Waiting["derive"] == 1 })
	g := &pipeline.Ingester{Archive: a, Indexer: ix}
	var seqs []int64
	for _, text := range []string{"the kafka consumer lags", "the kafka broker restarted"} {
		res, err := g.Ingest(waitCtx(t), []engram.Turn{{Namespace: "default", Session: "s", Role: engram.RoleUser, Content: text}})
		if err != nil || len(res.Warnings) > 0 {
			t.Fatalf("Ingest %q while the jobs hold the worker: %+v, %v; want an acknowledgement without warnings", text, res, err)
		}
		seqs = append(seqs, res.Turns[0].Seq)
	}
	if hits, err := p.SearchTurns(context.Background(), engram.TextQuery{Text: "kafka", Limit: 5}); err != nil || len(hits) != 2 {
		t.Fatalf("search while the jobs hold the worker: %d hits, %v; want 2", len(hits), err)
	}
	if units, err := p.TurnUnits(context.Background(), seqs); err != nil || len(units) != 0 {
		t.Fatalf("units written while the jobs held the worker: %v, %v", units, err)
	}
	testutil.WaitUntil(t, "the indexer to wait for the worker", func() bool { return s.Stats().Waiting["index"] == 1 })
	job()
	if err := <-jobDone; err != nil {
		t.Fatal(err)
	}
	if n := unitsBeforeJob.Load(); n != 2 {
		t.Fatalf("the job's waiting task ran with %d of the turns' units written; want both (the index goes first)", n)
	}
	if err := ix.WaitCurrent(waitCtx(t)); err != nil {
		t.Fatal(err)
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

func (f *failingPalace) PutTurnsSearchable(ctx context.Context, turns []engram.Turn) error {
	if f.down.Load() {
		return engram.Errorf(engram.ENOSPACE, "disk full")
	}
	return f.DB.PutTurnsSearchable(ctx, turns)
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
	if split {
		ix = pipeline.NewSplitIndexer(a, idx)
	}
	ix.RetryDelay = time.Millisecond
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

// TestVectorIndexerWaitsForRedactionWithoutWorker: a batch of the vector
// indexer whose store waits for a running redaction (an exclusive section
// of its work.Scheduler) holds no worker meanwhile: the redaction waits for
// the turns' indexes, whose secondary steps need one, and a batch holding
// the only one would wait for it for ever. Once the redaction ends, the
// batch is refused and embedded again from the archive.
func TestVectorIndexerWaitsForRedactionWithoutWorker(t *testing.T) {
	ctx := context.Background()
	a, p, _ := mustOpen(t)
	emb := &flakyEmbedder{Builtin: embedder.New()}
	store, err := p.Vectors(ctx, emb.Model(), emb.Dim())
	if err != nil {
		t.Fatal(err)
	}
	appendTurns(t, a, 5)
	s := work.New(1)
	vx := pipeline.NewVectorIndexer(a, emb, store)
	vx.Work = s
	if err := vx.Init(ctx); err != nil {
		t.Fatal(err)
	}
	caught := make(chan error, 1)
	err = s.Exclusive(ctx, func() error { // a redaction
		go func() { caught <- vx.CatchUp(waitCtx(t), nil) }()
		testutil.WaitUntil(t, "the batch to be embedded and wait", func() bool {
			return emb.calls.Load() == 1 && s.Stats().Waiting["embed"] == 1
		})
		// What the redaction waits for finds the worker free.
		return s.Do(ctx, work.Index, func() error { return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-caught; err != nil {
		t.Fatalf("CatchUp after the redaction: %v", err)
	}
	if vx.Embedded() != 5 || emb.calls.Load() != 2 {
		t.Fatalf("after the redaction: embedded through %d in %d embeddings; want 5 in 2 (the batch read again)", vx.Embedded(), emb.calls.Load())
	}
	if n, err := store.Count(ctx); err != nil || n != 5 {
		t.Fatalf("%d vectors stored (%v), want 5", n, err)
	}
}
