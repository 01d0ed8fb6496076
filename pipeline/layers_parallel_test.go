package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
)

// chats is n turns of four people in six sessions of two namespaces that
// run side by side, so that a batch holds turns of several sessions (the
// offline extractor reads who "you" is off the batch): moves, so that
// facts are superseded; statements repeated, so that memories merge;
// tastes that change.
func chats(n int) []engram.Turn {
	people := []string{"Alice", "Bob", "Chen", "Dana"}
	cities := []string{"Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi"}
	foods := []string{"sushi", "pasta", "tacos"}
	lines := []func(i int) string{
		func(i int) string { return fmt.Sprintf("I live in %s now.", cities[(i/23)%len(cities)]) },
		func(i int) string { return fmt.Sprintf("I really like %s.", foods[(i/31)%len(foods)]) },
		func(i int) string { return fmt.Sprintf("I don't like %s anymore.", foods[(i/17)%len(foods)]) },
		func(i int) string {
			return "We decided to use Postgres for the billing service because it handles transactions well."
		},
		func(i int) string { return fmt.Sprintf("I'm going to visit %s next month.", cities[i%len(cities)]) },
		func(i int) string { return "Sounds good, thanks!" },
		func(i int) string {
			return fmt.Sprintf("Yesterday I went hiking with my sister Emma near %s.", cities[(i/7)%len(cities)])
		},
		func(i int) string { return "Did you finish the report? You said you would." },
		func(i int) string { return "My favourite book is Dune." },
	}
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	turns := make([]engram.Turn, n)
	for i := range turns {
		s := i % 6
		turns[i] = engram.Turn{ID: fmt.Sprintf("chat-%04d", i), Namespace: []string{"home", "work"}[s%2],
			Session: fmt.Sprintf("s%d-%d", s, i/60), Role: engram.RoleUser, Speaker: people[(i/6+s)%len(people)],
			TS: start.Add(time.Duration(i) * time.Minute), Content: lines[(i*5+i/6)%len(lines)](i)}
	}
	return turns
}

// watermarks is a palace that records where each store of the memory job
// moved its watermark, and what the stores did.
type watermarks struct {
	*palace.DB
	mu    sync.Mutex
	seqs  []int64
	total engram.MemoryResult
}

func (s *watermarks) PutMemories(ctx context.Context, worker string, mems []engram.Memory, throughSeq int64) (engram.MemoryResult, error) {
	res, err := s.DB.PutMemories(ctx, worker, mems, throughSeq)
	if err == nil {
		s.mu.Lock()
		s.seqs = append(s.seqs, throughSeq)
		s.total.Inserted += res.Inserted
		s.total.Merged += res.Merged
		s.total.Superseded += res.Superseded
		s.mu.Unlock()
	}
	return res, err
}

var errDown = errors.New("extractor down")

// batches is an extractor over the batches of a known archive: batch b
// (by its first turn) fails with errDown when b is fail, and, when
// reverse is set, the extraction of an even batch ends only once that of
// the batch after it has, so that a job storing the batches as their
// extractions end would store them out of archive order.
type batches struct {
	x       engram.Extractor
	batch   map[string]int // of each turn id
	n       int
	fail    int // -1: none
	reverse bool

	mu    sync.Mutex
	ended map[int]chan struct{}
}

func newBatches(turns []engram.Turn, size, fail int, reverse bool) *batches {
	x := &batches{x: &extract.NLPExtractor{}, batch: map[string]int{}, n: (len(turns) + size - 1) / size, fail: fail,
		reverse: reverse, ended: map[int]chan struct{}{}}
	for i, t := range turns {
		x.batch[t.ID] = i / size
	}
	return x
}

func (x *batches) endOf(b int) chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended[b] == nil {
		x.ended[b] = make(chan struct{})
	}
	return x.ended[b]
}

