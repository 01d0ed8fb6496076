package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/bench"
)

// benchmarks are the benchmarks of `engram bench`, as subcommands.
func benchmarks() []command {
	return []command{
		{"locomo", "retrieval on LoCoMo conversations: ingest over HTTP, recall, score against the evidence turns", runBenchLocomo},
		{"layers", "the derived layers on LoCoMo conversations: event coverage of the memories, memories per turn, facts, facets", runBenchLayers},
		{"contention", "recall latency idle and while concurrent writers post batches, in one run (the ratio)", runBenchContention},
		{"scale", "a heavy user's history: ingest N turns, writes while the layer jobs catch up, recall latency, memory, storage, rebuild", runBenchScale},
	}
}

// runBench runs `engram bench <benchmark> [flags]`. Every benchmark runs a
// private engram (see package bench), never the user's home or server.
func runBench(ctx context.Context, m *Main, args []string) error {
	var names []string
	usage := "Usage: engram bench <benchmark> [flags]\n\nBenchmarks:\n"
	for _, b := range benchmarks() {
		names = append(names, b.name)
		usage += fmt.Sprintf("  %-10s %s\n", b.name, b.summary)
	}
	want := "(want one of: " + strings.Join(names, ", ") + ")"
	return m.runGroup(ctx, group{name: "bench", subs: benchmarks(), hint: true,
		missing: "missing the benchmark " + want, unknown: "unknown benchmark %q " + want, usage: usage + `
Each runs a private engram in a temporary home (--keep DIR keeps it) with the
HTTP API on a free loopback port, and talks to it only through that API.

Run 'engram bench <benchmark> --help' for its flags.
`}, args)
}

func runBenchLocomo(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("bench locomo", `bench locomo [--data DIR] [--mode M]... [--k 10] [--json] [--out FILE] [--keep DIR]

Ingests every conversation (DIR/*.json, LoCoMo format) into a private engram
through POST /v1/turns, asks every question of categories 1-4 through
POST /v1/recall in each mode, and scores the results against the questions'
evidence turns: any@k (some evidence turn in the top k), recall@k (the
fraction of the evidence turns in the top k), all@k (every evidence turn in
the top k) and session@k (some result from an evidence turn's session), by
category, by conversation and overall, with recall latency and the turns a
result stems from (a burst of messages is one result). --session-k adds the
session-level figure MemPalace publishes. DIR may hold any conversations in
this format: ../shared/bench/locomo-dev (LoCoMo) and realtalk-dev (real
chats) are the development sets.

Turns: namespace locomo-<file>, session session_<N>, the speaker, the text
(plus " [shares a photo: CAPTION]" for a shared photo), ts = the session's
date_time (UTC) + 30 s per turn, meta {"conversation", "dia_id"}.`)
	data := fs.String("data", "", "`DIR` of LoCoMo conversation files (default: "+bench.LocomoDataRel+" in the working directory or a folder above it)")
	var modes bench.ListFlag
	fs.Var(&modes, "mode", "recall mode `M` to measure; repeat or separate with commas (default: every mode the server accepts)")
	k := fs.Int("k", engram.DefaultK, "results asked per question: the largest rank scored")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of tables")
	out := fs.String("out", "", "also write the JSON result to `FILE`")
	keep := fs.String("keep", "", "run the private engram in `DIR` and keep it afterwards (default: a temporary folder, removed)")
	captions := fs.Bool("captions", true, "append a shared photo's caption to the turn's text")
	speakers := fs.Bool("speakers", true, "send each turn's speaker (an ablation: false ingests turns without speaker names)")
	var kinds bench.ListFlag
	fs.Var(&kinds, "kinds", "result `KINDS` asked for (turn, memory, scene, fact; comma-separated; default turn): a layer result scores through its source turns")
	perQuestion := fs.Bool("per-question", false, "add each question's evidence ranks and result turns to the JSON report (--json, --out)")
	sessionK := fs.Int("session-k", 10, "also score the evidence sessions among the first `N` distinct sessions of 50 results, every question asked (MemPalace's session-level figure); 0: off")
	if err := m.parseBench(fs, args); err != nil {
		return err
	}
	rep, err := bench.RunLocomo(ctx, bench.LocomoOptions{Data: *data, Modes: modes, Kinds: kinds, K: *k, Keep: *keep,
		Captions: *captions, Speakers: *speakers, PerQuestion: *perQuestion, SessionK: *sessionK}, m.benchEnv())
	if err != nil {
		return benchError(err)
	}
	return bench.Output(m.Stdout, rep, rep.Print, *out, *asJSON)
}

