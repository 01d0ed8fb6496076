package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/ollama"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/scheduler"
)

// Paths inside the home.
const (
	archiveDir = "archive"
	palaceFile = "palace.db"
)

// engine is a home opened in this process: the archive (which takes the
// home's lock), the palace, the indexer between them and the services on top.
// `engram serve` runs one; CLI commands open one when no server owns the home.
type engine struct {
	cfg      Config
	logger   *slog.Logger
	archive  *archive.Archive
	palace   *palace.DB
	indexer  *pipeline.Indexer
	ingester *pipeline.Ingester
	recall   *recall.Service
	vec      vectorState
	sched    *scheduler.Scheduler // started by serve only

	extractor    engram.Extractor // nil: no derived layers
	extractBatch int              // turns per extraction batch

	vaultMu sync.Mutex // one vault sync at a time

	scenesOnce sync.Once
	scenes     *pipeline.SceneWorker
	layerVecMu sync.Mutex         // one layer-vectors run at a time: the job and the follower
	follower   *pipeline.Follower // serve only: scenes and unit vectors between the jobs' runs
}

var (
	_ engram.StatusService  = (*engine)(nil)
	_ engram.ReembedService = (*engine)(nil)
	_ engram.JobService     = (*engine)(nil)
)

// openEngine opens the home, creating it (0700) if needed, and catches the
// palace up with the archive.
func openEngine(ctx context.Context, cfg Config, logger *slog.Logger) (_ *engine, err error) {
	if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
		return nil, fmt.Errorf("create home: %w", err)
	}
	e := &engine{cfg: cfg, logger: logger}
	defer func() {
		if err != nil {
			e.Close()
		}
	}()
	e.archive, err = archive.Open(filepath.Join(cfg.Home, archiveDir), archive.Options{Logger: logger.With("component", "archive")})
	if err != nil {
		return nil, err
	}
	e.palace, err = palace.Open(filepath.Join(cfg.Home, palaceFile), palace.Options{})
	if err != nil {
		return nil, fmt.Errorf("open palace: %w", err)
	}
	e.indexer = pipeline.NewIndexer(e.archive, e.palace)
	e.indexer.Logger = logger.With("component", "indexer")
	if err := e.indexer.Open(ctx); err != nil {
		return nil, err
	}
	e.ingester = &pipeline.Ingester{Archive: e.archive, Indexer: e.indexer}
	e.recall = recall.NewService(e.palace)
	e.recall.Sync = e.indexer.WaitCurrent
	e.recall.Deep = cfg.Deep.config()
	if cfg.Extractor != extractorNone {
		e.recall.Layers = e.palace
	}
	e.recall.Docs = e.palace
	e.recall.Units = e.palace
	if e.recall.Triggers, err = cfg.triggerMatcher(); err != nil {
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
	return e, nil
}

// Close stops the indexer and closes the palace and the archive (which
// fsyncs and releases the lock). It returns the first error.
func (e *engine) Close() error {
	var errs []error
	e.follower.Stop()
	if e.sched != nil {
		sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
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
func (e *engine) Health(ctx context.Context) engram.Health {
	h := engram.Health{
		Status:     "ok",
		Version:    versionString(),
		ArchiveSeq: e.archive.LastSeq(),
		IndexedSeq: e.indexer.Indexed(),
		IndexLag:   e.indexer.Lag(),
	}
	if err := e.indexer.Err(); err != nil {
		h.Status = "degraded"
		h.Problems = append(h.Problems, "indexing failed, retrying: "+err.Error())
	}
	vh, problems := e.vectorHealth()
	h.Vectors = vh
	h.Problems = append(h.Problems, problems...)
	h.Problems = append(h.Problems, e.jobsHealth()...)
	if len(h.Problems) > 0 {
		h.Status = "degraded"
	}
	if st := e.archive.Stats(); st.CorruptLines > 0 {
		h.Problems = append(h.Problems, fmt.Sprintf("the archive has %d corrupt lines; they are skipped and kept in place", st.CorruptLines))
	}
	return h
}

// Stats implements engram.StatusService.
func (e *engine) Stats(ctx context.Context) (engram.Stats, error) {
	st, err := e.palace.Stats(ctx)
	if err != nil {
		return st, err
	}
	as := e.archive.Stats()
	st.Archive = engram.ArchiveStats{
		Turns:    as.Turns,
		LastSeq:  e.archive.LastSeq(),
		Files:    as.Files,
		Bytes:    as.Bytes,
		Corrupt:  as.CorruptLines,
		IndexLag: e.indexer.Lag(),
	}
	return st, nil
}

// Ingest implements engram.IngestService.
func (e *engine) Ingest(ctx context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	return e.ingester.Ingest(ctx, turns)
}

// Recall implements engram.RecallService.
func (e *engine) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	return e.recall.Recall(ctx, req)
}

// openExtractor sets up the L1 extractor of the configuration. It sends
// nothing: an Ollama server that is down only makes the memory job fail
// (and retry), never the engine.
func (e *engine) openExtractor() error {
	switch e.cfg.Extractor {
	case extractorRules:
		e.extractor, e.extractBatch = pipeline.RulesExtractor{}, pipeline.DefaultLayerBatch
	case extractorOllama:
		x, err := ollama.NewExtractor(ollama.ExtractorConfig{Config: ollama.Config{Host: e.cfg.OllamaHost, Model: e.cfg.OllamaChatModel}})
		if err != nil {
			return err
		}
		e.extractor, e.extractBatch = x, ollama.DefaultBatchTurns
	}
	return nil
}
