package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/pipeline"
)

// ScaleOptions configure `engram bench scale`.
type ScaleOptions struct {
	Turns      int      // turns to ingest before the measurements
	Namespaces int      // namespaces the turns are spread over
	Batch      int      // turns per POST /v1/turns while ingesting
	Posts      int      // single-turn POSTs measured idle
	Questions  int      // recall questions per mode
	Modes      []string // recall modes; every mode the server knows if empty
	Keep       string   // keep the home here
	NoRebuild  bool     // skip timing `engram rebuild`
	Seed       uint64
	// CPUProfile and Trace, if set, are files that receive a CPU profile
	// and an execution trace (runtime/trace) of steps 2 and 3, the
	// measured writes, idle and while the layer jobs catch up: where a
	// POST waits. In the trace each single-turn POST, as its client sees
	// it, is the region "bench.post", and each timed batch (the one that
	// waits for the index) "bench.batch"; the server's regions are named in
	// pipeline.Ingester.Ingest and palace.DB.Update.
	CPUProfile string
	Trace      string
	// MemProfile, if set, receives a heap profile taken after catch-up,
	// after a GC: what the live heap holds; MemProfile+".peak" one taken
	// while the layer jobs ran, at the largest live heap seen then.
	MemProfile string
}

// ScaleReport is what `engram bench scale` measured.
type ScaleReport struct {
	Version    string `json:"version"`
	Turns      int    `json:"turns"`
	Namespaces int    `json:"namespaces"`
	CPUs       int    `json:"cpus"`

	// Ingest: the turns in batches over HTTP, to acknowledged (archived
	// and fsync'd, indexed for keyword recall); then until every turn has
	// its vector.
	IngestSeconds     float64 `json:"ingest_seconds"`
	IngestTurnsPerSec float64 `json:"ingest_turns_per_s"`
	VectorSeconds     float64 `json:"vectors_seconds"` // after the last acknowledgement

	Idle      writeReport `json:"idle"`      // no job running
	UnderJobs writeReport `json:"underjobs"` // while every layer job catches up (as many writes as idle, or until they end)
	// JobsSeconds is how long the layer jobs took to catch up, one after
	// another, with the writes above going on.
	JobsSeconds float64 `json:"jobs_seconds"`
	Memories    int64   `json:"memories"`
	Scenes      int64   `json:"scenes"`
	Facts       int64   `json:"facts"`

	// Memory of the process (server and the benchmark's client), from
	// /proc/self/status: after ingest, the peak while the jobs caught up,
	// after catch-up.
	RSSAfterIngestMB float64 `json:"rss_after_ingest_mb"`
	RSSPeakJobsMB    float64 `json:"rss_peak_jobs_mb"`
	RSSAfterJobsMB   float64 `json:"rss_after_jobs_mb"`
	GoHeapMB         float64 `json:"go_heap_mb"` // live Go heap after a GC, after catch-up
	// Where the RSS after catch-up is, read before that GC: the Go
	// runtime's memory not returned to the system (heap in use and idle,
	// stacks, its own structures), and the anonymous and file-backed
	// parts of the RSS (/proc/self/status RssAnon, RssFile).
	GoRetainedMB float64 `json:"go_retained_mb"`
	RSSAnonMB    float64 `json:"rss_anon_mb"`
	RSSFileMB    float64 `json:"rss_file_mb"`
	// While and after the recall questions: the keyword indexes of the
	// units, scenes and memories catch up at the first searches after the
	// jobs, so the memory a serving process settles at is the figure
	// after recall (the RSS, then the live heap after a GC).
	RSSPeakRecallMB     float64 `json:"rss_peak_recall_mb"`
	RSSAfterRecallMB    float64 `json:"rss_after_recall_mb"`
	GoHeapAfterRecallMB float64 `json:"go_heap_after_recall_mb"`
	// The RSS after recall, anonymous and file-backed: the pages of the
	// palace file the readers map count as the process's once read,
	// though the kernel's page cache holds them either way.
	RSSAnonAfterRecallMB float64 `json:"rss_anon_after_recall_mb"`
	RSSFileAfterRecallMB float64 `json:"rss_file_after_recall_mb"`
	// The CPU the process used from the start of ingest to the end of
	// catch-up (getrusage), and the garbage collector's part of it (the
	// runtime's estimate): what a lower GC goal costs.
	CPUSeconds   float64 `json:"cpu_seconds"`
	GCCPUSeconds float64 `json:"gc_cpu_seconds"`

	Recall []scaleRecall `json:"recall"`

	HomeBytes    int64            `json:"home_bytes"`
	BytesPerTurn float64          `json:"bytes_per_turn"`
	HomeParts    map[string]int64 `json:"home_parts"` // bytes by top-level file or folder

	RebuildSeconds float64 `json:"rebuild_seconds,omitempty"`
}

