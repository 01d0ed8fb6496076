package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/work"
)

// Names of the layer workers: their watermarks in the palace and their
// scheduled jobs.
const (
	WorkerMemories = "l1-memories"
	WorkerScenes   = "l2-scenes"
	WorkerPersona  = "l3-persona"
	WorkerGraph    = "l4-graph"
)

// Batch sizes of the layer workers.
const (
	DefaultLayerBatch  = 16  // turns per transaction for the rules extractor and scenes: short, so a job never holds the writer long
	DefaultDeriveBatch = 200 // memories per transaction for persona and graph
)

// errStale stops a run whose guarded store its Work refused: an exclusive
// section (a forget, a redaction, a correction) ended since the run began
// to read, and what it read may hold what the section removed. The run
// reads again from its watermark.
var errStale = errors.New("turns rewritten since they were read")

// again runs run until it ends otherwise than with errStale.
func again(run func() error) error {
	for {
		if err := run(); !errors.Is(err, errStale) {
			return err
		}
	}
}

// errCaughtUp stops a stream once a worker passed the archive's end as it
// was when the run started, so that a run under steady ingest ends.
var errCaughtUp = errors.New("caught up")

// runArchive streams the archive after the worker's watermark in batches of
// size, up to the archive's last seq at the start (or bound's, if lower),
// and calls fn per batch.
func runArchive(ctx context.Context, a engram.Archive, store engram.LayerStore, worker string, size int,
	bound func(context.Context) (int64, error), fn func([]engram.Turn) error) error {
	from, err := store.WorkerSeq(ctx, worker)
	if err != nil {
		return err
	}
	end := a.LastSeq()
	if bound != nil {
		b, err := bound(ctx)
		if err != nil {
			return err
		}
		if b < end {
			if b <= from {
				return nil
			}
			end = b
		}
	}
	if from > end {
		return engram.Errorf(engram.ECONFLICT,
			"%s is at seq %d but the archive ends at seq %d; run `engram rebuild` to rebuild the layers from the archive", worker, from, end)
	}
	err = streamBatches(ctx, a, from, size, func(batch []engram.Turn) error {
		if batch[0].Seq > end {
			return errCaughtUp
		}
		if err := fn(batch); err != nil {
			return err
		}
		if batch[len(batch)-1].Seq >= end {
			return errCaughtUp
		}
		return nil
	})
	if errors.Is(err, errCaughtUp) {
		return nil
	}
	return err
}

// MemoryWorker extracts L1 memories from the archived turns after its
// watermark with an Extractor, one batch per transaction. Run it as a
// scheduled job; a run ends once it has caught up with the archive.
type MemoryWorker struct {
	Archive   engram.Archive
	Extractor engram.Extractor
	Store     engram.LayerStore
	// BatchSize is the number of turns extracted and stored at once; for an
	// LLM extractor, one prompt's worth, so that a batch it cannot read
	// costs no more than that.
	BatchSize int
	// Parallel bounds the batches extracted at once; 0 means Work's
	// workers, or as many as Work would have (one fewer than GOMAXPROCS,
	// at least one): the stores take a core of their own, one after the
	// other, and a batch extracted long before its store is only memory
	// held. An extractor keeps nothing from
	// one batch to the next, so the batches of a run are independent:
	// only their stores, in archive order, depend on each other.
	Parallel int
	Logger   *slog.Logger
	// Work, if set, runs each batch's store as a guarded task of class
	// Derive: one that a forget, a redaction or a correction (an
	// exclusive section) ending since the run began to read refuses, and
	// the run reads again.
	Work *work.Scheduler
}

// Run extracts memories until the worker has caught up with the archive.
// When extraction fails with engram.ErrUnusableOutput, the memories it did
// return are stored and the batch is recorded as skipped (Store.Skip); any
// other error ends the run with the watermark at the last stored batch, so
// the next run resumes there.
//
// Up to Parallel batches are extracted at once while the batches before
// them are stored, in archive order, one store at a time: the memories,
// their ids and change numbers, and the watermark after each store are
// those of extracting one batch after the other, and a run that stops
// leaves the watermark at the end of the last batch stored. Each store is
// a task of Work, as are the offline extractor's parses
// (NLPExtractor.Pace), so that the jobs leave a core to the requests.
func (w *MemoryWorker) Run(ctx context.Context) error {
	logger := orDefault(w.Logger)
	var total engram.MemoryResult
	err := again(func() error { return w.run(ctx, logger, &total) })
	if total != (engram.MemoryResult{}) {
		logger.Info("memories extracted", "inserted", total.Inserted, "merged", total.Merged, "superseded", total.Superseded)
	}
	return err
}

