package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/engram-dev/engram"
)

// ContentionOptions configure `engram bench contention`.
type ContentionOptions struct {
	Turns      int // turns to ingest before the measurements
	Namespaces int // namespaces the turns are spread over
	Writers    int // clients posting batches during the second phase
	Readers    int // clients asking recall questions, in both phases
	Batch      int // turns per POST of a writer
	Questions  int // recall questions per phase
	Keep       string
	Seed       uint64
}

// ContentionReport is what `engram bench contention` measured: recall
// latency with no write going on, then the same questions while Writers
// clients post batches, in one run.
type ContentionReport struct {
	Version    string `json:"version"`
	Turns      int    `json:"turns"`
	Namespaces int    `json:"namespaces"`
	CPUs       int    `json:"cpus"`
	Writers    int    `json:"writers"`
	Readers    int    `json:"readers"`
	Batch      int    `json:"batch"`

	Idle   contentionPhase `json:"idle"`
	Writes contentionPhase `json:"under_writes"`
	// The writers' turns acknowledged during the second phase, and their
	// rate.
	WrittenTurns     int     `json:"written_turns"`
	WriteTurnsPerSec float64 `json:"write_turns_per_s"`
	// P50Ratio and P99Ratio are the latencies under writes over the idle
	// ones.
	P50Ratio float64 `json:"p50_ratio"`
	P99Ratio float64 `json:"p99_ratio"`
}

// contentionPhase is the recall latency of one phase, as the clients saw it.
type contentionPhase struct {
	Requests int     `json:"requests"`
	P50MS    float64 `json:"p50_ms"`
	P99MS    float64 `json:"p99_ms"`
	MaxMS    float64 `json:"max_ms"`
	// Warned counts the answers that warned of an index behind the
	// acknowledged turns (not of the derived layers, which no job brings
	// up to date here); Found is the share of questions whose turn is
	// among the top 10.
	Warned int     `json:"warned"`
	Found  float64 `json:"found_at_10"`
}

// Check refuses counts below 1 (writers: 0 is allowed, a baseline run) and
// a batch over the server's limit, with a *UsageError naming the flag.
func (o ContentionOptions) Check() error {
	if o.Writers < 0 {
		return &UsageError{Msg: fmt.Sprintf("--writers must be at least 0, got %d", o.Writers)}
	}
	return checkCounts(o.Batch, flagCount{"turns", o.Turns}, flagCount{"namespaces", o.Namespaces},
		flagCount{"readers", o.Readers}, flagCount{"batch", o.Batch}, flagCount{"questions", o.Questions})
}

// RunContention runs `engram bench contention`: it ingests Turns turns,
// waits until every one is indexed and has its vector, then has Readers
// clients ask Questions questions (made from random ingested turns, each
// reader alternating the default path and deep recall), first with no
// write going on, then while Writers clients post batches of Batch new
// turns without pause. Options that Check refuses are a *UsageError.
func RunContention(ctx context.Context, env Env, opts ContentionOptions) (*ContentionReport, error) {
	env = env.locked()
	if err := opts.Check(); err != nil {
		return nil, err
	}
	c, err := parseCorpus(scaleCorpus)
	if err != nil {
		return nil, err
	}
	// No layer job during the measurement: what is measured is recall
	// beside the writes alone.
	b, err := startQuietEngram(ctx, opts.Keep, env)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	rep := &ContentionReport{Version: env.Version, Turns: opts.Turns, Namespaces: opts.Namespaces, CPUs: runtime.NumCPU(),
		Writers: opts.Writers, Readers: opts.Readers, Batch: opts.Batch}
	progress := func(format string, a ...any) { fmt.Fprintf(env.Stderr, "bench contention: "+format+"\n", a...) }

	gen := newScaleGen(c, opts.Namespaces, opts.Seed)
	rng := rand.New(rand.NewPCG(opts.Seed+1, 7))
	targets := map[int]bool{}
	for len(targets) < min(opts.Questions, opts.Turns) {
		targets[rng.IntN(opts.Turns)] = true
	}
	var asked []engram.Turn
	for done := 0; done < opts.Turns; {
		n := min(DefaultContentionIngestBatch, opts.Turns-done)
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
	}
	progress("ingested %d turns; waiting for every vector", opts.Turns)
	if err := b.waitCaughtUp(ctx, 2*time.Hour); err != nil {
		return nil, err
	}
	// The same questions in both phases, the same split between readers.
	questions := make([]string, len(asked))
	qrng := rand.New(rand.NewPCG(opts.Seed+2, 11))
	for i, t := range asked {
		questions[i] = question(t, qrng)
	}
	// A first pass warms the caches (the keyword indexes load at the first
	// searches): both phases see a warm server.
	if _, err := b.askContention(ctx, asked, questions, opts.Readers); err != nil {
		return nil, err
	}
	if rep.Idle, err = b.askContention(ctx, asked, questions, opts.Readers); err != nil {
		return nil, err
	}
	progress("idle: recall p50 %.1f ms, p99 %.1f ms", rep.Idle.P50MS, rep.Idle.P99MS)

	wctx, stopWriters := context.WithCancel(ctx)
	defer stopWriters()
	var (
		genMu   sync.Mutex
		written atomic.Int64
		wg      sync.WaitGroup
		werrs   = make([]error, opts.Writers)
	)
	// The questions begin once every writer has had a batch acknowledged:
	// they are asked while all of them write.
	var writing sync.WaitGroup
	start := time.Now()
	for w := range opts.Writers {
		wg.Add(1)
		writing.Add(1)
		go func() {
			defer wg.Done()
			first := sync.OnceFunc(writing.Done)
			defer first()
			for wctx.Err() == nil {
				batch := make([]engram.Turn, opts.Batch)
				genMu.Lock()
				for i := range batch {
					batch[i] = gen.next()
				}
				genMu.Unlock()
				if _, err := b.client.Ingest(wctx, batch); err != nil {
					if wctx.Err() == nil {
						werrs[w] = fmt.Errorf("writer %d: POST /v1/turns: %w", w, err)
					}
					return
				}
				written.Add(int64(len(batch)))
				first()
			}
		}()
	}
	writing.Wait()
	rep.Writes, err = b.askContention(ctx, asked, questions, opts.Readers)
	elapsed := time.Since(start)
	stopWriters()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if err := errors.Join(werrs...); err != nil {
		return nil, err
	}
	rep.WrittenTurns = int(written.Load())
	rep.WriteTurnsPerSec = float64(rep.WrittenTurns) / elapsed.Seconds()
	if rep.Idle.P50MS > 0 {
		rep.P50Ratio = rep.Writes.P50MS / rep.Idle.P50MS
	}
	if rep.Idle.P99MS > 0 {
		rep.P99Ratio = rep.Writes.P99MS / rep.Idle.P99MS
	}
	progress("under %d writers (%.0f turns/s): recall p50 %.1f ms, p99 %.1f ms", opts.Writers, rep.WriteTurnsPerSec, rep.Writes.P50MS, rep.Writes.P99MS)
	return rep, nil
}