// writeReport is single-turn POST latency and batched ingest throughput.
type writeReport struct {
	Posts         int     `json:"posts"`
	PostP50MS     float64 `json:"post_p50_ms"`
	PostP99MS     float64 `json:"post_p99_ms"`
	PostMaxMS     float64 `json:"post_max_ms"`
	Batches       int     `json:"batches"`
	BatchTurnsSec float64 `json:"batch_turns_per_s"`
	Turns         int     `json:"turns"` // written in all: the single POSTs and both kinds of batch
	// The same batches again with ?wait=archive: acknowledged once
	// archived (ArchiveAckTurnsSec), and searchable once the index has
	// caught up behind them (ArchiveIndexedTurnsSec, from the POST to an
	// index lag of 0 in GET /v1/health, polled every 10 ms).
	ArchiveAckTurnsSec     float64 `json:"archive_ack_turns_per_s"`
	ArchiveIndexedTurnsSec float64 `json:"archive_indexed_turns_per_s"`
}

type scaleRecall struct {
	Mode    string        `json:"mode"`
	Latency latencyReport `json:"latency"`
	// Found is the share of questions whose turn (the one the question was
	// made from) is among the top 10: a check that the answers are real.
	Found float64 `json:"found_at_10"`
}

// Check refuses counts below 1 and a batch over the server's limit, with a
// *UsageError naming the flag.
func (o ScaleOptions) Check() error {
	return checkCounts(o.Batch, flagCount{"turns", o.Turns}, flagCount{"namespaces", o.Namespaces},
		flagCount{"batch", o.Batch}, flagCount{"posts", o.Posts}, flagCount{"questions", o.Questions})
}

// flagCount is a count a flag sets, by the flag's name.
type flagCount struct {
	name string
	v    int
}

// checkCounts refuses the first count below 1, then a batch over the
// server's limit, with a *UsageError naming the flag.
func checkCounts(batch int, counts ...flagCount) error {
	for _, f := range counts {
		if f.v < 1 {
			return &UsageError{Msg: fmt.Sprintf("--%s must be at least 1, got %d", f.name, f.v)}
		}
	}
	if batch > engram.DefaultMaxBatch {
		return &UsageError{Msg: fmt.Sprintf("--batch must be at most %d, got %d", engram.DefaultMaxBatch, batch)}
	}
	return nil
}

// startQuietEngram starts a private engram whose scheduled layer jobs do
// not run by themselves (each is due in 30 days): a benchmark runs them
// when it means to.
func startQuietEngram(ctx context.Context, keep string, env Env) (*benchEngram, error) {
	return startEngram(ctx, keep, env, func(cfg *config.Config) {
		if cfg.Jobs == nil {
			cfg.Jobs = map[string]string{}
		}
		for _, j := range layerJobNames {
			cfg.Jobs[j] = "720h"
		}
	})
}