// parallel is how many batches a run extracts at once.
func (w *MemoryWorker) parallel() int {
	if w.Parallel > 0 {
		return w.Parallel
	}
	if n := w.Work.Workers(); n > 0 {
		return n
	}
	return max(runtime.GOMAXPROCS(0)-1, 1)
}

// extraction is one batch's extraction, under way until done is closed.
type extraction struct {
	first, last int64
	mems        []engram.Memory
	unusable    error // what made part of the batch unreadable
	err         error
	done        chan struct{}
}

// run is one pass of Run: one read of the archive from the watermark. The
// archive is read here, each batch is extracted in a goroutine of its own
// and queued in archive order, and write stores the queue; once it fails,
// the extractions under way are cancelled and what they made is dropped.
func (w *MemoryWorker) run(ctx context.Context, logger *slog.Logger, total *engram.MemoryResult) error {
	mark := w.Work.Epoch() // before the archive is read
	n := w.parallel()
	xctx, cancel := context.WithCancel(ctx)
	defer cancel()
	slots := make(chan struct{}, n)    // extractions under way
	queue := make(chan *extraction, n) // in archive order, for write
	written := make(chan error, 1)
	go func() {
		err := w.write(ctx, mark, logger, queue, total)
		cancel() // no more stores: the extractions under way are wasted
		written <- err
	}()
	var extracting sync.WaitGroup
	err := runArchive(xctx, w.Archive, w.Store, WorkerMemories, batchOr(w.BatchSize, DefaultLayerBatch), nil, func(batch []engram.Turn) error {
		x := &extraction{first: batch[0].Seq, last: batch[len(batch)-1].Seq, done: make(chan struct{})}
		// The stream reuses batch; tombstones say nothing, and an
		// unstorable time is skipped.
		live := extractable(engram.IndexableTurns(batch))
		select {
		case slots <- struct{}{}:
		case <-xctx.Done():
			return xctx.Err()
		}
		extracting.Add(1)
		go func() {
			defer extracting.Done()
			defer func() { <-slots }()
			defer close(x.done)
			if len(live) > 0 {
				x.mems, x.err = w.Extractor.Extract(xctx, live)
				storable(x.mems)
			}
			if errors.Is(x.err, engram.ErrUnusableOutput) {
				// Part of the batch could not be read: keep what could,
				// and record the rest as skipped once the memories are
				// stored.
				x.unusable, x.err = x.err, nil
			}
		}()
		select {
		case queue <- x:
			return nil
		case <-xctx.Done():
			return xctx.Err()
		}
	})
	close(queue)
	werr := <-written
	extracting.Wait()
	if werr != nil {
		return werr
	}
	return err
}

// extractable copies turns for an extractor, without the NUL bytes of
// their contents: a NUL says nothing, and a name or key an extractor made
// of one is text PostgreSQL refuses (a palace in it would fail the batch
// again and again). The archive and the palace keep the turns as sent.
func extractable(turns []engram.Turn) []engram.Turn {
	out := slices.Clone(turns)
	for i := range out {
		out[i].Content = strings.ReplaceAll(out[i].Content, "\x00", "")
	}
	return out
}

// Bounds of what extraction writes, past which it is cut (a memory's
// text and rationale) or left out (a name: a subject, an entity, a part of
// a relation): a memory is a summary that cites its turns, which keep
// every word, and a "name" of hundreds of bytes names nothing. They keep
// the keys made of a memory (its near-duplicate key, entity and facet
// keys) within what a database index takes (PostgreSQL's b-tree rows end
// at 2,704 bytes; a row it refuses would fail the batch at every run).
const (
	maxMemoryText = 1000
	maxNameBytes  = 200
)