func runBenchScale(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("bench scale", `bench scale [--turns N] [--namespaces 4] [--mode M]... [--json] [--out FILE] [--keep DIR]

Runs a private engram on the embedded defaults (or the ENGRAM_* environment)
and measures what a heavy user's history costs, through the HTTP API:

  1. ingest N turns of generated conversation (sentences drawn from the
     corpus the binary embeds, two speakers, sessions of 20 turns, a session
     a day per namespace) in batches, until every turn has its vector;
  2. single-turn POSTs (p50, p99) and batches (turns/s) with no job running;
  3. the same while every layer job catches up on the N turns;
  4. recall questions made from random turns, per mode (p50, p95 measured
     by the client; found@10: the question's turn among the top 10);
  5. the process's memory (RSS after ingest, peak during the jobs, after;
     peak while asking, after, and the live heap then), the home's size per
     turn, and the time of `+"`engram rebuild`"+`.`)
	turns := fs.Int("turns", 100000, "turns to ingest first")
	namespaces := fs.Int("namespaces", 4, "namespaces the turns are spread over")
	batch := fs.Int("batch", 500, "turns per POST while ingesting, and per measured batch")
	posts := fs.Int("posts", 200, "single-turn POSTs measured with no job running (at least)")
	questions := fs.Int("questions", 200, "recall questions per mode")
	var modes bench.ListFlag
	fs.Var(&modes, "mode", "recall mode `M` to measure; repeat or separate with commas (default: every mode the server accepts)")
	noRebuild := fs.Bool("no-rebuild", false, "skip timing the rebuild")
	seed := fs.Uint64("seed", 1, "seed of the generated conversations and questions")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of tables")
	out := fs.String("out", "", "also write the JSON result to `FILE`")
	keep := fs.String("keep", "", "run the private engram in `DIR` and keep it afterwards (default: a temporary folder, removed)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of steps 2 and 3 (the measured writes) to `FILE`")
	traceFile := fs.String("trace", "", "write an execution trace of steps 2 and 3 to `FILE` (go tool trace)")
	memProfile := fs.String("memprofile", "", "write a heap profile of the live objects after catch-up to `FILE`, and one at the largest live heap while the layer jobs ran to FILE.peak")
	if err := m.parseBench(fs, args); err != nil {
		return err
	}
	rep, err := bench.RunScale(ctx, m.benchEnv(), bench.ScaleOptions{Turns: *turns, Namespaces: *namespaces, Batch: *batch,
		Posts: *posts, Questions: *questions, Modes: modes, Keep: *keep, NoRebuild: *noRebuild, Seed: *seed,
		CPUProfile: *cpuProfile, Trace: *traceFile, MemProfile: *memProfile})
	if err != nil {
		return benchError(err)
	}
	return bench.Output(m.Stdout, rep, rep.Print, *out, *asJSON)
}