// RunScale runs `engram bench scale`. Options that Check refuses are a
// *UsageError.
func RunScale(ctx context.Context, env Env, opts ScaleOptions) (*ScaleReport, error) {
	env = env.locked()
	if err := opts.Check(); err != nil {
		return nil, err
	}
	c, err := parseCorpus(scaleCorpus)
	if err != nil {
		return nil, err
	}
	// The layer jobs run when the benchmark says so (they run once, on an
	// empty home, at start): the idle figures are idle.
	b, err := startQuietEngram(ctx, opts.Keep, env)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	rep := &ScaleReport{Version: env.Version, Turns: opts.Turns, Namespaces: opts.Namespaces, CPUs: runtime.NumCPU()}
	gen := newScaleGen(c, opts.Namespaces, opts.Seed)
	rng := rand.New(rand.NewPCG(opts.Seed+1, 7))
	targets := map[int]bool{}
	for len(targets) < min(opts.Questions, opts.Turns) {
		targets[rng.IntN(opts.Turns)] = true
	}
	progress := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "bench scale: "+format+"\n", a...) }

	// Ingest.
	cpu0, gc0 := cpuSeconds()
	asked, err := scaleIngest(ctx, b, gen, opts, targets, rep, progress)
	if err != nil {
		return nil, err
	}

	// Writes with no job running.
	stopProfiles, err := startProfiles(opts.CPUProfile, opts.Trace)
	if err != nil {
		return nil, err
	}
	if rep.Idle, err = measureWrites(ctx, b, gen, opts, func(posts, batches int) bool { return posts < opts.Posts || batches < 10 }); err != nil {
		return nil, err
	}
	progress("idle: single POST p50 %.2f ms, p99 %.2f ms; batches %.0f turns/s (?wait=archive: %.0f acknowledged, %.0f searchable)",
		rep.Idle.PostP50MS, rep.Idle.PostP99MS, rep.Idle.BatchTurnsSec, rep.Idle.ArchiveAckTurnsSec, rep.Idle.ArchiveIndexedTurnsSec)

	// Writes while the layer jobs catch up.
	if err := scaleUnderJobs(ctx, b, gen, opts, rep, stopProfiles, progress); err != nil {
		return nil, err
	}
	if err := b.waitCaughtUp(ctx, 2*time.Hour); err != nil {
		return nil, err
	}
	rep.RSSAfterJobsMB = procStatusMB("VmRSS")
	rep.RSSAnonMB, rep.RSSFileMB = procStatusMB("RssAnon"), procStatusMB("RssFile")
	cpu1, gc1 := cpuSeconds()
	rep.CPUSeconds, rep.GCCPUSeconds = cpu1-cpu0, gc1-gc0
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.GoRetainedMB = float64(ms.Sys-ms.HeapReleased) / (1 << 20)
	runtime.GC()
	runtime.ReadMemStats(&ms)
	rep.GoHeapMB = float64(ms.HeapAlloc) / (1 << 20)
	if opts.MemProfile != "" {
		if err := writeHeapProfile(opts.MemProfile); err != nil {
			return nil, err
		}
	}
	st, err := b.srv.Engine.Stats(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range st.Layers {
		rep.Memories += l["memories"]
		rep.Scenes += l["scenes"]
		rep.Facts += l["facts"]
	}

	// Recall.
	if err := askScaleModes(ctx, b, asked, opts, rep, progress); err != nil {
		return nil, err
	}

	// Storage, then a rebuild from the archive.
	cfg := b.cfg
	if err := b.srv.Close(); err != nil {
		return nil, err
	}
	b.closed = true
	if rep.HomeParts, rep.HomeBytes, err = homeSize(b.home); err != nil {
		return nil, err
	}
	rep.BytesPerTurn = float64(rep.HomeBytes) / float64(opts.Turns+rep.Idle.Turns+rep.UnderJobs.Turns)
	if !opts.NoRebuild {
		progress("rebuilding every index from the archive")
		start := time.Now()
		lvl, _ := config.ParseLevel(cfg.LogLevel)
		if _, err := engine.Rebuild(ctx, cfg, slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: lvl})), nil, false); err != nil {
			return nil, fmt.Errorf("rebuild: %w", err)
		}
		rep.RebuildSeconds = time.Since(start).Seconds()
	}
	return rep, nil
}

