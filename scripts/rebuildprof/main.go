// Command rebuildprof rebuilds a home's palace in process, as `engram
// rebuild` does, with a CPU profile of the whole rebuild and the time of
// each stage: what the rebuild of a large home spends its time on. Run it
// on a copy of a home that `engram bench scale --keep DIR` left:
//
//	go run ./scripts/rebuildprof -home /tmp/h100 -cpuprofile /tmp/rebuild.prof
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"runtime/pprof"
	"time"

	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
)

func main() {
	home := flag.String("home", "", "the home to rebuild (a copy: its palace is replaced)")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the rebuild to FILE")
	flag.Parse()
	if *home == "" {
		log.Fatal("rebuildprof: -home is required")
	}
	cfg, err := config.LoadConfig(*home, os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
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
	start := time.Now()
	stage, stageStart := "", start
	progress := func(s string, done, total int64) {
		if s != stage {
			if stage != "" {
				fmt.Printf("%-24s %8.1f s\n", stage, time.Since(stageStart).Seconds())
			}
			stage, stageStart = s, time.Now()
		}
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := engine.Rebuild(context.Background(), cfg, logger, progress, false); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%-24s %8.1f s\n", stage, time.Since(stageStart).Seconds())
	fmt.Printf("%-24s %8.1f s\n", "rebuild", time.Since(start).Seconds())
}
