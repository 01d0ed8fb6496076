// Command recallprof measures recall on an existing home, in process: it
// opens the home (as `engram serve` would, without its jobs), loads the
// keyword indexes, asks questions made from the turns of one namespace (up
// to four of a turn's words of five letters or more, as `engram bench
// scale` makes them), and prints the p50 and p95 of a mode, optionally with
// a CPU profile of the measured questions. Run it on a copy of a home that
// `engram bench scale --keep DIR` left:
//
//	go run ./scripts/recallprof -home /tmp/h100 -namespace scale-1 -mode deep -cpuprofile /tmp/deep.prof
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/server"
)

func main() {
	home := flag.String("home", "", "the home to open (a copy: it is opened for writing)")
	ns := flag.String("namespace", "default", "the namespace to ask about")
	mode := flag.String("mode", "deep", "the recall mode")
	n := flag.Int("n", 200, "questions measured (after 20 to warm up)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the measured questions to FILE")
	memProfile := flag.String("memprofile", "", "write a heap profile of the live objects after the questions to FILE, and print the heap")
	flag.Parse()
	if *home == "" {
		log.Fatal("recallprof: -home is required")
	}
	ctx := context.Background()
	// The server's loader: a home's config.toml may hold its settings.
	cfg, err := server.LoadConfig(*home, os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	e, err := engine.Open(ctx, cfg.Config, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	if err := e.LoadKeywordIndexes(ctx); err != nil {
		log.Fatal(err)
	}
	turns, err := e.ListTurns(ctx, engram.TurnQuery{Namespace: *ns, Limit: 500})
	if err != nil || len(turns) == 0 {
		log.Fatalf("recallprof: no turns in namespace %q (%v)", *ns, err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	qs := make([]string, 0, len(turns))
	for _, t := range turns {
		var long []string
		for _, w := range strings.Fields(t.Content) {
			if w = strings.Trim(w, ".,!?;:"); len(w) >= 5 {
				long = append(long, w)
			}
		}
		rng.Shuffle(len(long), func(i, j int) { long[i], long[j] = long[j], long[i] })
		qs = append(qs, "what did we say about "+strings.Join(long[:min(4, len(long))], " ")+"?")
	}
	ask := func(count int) []time.Duration {
		lat := make([]time.Duration, 0, count)
		for i := range count {
			start := time.Now()
			if _, err := e.Recall(ctx, engram.RecallRequest{Namespace: *ns, Query: qs[i%len(qs)], Mode: *mode, K: 10}); err != nil {
				log.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		return lat
	}
	ask(20)
	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	lat := ask(*n)
	slices.Sort(lat)
	fmt.Printf("%s recall, %d questions: p50 %.1f ms, p95 %.1f ms\n", *mode, len(lat),
		ms(lat[len(lat)/2]), ms(lat[len(lat)*95/100]))
	if *memProfile != "" {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Printf("live heap after the questions: %.0f MB\n", float64(ms.HeapAlloc)/1e6)
		f, err := os.Create(*memProfile)
		if err != nil {
			log.Fatal(err)
		}
		defer f.Close()
		if err := pprof.WriteHeapProfile(f); err != nil {
			log.Fatal(err)
		}
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