// scaleIngest posts the benchmark's turns in batches, keeping the turns
// whose numbers are in targets to ask about later, and waits until every
// index has them.
func scaleIngest(ctx context.Context, b *benchEngram, gen *scaleGen, opts ScaleOptions, targets map[int]bool, rep *ScaleReport, progress func(string, ...any)) ([]engram.Turn, error) {
	var asked []engram.Turn
	start := time.Now()
	for done := 0; done < opts.Turns; {
		n := min(opts.Batch, opts.Turns-done)
		batch := make([]engram.Turn, n)
		for i := range batch {
			batch[i] = gen.next()
			if targets[done+i] {
				asked = append(asked, batch[i])
			}
		}
		if _, err := b.client.Ingest(ctx, batch); err != nil {
			return nil, fmt.Errorf("ingest: POST /v1/turns: %w", err)
		}
		done += n
		if done%(max(opts.Turns/10, 1)) < n || done == opts.Turns {
			progress("ingested %d of %d turns (%.0f turns/s)", done, opts.Turns, float64(done)/time.Since(start).Seconds())
		}
	}
	rep.IngestSeconds = time.Since(start).Seconds()
	rep.IngestTurnsPerSec = float64(opts.Turns) / rep.IngestSeconds
	start = time.Now()
	if err := b.waitCaughtUp(ctx, 2*time.Hour); err != nil {
		return nil, err
	}
	rep.VectorSeconds = time.Since(start).Seconds()
	rep.RSSAfterIngestMB = procStatusMB("VmRSS")
	return asked, nil
}

// scaleUnderJobs measures writes while the layer jobs catch up, and the
// process's memory at their peak.
func scaleUnderJobs(ctx context.Context, b *benchEngram, gen *scaleGen, opts ScaleOptions, rep *ScaleReport, stopProfiles func() error, progress func(string, ...any)) error {
	resetPeakRSS()
	stopPeak := func() error { return nil }
	if opts.MemProfile != "" {
		stopPeak = watchPeakHeap(opts.MemProfile + ".peak")
		defer stopPeak()
	}
	var jobsDone atomic.Bool
	jobErr := make(chan error, 1)
	start := time.Now()
	go func() {
		defer jobsDone.Store(true)
		jobErr <- b.runLayerJobs(ctx)
	}()
	// As many writes as idle, so the jobs catch up on the N turns rather
	// than on what the measurement keeps adding; fewer if the jobs end first.
	var err error
	if rep.UnderJobs, err = measureWrites(ctx, b, gen, opts, func(posts, batches int) bool {
		return !jobsDone.Load() && (posts < opts.Posts || batches < 10)
	}); err != nil {
		return err
	}
	if err := <-jobErr; err != nil {
		return err
	}
	rep.JobsSeconds = time.Since(start).Seconds()
	if err := stopProfiles(); err != nil {
		return err
	}
	if err := stopPeak(); err != nil {
		return err
	}
	rep.RSSPeakJobsMB = procStatusMB("VmHWM")
	progress("under jobs (%.0f s): single POST p50 %.2f ms, p99 %.2f ms; batches %.0f turns/s (?wait=archive: %.0f acknowledged, %.0f searchable)", rep.JobsSeconds,
		rep.UnderJobs.PostP50MS, rep.UnderJobs.PostP99MS, rep.UnderJobs.BatchTurnsSec, rep.UnderJobs.ArchiveAckTurnsSec, rep.UnderJobs.ArchiveIndexedTurnsSec)
	return nil
}

// askScaleModes asks about the kept turns in every mode.
func askScaleModes(ctx context.Context, b *benchEngram, asked []engram.Turn, opts ScaleOptions, rep *ScaleReport, progress func(string, ...any)) error {
	modes, err := b.recallModes(ctx, opts.Modes, 10)
	if err != nil {
		return err
	}
	resetPeakRSS()
	for _, mode := range modes {
		r, err := askScale(ctx, b, asked, mode, rand.New(rand.NewPCG(opts.Seed+2, 11)))
		if err != nil {
			return err
		}
		progress("recall %s: p50 %.1f ms, p95 %.1f ms, found %.0f%%", mode, r.Latency.ClientP50MS, r.Latency.ClientP95MS, 100*r.Found)
		rep.Recall = append(rep.Recall, r)
	}
	rep.RSSPeakRecallMB, rep.RSSAfterRecallMB = procStatusMB("VmHWM"), procStatusMB("VmRSS")
	rep.RSSAnonAfterRecallMB, rep.RSSFileAfterRecallMB = procStatusMB("RssAnon"), procStatusMB("RssFile")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	rep.GoHeapAfterRecallMB = float64(ms.HeapAlloc) / (1 << 20)
	return nil
}