// DefaultContentionIngestBatch is the batch of the ingest before the
// measurements.
const DefaultContentionIngestBatch = 500

// askContention has readers clients ask the questions, split between
// them, each alternating the default path (auto) and deep recall.
func (b *benchEngram) askContention(ctx context.Context, asked []engram.Turn, questions []string, readers int) (contentionPhase, error) {
	var (
		mu      sync.Mutex
		lat     []float64
		warned  int
		found   int
		wg      sync.WaitGroup
		errs    = make([]error, readers)
		modes   = []string{engram.ModeAuto, engram.ModeDeep}
		pending = len(asked)
	)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := r; i < pending; i += readers {
				t := asked[i]
				start := time.Now()
				res, err := b.client.Recall(ctx, engram.RecallRequest{Namespace: t.Namespace, Query: questions[i], K: 10, Mode: modes[(i/readers)%2]})
				ms := float64(time.Since(start).Microseconds()) / 1000
				if err != nil {
					errs[r] = fmt.Errorf("recall: %w", err)
					return
				}
				hit := false
			scan:
				for _, x := range res.Results {
					for _, s := range x.Sources {
						if s.ID == t.ID {
							hit = true
							break scan
						}
					}
				}
				mu.Lock()
				lat = append(lat, ms)
				if slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "index is behind the archive") }) {
					warned++
				}
				if hit {
					found++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return contentionPhase{}, err
	}
	p := contentionPhase{Requests: len(lat), P50MS: percentile(lat, 0.5), P99MS: percentile(lat, 0.99), MaxMS: percentile(lat, 1), Warned: warned}
	if len(lat) > 0 {
		p.Found = float64(found) / float64(len(lat))
	}
	return p, nil
}

// Print writes the report for a reader.
func (r *ContentionReport) Print(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "engram %s, %d turns in %d namespaces, %d CPUs; %d readers (default path and deep in turn)\n\n",
		r.Version, r.Turns, r.Namespaces, r.CPUs, r.Readers)
	fmt.Fprintf(&b, "%-28s %8s %10s %10s %10s %8s %10s\n", "recall", "asked", "p50 ms", "p99 ms", "max ms", "warned", "found@10")
	for _, x := range []struct {
		name string
		p    contentionPhase
	}{{"idle", r.Idle}, {fmt.Sprintf("under %d writers", r.Writers), r.Writes}} {
		fmt.Fprintf(&b, "%-28s %8d %10.1f %10.1f %10.1f %8d %9.0f%%\n", x.name, x.p.Requests, x.p.P50MS, x.p.P99MS, x.p.MaxMS, x.p.Warned, 100*x.p.Found)
	}
	fmt.Fprintf(&b, "\nwriters:     %d turns acknowledged in batches of %d (%.0f turns/s)\n", r.WrittenTurns, r.Batch, r.WriteTurnsPerSec)
	fmt.Fprintf(&b, "ratio:       p50 %.2f, p99 %.2f (under writes / idle)\n", r.P50Ratio, r.P99Ratio)
	_, err := io.WriteString(w, b.String())
	return err
}
