package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine/archives"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/work"
	"github.com/engram-dev/engram/ollama"
	"github.com/engram-dev/engram/openai"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/scheduler"
)

// Engine is a home opened in this process: the archive (which takes the
// home's lock), the palace, the indexer between them, the vector side, the
// layer workers and the other scheduled jobs, the vaults, and the services
// on top. `engram serve` runs one; CLI commands open one when no server
// owns the home. Open it with Open, release it with Close.
type Engine struct {
	cfg      config.Config
	logger   *slog.Logger
	archive  archives.Store
	palace   palaceStore
	indexer  *pipeline.Indexer
	ingester *pipeline.Ingester
	// work runs the background work (the indexer's secondary steps, the
	// palace's merges and checkpoints, embedding, the layer jobs) as
	// tasks by priority, giving way to the client writes in flight and
	// leaving a core free for requests; redactions are its exclusive
	// sections.
	work   *work.Scheduler
	recall *recall.Service
	vec    vectorState
	sched  *scheduler.Scheduler // started by serve only

	extractor       engram.Extractor // nil: no derived layers
	extractBatch    int              // turns per extraction batch
	extractParallel int              // batches extracted at once (Config.ExtractParallel)

	scenesOnce sync.Once
	scenes     *pipeline.SceneWorker
	// memory gives back what a catch-up of the layer jobs left (memrelease.go).
	memory   memReleaser
	journal  correctionJournal  // the corrections journal
	follower *pipeline.Follower // serve only: scenes and unit vectors between the jobs' runs
	rewrites rewriteFollower    // the forgets of the other servers sharing the archive (team.go)
	// corrections follows the corrections of the other servers sharing
	// the journal (teamcorrect.go).
	corrections follower
}

var (
	_ engram.IngestService  = (*Engine)(nil)
	_ engram.RecallService  = (*Engine)(nil)
	_ engram.StatusService  = (*Engine)(nil)
	_ engram.ReembedService = (*Engine)(nil)
	_ engram.JobService     = (*Engine)(nil)
	_ engram.LayerService   = (*Engine)(nil)
	_ engram.VaultAdmin     = (*Engine)(nil)
	_ engram.VaultService   = (*Engine)(nil)
	_ engram.DoctorService  = (*Engine)(nil)
	_ engram.BackupService  = (*Engine)(nil)
	_ engram.CorrectService = (*Engine)(nil)
)

// testHooks are points where a test holds the engine to drive an
// interleaving (export_test.go sets them before Open).
var testHooks struct {
	index           func(pipeline.SplitIndex) pipeline.SplitIndex // wraps the palace the indexer writes
	redactStart     func()                                        // Redact has waited for the index
	redactRewritten func()                                        // Redact rewrote the archive, waits for the index again
	vectorLoad      func(ctx context.Context)                     // the embedded vector index is about to load in the background
}