// startProfiles starts a CPU profile into cpuFile and an execution trace
// into traceFile, each if named; the function returned stops both and
// closes their files.
func startProfiles(cpuFile, traceFile string) (func() error, error) {
	var stops []func() error
	stop := func() error {
		var errs []error
		for _, f := range stops {
			errs = append(errs, f())
		}
		return errors.Join(errs...)
	}
	for _, p := range []struct {
		file  string
		start func(io.Writer) error
		stop  func()
	}{{cpuFile, pprof.StartCPUProfile, pprof.StopCPUProfile}, {traceFile, trace.Start, trace.Stop}} {
		if p.file == "" {
			continue
		}
		f, err := os.Create(p.file)
		if err != nil {
			return nil, errors.Join(err, stop())
		}
		if err := p.start(f); err != nil {
			return nil, errors.Join(fmt.Errorf("%s: %w", p.file, err), f.Close(), stop())
		}
		stops = append(stops, func() error { p.stop(); return f.Close() })
	}
	return stop, nil
}

// writeHeapProfile writes a heap profile of the live objects to file.
func writeHeapProfile(file string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", file, err)
	}
	return f.Close()
}

// watchPeakHeap writes a heap profile to file at once, then whenever the
// live heap, as the last collection found it, has grown by a megabyte past
// the largest seen so far, until the function it returns is called; that
// returns the first error. The profile left is of the peak, within a
// megabyte and 200 ms.
func watchPeakHeap(file string) (stop func() error) {
	quit, ended := make(chan struct{}), make(chan error, 1)
	go func() {
		s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for first := true; ; first = false {
			metrics.Read(s)
			if live := s[0].Value.Uint64(); first || live > peak+1<<20 {
				peak = live
				if err := writeHeapProfile(file); err != nil {
					ended <- err
					return
				}
			}
			select {
			case <-quit:
				ended <- nil
				return
			case <-tick.C:
			}
		}
	}()
	return sync.OnceValue(func() error {
		close(quit)
		return <-ended
	})
}

// layerJobNames are the layer jobs, in the order each feeds the next.
var layerJobNames = []string{pipeline.WorkerMemories, pipeline.WorkerScenes, pipeline.WorkerPersona, pipeline.WorkerGraph, pipeline.WorkerLayerVectors}

// runLayerJobs runs every layer job the engine has, one after another, as
// the scheduler does when they are due.
func (b *benchEngram) runLayerJobs(ctx context.Context) error {
	known := map[string]bool{}
	for _, j := range b.srv.Engine.Jobs(ctx) {
		known[j.Name] = true
	}
	for _, name := range layerJobNames {
		if !known[name] {
			continue
		}
		st, err := b.srv.Engine.RunJob(ctx, name)
		for engram.ErrorCode(err) == engram.ECONFLICT && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond) // the scheduler's own run ends first
			st, err = b.srv.Engine.RunJob(ctx, name)
		}
		if err != nil {
			return fmt.Errorf("job %s: %w", name, err)
		}
		if st.LastError != "" {
			return fmt.Errorf("job %s: %s", name, st.LastError)
		}
	}
	return nil
}