// storable makes what extraction wrote in mems storable: without NUL
// bytes (a model may write one, "\u0000" in its JSON, even where the
// turns held none, and PostgreSQL's text refuses them), the text and
// rationale cut to maxMemoryText at a word, names over maxNameBytes left
// out (a relation with one is dropped, the memory kept).
func storable(mems []engram.Memory) {
	clean := func(s string) string { return strings.ReplaceAll(s, "\x00", "") }
	name := func(s string) (string, bool) {
		s = clean(s)
		return s, len(s) <= maxNameBytes
	}
	for i := range mems {
		m := &mems[i]
		m.Text, m.Rationale, m.Type = cutText(clean(m.Text)), cutText(clean(m.Rationale)), clean(m.Type)
		if s, ok := name(m.Subject); ok {
			m.Subject = s
		} else {
			m.Subject = ""
		}
		ents := m.Entities[:0]
		for _, e := range m.Entities {
			if s, ok := name(e); ok {
				ents = append(ents, s)
			}
		}
		m.Entities = ents
		if r := m.Relation; r != nil {
			var ok [3]bool
			r.Subject, ok[0] = name(r.Subject)
			r.Predicate, ok[1] = name(r.Predicate)
			r.Object, ok[2] = name(r.Object)
			if !ok[0] || !ok[1] || !ok[2] {
				m.Relation = nil
			}
		}
	}
}

// cutText cuts s to at most maxMemoryText bytes, at the last space before
// the bound when there is one, and never inside a character.
func cutText(s string) string {
	if len(s) <= maxMemoryText {
		return s
	}
	cut := maxMemoryText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > 0 {
		cut = sp
	}
	return s[:cut]
}

// write stores the extractions of queue in order, each once it is done,
// until the queue ends or a store or an extraction fails.
func (w *MemoryWorker) write(ctx context.Context, mark uint64, logger *slog.Logger, queue <-chan *extraction, total *engram.MemoryResult) error {
	for x := range queue {
		<-x.done
		if x.err != nil {
			return fmt.Errorf("extract turns %d-%d: %w", x.first, x.last, x.err)
		}
		ok, err := w.Work.DoSince(ctx, work.Derive, mark, func() error {
			return w.store(ctx, logger, x.mems, x.first, x.last, x.unusable, total)
		})
		if err != nil {
			return err
		}
		if !ok {
			return errStale
		}
	}
	return nil
}

// store writes the memories of the batch of turns first to last, moves the
// watermark to last, records the batch as skipped when part of it was
// unusable, and adds what happened to total.
func (w *MemoryWorker) store(ctx context.Context, logger *slog.Logger, mems []engram.Memory, first, last int64, unusable error, total *engram.MemoryResult) error {
	res, err := w.Store.PutMemories(ctx, WorkerMemories, mems, last)
	if err != nil {
		return err
	}
	if unusable != nil {
		logger.Warn("skipped turns the extractor cannot read", "from_seq", first, "to_seq", last, "err", unusable)
		if err := w.Store.Skip(ctx, WorkerMemories, first, last, unusable.Error()); err != nil {
			return err
		}
	}
	total.Inserted += res.Inserted
	total.Merged += res.Merged
	total.Superseded += res.Superseded
	return nil
}

// SceneWorker groups the archived turns after its watermark into L2 scenes
// (SceneConfig), one batch per transaction. The open scene of each session
// is kept as a draft, so a scene grows across batches and runs.
type SceneWorker struct {
	Archive   engram.Archive
	Store     engram.LayerStore
	Config    SceneConfig
	BatchSize int
	// Indexed, if set, bounds a run to the turns the turn index holds (its
	// watermark): a scene's retrieval unit is made of stored turns.
	Indexed func(context.Context) (int64, error)
	// Work, if set, runs each batch as a guarded task of class Derive (see
	// MemoryWorker.Work).
	Work *work.Scheduler
}

// Run builds scenes until the worker has caught up with the archive (or
// with Indexed). With Work, it is the one run of the scenes (the job, or
// the follower of serve: work.Scheduler.Serial).
func (w *SceneWorker) Run(ctx context.Context) error {
	return w.Work.Serial(ctx, WorkerScenes, func() error { return w.run(ctx) })
}

func (w *SceneWorker) run(ctx context.Context) error {
	return again(func() error {
		mark := w.Work.Epoch() // before the archive is read
		return runArchive(ctx, w.Archive, w.Store, WorkerScenes, batchOr(w.BatchSize, DefaultLayerBatch), w.Indexed, func(batch []engram.Turn) error {
			ok, err := w.Work.DoSince(ctx, work.Derive, mark, func() error { return w.scenes(ctx, batch) })
			if err == nil && !ok {
				err = errStale
			}
			return err
		})
	})
}