func runBenchContention(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("bench contention", `bench contention [--turns 20000] [--writers 4] [--readers 2] [--batch 20] [--questions 400] [--json] [--out FILE] [--keep DIR]

Runs a private engram with no layer job and measures recall beside writes,
through the HTTP API:

  1. ingest N turns of generated conversation, until every turn has its
     vector;
  2. the readers ask questions made from random turns, each alternating the
     default path and deep recall, with no write going on (p50, p99);
  3. the same questions while the writers post batches without pause;
  4. the ratios of the latencies under writes to the idle ones.`)
	turns := fs.Int("turns", 20000, "turns to ingest first")
	namespaces := fs.Int("namespaces", 4, "namespaces the turns are spread over")
	writers := fs.Int("writers", 4, "clients posting batches during step 3 (0: none, a baseline)")
	readers := fs.Int("readers", 2, "clients asking the questions")
	batch := fs.Int("batch", 20, "turns per POST of a writer")
	questions := fs.Int("questions", 400, "recall questions per phase")
	seed := fs.Uint64("seed", 1, "seed of the generated conversations and questions")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of tables")
	out := fs.String("out", "", "also write the JSON result to `FILE`")
	keep := fs.String("keep", "", "run the private engram in `DIR` and keep it afterwards (default: a temporary folder, removed)")
	if err := m.parseBench(fs, args); err != nil {
		return err
	}
	rep, err := bench.RunContention(ctx, m.benchEnv(), bench.ContentionOptions{Turns: *turns, Namespaces: *namespaces,
		Writers: *writers, Readers: *readers, Batch: *batch, Questions: *questions, Keep: *keep, Seed: *seed})
	if err != nil {
		return benchError(err)
	}
	return bench.Output(m.Stdout, rep, rep.Print, *out, *asJSON)
}

func runBenchLayers(ctx context.Context, m *Main, args []string) error {
	fs := m.newFlagSet("bench layers", `bench layers [--data DIR] [--sample 25] [--events] [--json] [--out FILE] [--keep DIR]

Ingests every conversation (DIR/*.json, LoCoMo format, as bench locomo does)
into a private engram through POST /v1/turns, runs the layer jobs once each,
reads the layers back through GET /v1/memories, /v1/persona, /v1/kg and
/v1/stats, and scores the memories against the conversations' events
(events_session_N: per speaker, what happened to them in session N).

An event is covered when one memory citing a turn of its session and naming
its speaker holds at least half of its content words (lower-cased words of
two or more letters, light suffix stemming, English stopwords and the
speaker's own name left out). Reported: coverage, memories per turn, facts
(knowledge-graph triples) and persona facets, and a sample of memories,
facts and facets to judge their precision by hand. The extractor is the
configured one: ENGRAM_EXTRACTOR=rules (or ollama, openai) measures another.`)
	data := fs.String("data", "", "`DIR` of LoCoMo conversation files (default: "+bench.LocomoDataRel+" in the working directory or a folder above it)")
	sample := fs.Int("sample", bench.DefaultLayersSample, "memories, facts and facets to print (`N`; 0: none)")
	events := fs.Bool("events", false, "print every event with the closest memory of its session")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of text")
	out := fs.String("out", "", "also write the JSON result to `FILE`")
	keep := fs.String("keep", "", "run the private engram in `DIR` and keep it afterwards (default: a temporary folder, removed)")
	captions := fs.Bool("captions", true, "append a shared photo's caption to the turn's text")
	if err := m.parseBench(fs, args); err != nil {
		return err
	}
	if *sample < 0 {
		return &usageError{msg: fmt.Sprintf("--sample must not be negative, got %d", *sample)}
	}
	n := *sample
	if n == 0 {
		n = -1 // none
	}
	rep, err := bench.RunLayers(ctx, bench.LayersOptions{Data: *data, Keep: *keep, Captions: *captions, Sample: n}, m.benchEnv())
	if err != nil {
		return err
	}
	return bench.Output(m.Stdout, rep, func(w io.Writer) error { return rep.Print(w, *events) }, *out, *asJSON)
}

// benchError makes a setting the benchmark's server refuses a usage error.
func benchError(err error) error {
	var ue *bench.UsageError
	if errors.As(err, &ue) {
		return &usageError{msg: ue.Msg}
	}
	return err
}

// parseBench parses a benchmark's flags: it takes no arguments, and no
// --home (it runs a private engram).
func (m *Main) parseBench(fs *flag.FlagSet, args []string) error {
	pos, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &usageError{msg: fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	if m.home != "" {
		return &usageError{msg: "--home is not used: the bench runs a private engram in a temporary home (--keep DIR chooses and keeps it)"}
	}
	return nil
}

// benchEnv is what a benchmark takes from the command line: the
// environment of its private engram's configuration, stderr for progress,
// and the version.
func (m *Main) benchEnv() bench.Env {
	return bench.Env{Getenv: m.Getenv, Stderr: m.Stderr, Version: versionString()}
}