// measureWrites alternates single-turn POSTs (a tenth of opts.Posts, at
// most 20), one batch and one batch with ?wait=archive (timed until its
// turns are searchable too) while more says so, and reports their latency
// and throughput.
func measureWrites(ctx context.Context, b *benchEngram, gen *scaleGen, opts ScaleOptions, more func(posts, batches int) bool) (writeReport, error) {
	var posts []float64
	var batchTurns int
	var batchTime, ackTime, indexedTime time.Duration
	var r writeReport
	singles := min(max(opts.Posts/10, 1), 20)
	for more(len(posts), r.Batches) {
		for range singles {
			t := gen.next()
			start := time.Now()
			reg := trace.StartRegion(ctx, "bench.post")
			if _, err := b.client.Ingest(ctx, []engram.Turn{t}); err != nil {
				return r, fmt.Errorf("POST /v1/turns: %w", err)
			}
			reg.End()
			posts = append(posts, float64(time.Since(start).Microseconds())/1000)
		}
		batch := make([]engram.Turn, opts.Batch)
		for i := range batch {
			batch[i] = gen.next()
		}
		start := time.Now()
		reg := trace.StartRegion(ctx, "bench.batch")
		if _, err := b.client.Ingest(ctx, batch); err != nil {
			return r, fmt.Errorf("POST /v1/turns: %w", err)
		}
		reg.End()
		batchTime += time.Since(start)
		batchTurns += len(batch)
		r.Batches++

		for i := range batch {
			batch[i] = gen.next()
		}
		start = time.Now()
		if _, err := b.client.Ingest(engram.IngestNoIndexWait(ctx), batch); err != nil {
			return r, fmt.Errorf("POST /v1/turns?wait=archive: %w", err)
		}
		ackTime += time.Since(start)
		r.Turns += len(batch)
		if err := b.waitIndexed(ctx, 10*time.Minute); err != nil {
			return r, err
		}
		indexedTime += time.Since(start)
	}
	r.Posts = len(posts)
	r.Turns += r.Posts + batchTurns
	r.PostP50MS, r.PostP99MS, r.PostMaxMS = percentile(posts, 0.5), percentile(posts, 0.99), percentile(posts, 1)
	if batchTime > 0 {
		r.BatchTurnsSec = float64(batchTurns) / batchTime.Seconds()
		r.ArchiveAckTurnsSec = float64(batchTurns) / ackTime.Seconds()
		r.ArchiveIndexedTurnsSec = float64(batchTurns) / indexedTime.Seconds()
	}
	return r, nil
}

func askScale(ctx context.Context, b *benchEngram, asked []engram.Turn, mode string, rng *rand.Rand) (scaleRecall, error) {
	r := scaleRecall{Mode: mode}
	var client []time.Duration
	var server []float64
	found := 0
	for _, t := range asked {
		start := time.Now()
		res, err := b.client.Recall(ctx, engram.RecallRequest{Namespace: t.Namespace, Query: question(t, rng), K: 10, Mode: mode})
		if err != nil {
			return r, fmt.Errorf("recall in mode %s: %w", mode, err)
		}
		client = append(client, time.Since(start))
		server = append(server, res.TookMS)
	scan:
		for _, x := range res.Results {
			for _, s := range x.Sources {
				if s.ID == t.ID {
					found++
					break scan
				}
			}
		}
	}
	r.Latency = newLatencyReport(client, server)
	if len(asked) > 0 {
		r.Found = float64(found) / float64(len(asked))
	}
	return r, nil
}

// waitCaughtUp waits until every archived turn is indexed and has its
// vector.
func (b *benchEngram) waitCaughtUp(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		var h engram.Health
		if err := b.client.Do(ctx, http.MethodGet, "/v1/health", nil, &h); err != nil {
			return fmt.Errorf("GET /v1/health: %w", err)
		}
		if h.IndexLag == 0 && (h.Vectors == nil || h.Vectors.Lag == 0) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not caught up after %s: %+v", timeout, h)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// procStatusMB reads a memory figure (VmRSS, VmHWM) of this process in MB;
// 0 where /proc is missing.
func procStatusMB(field string) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// cpuSeconds returns the CPU the process has used (user and system, as
// the kernel counts it) and the garbage collector's part of it, as the
// runtime estimates it.
func cpuSeconds() (total, gc float64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		total = time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	return total, s[0].Value.Float64()
}

// resetPeakRSS resets VmHWM to the current RSS (Linux: clear_refs 5), so
// that the peak read later is the peak of what came after.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// homeSize returns the bytes of home by top-level entry, and their sum.
func homeSize(home string) (map[string]int64, int64, error) {
	parts := map[string]int64{}
	var total int64
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(home, p)
		top, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
		parts[top] += info.Size()
		total += info.Size()
		return nil
	})
	return parts, total, err
}