// Open opens the home of cfg, creating it (0700) if needed, and catches the
// palace up with the archive. ELOCKED when another process holds the home;
// a *homedir.ForeignError (ECONFLICT), before anything is written, when it holds
// files engram did not write (homedir.Check).
// The scheduled jobs do not run until StartJobs; the vector side starts in
// the background when its embedder or Chroma is not up yet.
func Open(ctx context.Context, cfg config.Config, logger *slog.Logger) (_ *Engine, err error) {
	if err := homedir.Claim(cfg.Home, cfg.Version, logger); err != nil {
		return nil, err
	}
	e := &Engine{cfg: cfg, logger: logger, work: work.New(0)}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	e.archive, err = archives.Open(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	if e.palace, err = openPalace(ctx, cfg, palace.Options{Work: e.work, DeferSecondary: true}); err != nil {
		return nil, err
	}
	// The palace is a pipeline.SplitIndex: a POST waits for its turns'
	// keyword index, not for their session units and substring rows,
	// which follow in short transactions, tasks of e.work.
	var index pipeline.SplitIndex = e.palace
	if testHooks.index != nil {
		index = testHooks.index(index)
	}
	e.indexer = pipeline.NewSplitIndexer(e.archive, index)
	e.indexer.Work = e.work
	e.indexer.Logger = logger.With("component", "indexer")
	// A server answers while it catches up, as it does while the vector
	// index loads; a command waits for the index it is about to read.
	e.indexer.Background = cfg.BackgroundLoad
	if err := e.indexer.Open(ctx); err != nil {
		return nil, err
	}
	if err := e.finishForgets(ctx); err != nil {
		return nil, fmt.Errorf("finish forgets: %w", err)
	}
	if err := e.openJournal(ctx); err != nil {
		return nil, err
	}
	e.ingester = &pipeline.Ingester{Archive: e.archive, Indexer: e.indexer, Known: e.palace.TurnSeqs, Work: e.work}
	e.ingester.Acknowledge(e.archive.LastSeq()) // by the processes before
	if cfg.RedactSecrets {
		e.ingester.Filter = func(ts []engram.Turn) []engram.Turn { return redactSecrets(ts, time.Now().UTC()) }
	}
	e.recall = recall.NewService(e.palace)
	// Every acknowledged turn is searchable by keyword already, unless its
	// acknowledgement gave up waiting; the wait is for its session units
	// and substring rows, which deep recall weighs.
	e.recall.Sync = e.recallWait(e.indexer.Indexed, e.indexer.Wait)
	e.recall.Deep = cfg.Deep.Recall()
	if cfg.Extractor != config.ExtractorNone {
		e.recall.Layers = e.palace
		e.recall.LayerLag = e.layerLagText
	}
	e.recall.Docs = e.vaultStore()
	e.recall.Units = e.palace
	e.recall.Words = embedder.Words{}
	if e.recall.Triggers, err = cfg.TriggerMatcher(); err != nil {
		return nil, err
	}
	if err := e.openVectors(ctx); err != nil {
		return nil, err
	}
	if err := e.openExtractor(); err != nil {
		return nil, err
	}
	if e.sched, err = e.newScheduler(); err != nil {
		return nil, err
	}
	e.followRewrites()
	e.followCorrections()
	return e, nil
}

// Close stops the indexer and closes the palace and the archive (which
// fsyncs and releases the lock). It returns the first error.
func (e *Engine) Close() error {
	var errs []error
	e.rewrites.stop()
	e.corrections.stop()
	e.follower.Stop()
	if e.sched != nil {
		sctx, cancel := context.WithTimeout(context.Background(), ShutdownTimeout)
		errs = append(errs, e.sched.Stop(sctx))
		cancel()
	}
	e.closeVectors()
	if e.indexer != nil {
		errs = append(errs, e.indexer.Close())
	}
	if e.palace != nil {
		errs = append(errs, e.palace.Close())
	}
	if e.archive != nil {
		errs = append(errs, e.archive.Close())
	}
	return errors.Join(errs...)
}

// Health implements engram.StatusService.
func (e *Engine) Health(ctx context.Context) engram.Health {
	h := engram.Health{
		Status:     "ok",
		Version:    e.cfg.Version,
		ArchiveSeq: e.archive.LastSeq(),
		IndexedSeq: e.indexer.Indexed(),
		IndexLag:   e.indexer.Lag(),
	}
	if err := e.indexer.Err(); err != nil {
		h.Status = "degraded"
		h.Problems = append(h.Problems, "indexing failed, retrying: "+err.Error())
	}
	// A skipped duplicate id is counted but no problem: the palace holds
	// the turn. A skipped turn it holds no copy of is missing from recall.
	if sk, err := e.palace.TurnSkips(ctx, 1); err != nil {
		h.Problems = append(h.Problems, "the skipped turns could not be read: "+engram.ErrorText(err))
	} else if h.SkippedTurns = sk.Count; sk.Lost > 0 {
		h.Problems = append(h.Problems, fmt.Sprintf("%d archived %s not indexed and missing from recall (latest: %s); see engram doctor",
			sk.Lost, noun(int(sk.Lost), "turn is", "turns are"), sk.Latest[0]))
	}
	if lag, err := e.LayerLag(ctx); err != nil {
		h.Problems = append(h.Problems, "the layers' watermarks could not be read: "+engram.ErrorText(err))
	} else {
		h.LayerLag = lag // catching up is no problem: the jobs do it
	}
	vh, problems := e.vectorHealth(ctx)
	h.Vectors = vh
	h.Indexes = e.indexHealth()
	h.Problems = append(h.Problems, problems...)
	h.Problems = append(h.Problems, e.jobsHealth()...)
	if n := e.archive.Corrupt(); n > 0 {
		h.Problems = append(h.Problems, fmt.Sprintf("the archive has %d damaged %s, skipped and kept in place; see engram doctor",
			n, noun(int(n), "line", "lines")))
	}
	if len(h.Problems) > 0 {
		h.Status = "degraded"
	}
	return h
}

// Stats implements engram.StatusService.
func (e *Engine) Stats(ctx context.Context) (engram.Stats, error) {
	st, err := e.palace.Stats(ctx)
	if err != nil {
		return st, err
	}
	as, err := e.archive.Stats(ctx)
	if err != nil {
		return st, err
	}
	st.Archive = engram.ArchiveStats{
		Turns:    as.Turns,
		LastSeq:  e.archive.LastSeq(),
		Files:    as.Files,
		Bytes:    as.Bytes,
		Corrupt:  as.CorruptLines,
		IndexLag: e.indexer.Lag(),

		Forgotten: as.Forgotten,
		Redacted:  as.Redacted,
		Secrets:   as.Secrets,
	}
	return st, nil
}

// Config returns the configuration the engine was opened with.
func (e *Engine) Config() config.Config { return e.cfg }

// LastSeq returns the sequence number of the last archived turn.
func (e *Engine) LastSeq() int64 { return e.archive.LastSeq() }

// HasLayers reports whether the engine derives the layers (L1-L4): it has
// an extractor.
func (e *Engine) HasLayers() bool { return e.extractor != nil }

// Memories implements engram.LayerService.
func (e *Engine) Memories(ctx context.Context, q engram.MemoryQuery) ([]engram.Memory, error) {
	return e.palace.Memories(ctx, q)
}

// Scenes implements engram.LayerService.
func (e *Engine) Scenes(ctx context.Context, q engram.SceneQuery) ([]engram.Scene, error) {
	return e.palace.Scenes(ctx, q)
}

// Persona implements engram.LayerService.
func (e *Engine) Persona(ctx context.Context, namespace, speaker string) ([]engram.Persona, error) {
	return e.palace.Persona(ctx, namespace, speaker)
}

// Graph implements engram.LayerService.
func (e *Engine) Graph(ctx context.Context, q engram.GraphQuery) (engram.GraphResult, error) {
	return e.palace.Graph(ctx, q)
}

// Docs implements engram.VaultService.
func (e *Engine) Docs(ctx context.Context, vault string) ([]engram.VaultDoc, error) {
	return e.vaultStore().Docs(ctx, vault)
}

// Ingest implements engram.IngestService.
func (e *Engine) Ingest(ctx context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	return e.ingester.Ingest(ctx, turns)
}

// redactSecrets returns turns with the secrets of their content, speaker
// and meta replaced (engram.RedactTurnSecrets), each changed turn carrying
// its Redaction; turns itself when none holds one.
func redactSecrets(turns []engram.Turn, now time.Time) []engram.Turn {
	var out []engram.Turn
	for i, t := range turns {
		red, rules := engram.RedactTurnSecrets(t)
		if rules == nil {
			continue
		}
		if out == nil {
			out = slices.Clone(turns)
		}
		spans := 0
		for _, n := range rules {
			spans += int(n)
		}
		red.Redacted = &engram.Redaction{At: now, Spans: spans, Reason: "ingest filter", Rules: rules}
		out[i] = red
	}
	if out == nil {
		return turns
	}
	return out
}

// Recall implements engram.RecallService.
func (e *Engine) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	return e.recall.Recall(ctx, req)
}