func (x *batches) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	b := x.batch[turns[0].ID]
	mems, err := x.x.Extract(ctx, turns)
	if x.reverse && (b%2 == 0 || b == x.fail) && b+1 < x.n {
		select {
		case <-x.endOf(b + 1):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	end := x.endOf(b)
	select {
	case <-end: // extracted before, in a run that stopped
	default:
		close(end)
	}
	if b == x.fail {
		return nil, errDown
	}
	return mems, err
}

// layerHome is a palace over a shared archive, in a home of its own for
// layertest.Dump.
type layerHome struct {
	dir   string
	store *watermarks
}

func newLayerHome(t *testing.T) *layerHome {
	t.Helper()
	h := &layerHome{dir: filepath.Join(t.TempDir(), "home")}
	if err := os.MkdirAll(h.dir, 0o700); err != nil {
		t.Fatal(err)
	}
	h.open(t)
	return h
}

func (h *layerHome) open(t *testing.T) {
	t.Helper()
	h.store = &watermarks{DB: mustOpenPalace(t, filepath.Join(h.dir, "palace.db"))}
}

// dump closes the palace, reads every derived row, and opens it again.
func (h *layerHome) dump(t *testing.T) []string {
	t.Helper()
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	rows := layertest.Dump(t, h.dir)
	seqs := h.store.seqs
	h.open(t)
	h.store.seqs = seqs
	return rows
}

func (h *layerHome) run(ctx context.Context, a engram.Archive, x engram.Extractor, parallel int) error {
	return (&pipeline.MemoryWorker{Archive: a, Extractor: x, Store: h.store, Parallel: parallel}).Run(ctx)
}

func sameRows(t *testing.T, what string, want, got []string) {
	t.Helper()
	if slices.Equal(want, got) {
		return
	}
	for i := range min(len(want), len(got)) {
		if want[i] != got[i] {
			t.Fatalf("%s: row %d of %d differs:\n  sequential: %s\n  parallel:   %s", what, i, len(want), want[i], got[i])
		}
	}
	t.Fatalf("%s: %d rows sequentially, %d in parallel", what, len(want), len(got))
}

func sameWatermarks(t *testing.T, want, got []int64) {
	t.Helper()
	if !slices.Equal(want, got) {
		t.Fatalf("the stores moved the watermark through %v in parallel, %v sequentially", got, want)
	}
	if !slices.IsSorted(got) {
		t.Fatalf("the watermark went back: %v", got)
	}
}

// TestMemoryWorkerParallelAsSequential: a memory job extracting batches
// four at a time, whose extractions end out of archive order, stores the
// same memories with the same ids and change numbers, merges and
// supersessions, and moves the watermark through the same seqs, as a job
// extracting one batch after the other.
func TestMemoryWorkerParallelAsSequential(t *testing.T) {
	ctx := waitCtx(t)
	const size = pipeline.DefaultLayerBatch
	turns := chats(400)
	a, err := archive.Open(filepath.Join(t.TempDir(), "archive"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := a.Append(ctx, turns); err != nil {
		t.Fatal(err)
	}

	seq := newLayerHome(t)
	if err := seq.run(ctx, a, &extract.NLPExtractor{}, 1); err != nil {
		t.Fatal(err)
	}
	if r := seq.store.total; r.Inserted == 0 || r.Merged == 0 || r.Superseded == 0 {
		t.Fatalf("the conversation makes %+v: too little for the order of the stores to matter", r)
	}
	par := newLayerHome(t)
	if err := par.run(ctx, a, newBatches(turns, size, -1, true), 4); err != nil {
		t.Fatal(err)
	}
	sameWatermarks(t, seq.store.seqs, par.store.seqs)
	sameRows(t, "palace", seq.dump(t), par.dump(t))
}

// TestMemoryWorkerParallelStopsAsSequential: when the extraction of a
// batch fails while later batches were extracted, the job stores none of
// them: its watermark and memories are those of a sequential job stopped
// at that batch, and the next run resumes from there to the same palace.
func TestMemoryWorkerParallelStopsAsSequential(t *testing.T) {
	ctx := waitCtx(t)
	const size, fail = pipeline.DefaultLayerBatch, 9
	turns := chats(300)
	a, err := archive.Open(filepath.Join(t.TempDir(), "archive"), archive.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if _, err := a.Append(ctx, turns); err != nil {
		t.Fatal(err)
	}

	seq, par := newLayerHome(t), newLayerHome(t)
	if err := seq.run(ctx, a, newBatches(turns, size, fail, false), 1); !errors.Is(err, errDown) {
		t.Fatalf("sequential run: %v, want %v", err, errDown)
	}
	x := newBatches(turns, size, fail, true)
	if err := par.run(ctx, a, x, 4); !errors.Is(err, errDown) || !strings.Contains(err.Error(), fmt.Sprintf("turns %d-%d", fail*size+1, (fail+1)*size)) {
		t.Fatalf("parallel run: %v, want %v naming the batch", err, errDown)
	}
	if got := par.store.seqs; len(got) != fail || got[fail-1] != int64(fail*size) {
		t.Fatalf("the parallel run stored through %v, want %d batches, the last through seq %d", got, fail, fail*size)
	}
	sameWatermarks(t, seq.store.seqs, par.store.seqs)
	sameRows(t, "palace after the failed batch", seq.dump(t), par.dump(t))

	if err := seq.run(ctx, a, &extract.NLPExtractor{}, 1); err != nil {
		t.Fatal(err)
	}
	if err := par.run(ctx, a, &extract.NLPExtractor{}, 4); err != nil {
		t.Fatal(err)
	}
	sameWatermarks(t, seq.store.seqs, par.store.seqs)
	sameRows(t, "palace after the next run", seq.dump(t), par.dump(t))
}