// Print writes the report for a reader.
func (r *ScaleReport) Print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "engram %s, %d turns in %d namespaces, %d CPUs\n\n", r.Version, r.Turns, r.Namespaces, r.CPUs)
	fmt.Fprintf(&b, "ingest:      %.0f turns/s over HTTP (%.1f s); every vector %.1f s later\n", r.IngestTurnsPerSec, r.IngestSeconds, r.VectorSeconds)
	fmt.Fprintf(&b, "layer jobs:  %.1f s to catch up: %d memories, %d scenes, %d facts\n\n", r.JobsSeconds, r.Memories, r.Scenes, r.Facts)
	fmt.Fprintf(&b, "%-12s %8s %10s %10s %10s %10s %10s %10s\n", "writes", "posts", "p50 ms", "p99 ms", "max ms", "batch t/s", "ack t/s", "indexed")
	for _, x := range []struct {
		name string
		w    writeReport
	}{{"idle", r.Idle}, {"under jobs", r.UnderJobs}} {
		fmt.Fprintf(&b, "%-12s %8d %10.2f %10.2f %10.2f %10.0f %10.0f %10.0f\n", x.name, x.w.Posts, x.w.PostP50MS, x.w.PostP99MS, x.w.PostMaxMS,
			x.w.BatchTurnsSec, x.w.ArchiveAckTurnsSec, x.w.ArchiveIndexedTurnsSec)
	}
	fmt.Fprintf(&b, "\n%-12s %8s %10s %10s %10s %10s\n", "recall", "asked", "p50 ms", "p95 ms", "server p50", "found@10")
	for _, x := range r.Recall {
		fmt.Fprintf(&b, "%-12s %8d %10.1f %10.1f %10.1f %9.0f%%\n", x.Mode, x.Latency.Requests, x.Latency.ClientP50MS, x.Latency.ClientP95MS, x.Latency.ServerP50MS, 100*x.Found)
	}
	fmt.Fprintf(&b, "\nmemory:      RSS %.0f MB after ingest, peak %.0f MB while the jobs ran, %.0f MB after (Go heap %.0f MB)\n",
		r.RSSAfterIngestMB, r.RSSPeakJobsMB, r.RSSAfterJobsMB, r.GoHeapMB)
	fmt.Fprintf(&b, "             after: %.0f MB anonymous, %.0f MB of files; the Go runtime held %.0f MB of it before the GC\n",
		r.RSSAnonMB, r.RSSFileMB, r.GoRetainedMB)
	if r.RSSAfterRecallMB > 0 {
		fmt.Fprintf(&b, "             recall: peak %.0f MB while asking, %.0f MB after: %.0f MB anonymous, %.0f MB of files (Go heap %.0f MB)\n",
			r.RSSPeakRecallMB, r.RSSAfterRecallMB, r.RSSAnonAfterRecallMB, r.RSSFileAfterRecallMB, r.GoHeapAfterRecallMB)
	}
	fmt.Fprintf(&b, "cpu:         %.0f s from ingest to catch-up, %.0f s of it (%.1f%%) in the garbage collector\n",
		r.CPUSeconds, r.GCCPUSeconds, 100*r.GCCPUSeconds/max(r.CPUSeconds, 1e-9))
	fmt.Fprintf(&b, "home:        %.1f MB, %.0f bytes per turn (", float64(r.HomeBytes)/(1<<20), r.BytesPerTurn)
	first := true
	keys := make([]string, 0, len(r.HomeParts))
	for k := range r.HomeParts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !first {
			b.WriteString(", ")
		}
		first = false
		fmt.Fprintf(&b, "%s %.1f MB", k, float64(r.HomeParts[k])/(1<<20))
	}
	b.WriteString(")\n")
	if r.RebuildSeconds > 0 {
		fmt.Fprintf(&b, "rebuild:     %.1f s\n", r.RebuildSeconds)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// JSON writes the report as JSON.
func (r *ScaleReport) JSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