// openExtractor sets up the L1 extractor of the configuration. It sends
// nothing: an Ollama server that is down only makes the memory job fail
// (and retry), never the engine.
func (e *Engine) openExtractor() error {
	e.extractParallel = e.cfg.ExtractParallel
	switch e.cfg.Extractor {
	case config.ExtractorNLP:
		e.extractor, e.extractBatch = &extract.NLPExtractor{Pace: work.Pace{S: e.work, Class: work.Derive}}, pipeline.DefaultLayerBatch
	case config.ExtractorRules:
		e.extractor, e.extractBatch = extract.RulesExtractor{Pace: work.Pace{S: e.work, Class: work.Derive}}, pipeline.DefaultLayerBatch
	case config.ExtractorOllama:
		x, err := ollama.NewExtractor(ollama.ExtractorConfig{Config: ollama.Config{Host: e.cfg.OllamaHost, Model: e.cfg.OllamaChatModel}})
		if err != nil {
			return err
		}
		// A chat server may answer one prompt at a time, and a prompt
		// queued behind others may run out of its time.
		e.extractor, e.extractBatch, e.extractParallel = x, ollama.DefaultBatchTurns, cmp.Or(e.cfg.ExtractParallel, 1)
	case config.ExtractorOpenAI:
		x, err := openai.NewExtractor(openai.ExtractorConfig{Config: e.cfg.OpenAIConfig(e.cfg.OpenAIChatModel)})
		if err != nil {
			return err
		}
		e.extractor, e.extractBatch, e.extractParallel = x, x.BatchTurns(), cmp.Or(e.cfg.ExtractParallel, 1)
	}
	return nil
}

// ListTurns implements engram.BrowseService.
func (e *Engine) ListTurns(ctx context.Context, q engram.TurnQuery) ([]engram.Turn, error) {
	return e.palace.ListTurns(ctx, q)
}

// Entities implements engram.BrowseService.
func (e *Engine) Entities(ctx context.Context, q engram.EntityQuery) ([]engram.EntityCount, error) {
	return e.palace.Entities(ctx, q)
}