// scenes adds a batch of turns to their sessions' scenes and stores them.
func (w *SceneWorker) scenes(ctx context.Context, batch []engram.Turn) error {
	var keys []engram.SessionKey
	seen := map[engram.SessionKey]bool{}
	last := batch[len(batch)-1].Seq
	batch = engram.IndexableTurns(batch) // tombstones, and times a scene cannot hold
	for _, t := range batch {
		k := engram.SessionKey{Namespace: t.Namespace, Session: t.Session}
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	stored, err := w.Store.OpenScenes(ctx, keys)
	if err != nil {
		return err
	}
	open := make(map[engram.SessionKey]*SceneDraft, len(stored))
	for k, raw := range stored {
		d := new(SceneDraft)
		if err := json.Unmarshal(raw, d); err != nil {
			return fmt.Errorf("open scene of session %q: %w", k.Session, err)
		}
		open[k] = d
	}
	// Scenes in the order they were touched; a closed draft is written
	// without its state.
	var order []*SceneDraft
	closed := map[*SceneDraft]bool{}
	touched := map[*SceneDraft]bool{}
	for _, t := range batch {
		k := engram.SessionKey{Namespace: t.Namespace, Session: t.Session}
		prev := open[k]
		cur, started := w.Config.AddTurn(prev, t)
		if started && prev != nil && len(prev.Scene.Turns) > 0 {
			closed[prev] = true
			if !touched[prev] {
				touched[prev] = true
				order = append(order, prev)
			}
		}
		if !touched[cur] {
			touched[cur] = true
			order = append(order, cur)
		}
		open[k] = cur
	}
	writes := make([]engram.SceneWrite, 0, len(order))
	for _, d := range order {
		wr := engram.SceneWrite{Scene: d.Scene}
		if !closed[d] {
			raw, err := json.Marshal(d)
			if err != nil {
				return err
			}
			wr.Draft = raw
		}
		writes = append(writes, wr)
	}
	return w.Store.PutScenes(ctx, WorkerScenes, writes, last)
}

// runMemories feeds what derive makes of each memory changed after the
// worker's watermark to apply, in batches, each with the change number it
// reaches.
func runMemories[T any](ctx context.Context, store engram.LayerStore, worker string, size int, s *work.Scheduler,
	derive func(engram.Memory) (T, bool), apply func(context.Context, string, []T, int64) error) error {
	size = batchOr(size, DefaultDeriveBatch)
	for {
		var n int
		// The watermark and the memories are read in the task, never
		// beside a forget or a correction (which may fold them again).
		err := s.Guarded(ctx, work.Derive, func() error {
			from, err := store.WorkerSeq(ctx, worker)
			if err != nil {
				return err
			}
			mems, err := store.MemoriesSince(ctx, from, size)
			if n = len(mems); err != nil || n == 0 {
				return err
			}
			through := mems[n-1].Seq
			var out []T
			for _, m := range mems {
				if v, ok := derive(m); ok {
					out = append(out, v)
				}
			}
			return apply(ctx, worker, out, through)
		})
		if err != nil || n < size {
			return err
		}
	}
}

// GraphWorker adds the relations of L1 memories to the L4 knowledge graph.
type GraphWorker struct {
	Store     engram.LayerStore
	BatchSize int
	Work      *work.Scheduler // nil: run at once; each batch is a guarded task of class Derive
}

// Run adds the triples of every memory changed since its last run.
func (w *GraphWorker) Run(ctx context.Context) error {
	return runMemories(ctx, w.Store, WorkerGraph, w.BatchSize, w.Work, extract.MemoryTriple, w.Store.ApplyTriples)
}

// PersonaWorker folds the L1 memories about speakers into their L3
// personas.
type PersonaWorker struct {
	Store     engram.LayerStore
	BatchSize int
	Work      *work.Scheduler // nil: run at once; each batch is a guarded task of class Derive
}

// Run folds every memory changed since its last run.
func (w *PersonaWorker) Run(ctx context.Context) error {
	return runMemories(ctx, w.Store, WorkerPersona, w.BatchSize, w.Work, extract.MemoryFacet, w.Store.ApplyFacets)
}

func batchOr(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func orDefault(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
