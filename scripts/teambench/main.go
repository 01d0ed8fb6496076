// Command teambench measures engram servers as a team runs them: real
// `engram serve` processes on loopback, spoken to over HTTP, with homes of
// their own in a temporary folder. It builds nothing: it takes the binary.
// For each configuration it asks for, on fresh homes (and a fresh database
// for the PostgreSQL ones):
//
//   - files: one server on the default store (SQLite palace, file archive);
//   - pg1: one server with store = "postgres";
//   - pg2: two servers on one PostgreSQL database;
//   - pp1, pp2: as pg1 and pg2, with palace = "postgres" too (the palace
//     in the database, one for both servers);
//
// it ingests -turns generated turns with -clients concurrent clients (split
// across the servers), waits until every server has indexed every turn,
// reads each server's VmRSS and VmHWM, asks -queries keyword questions with
// -clients concurrent clients (split across the servers), and, with two
// servers, measures -probes times the delay from a turn acknowledged by A
// to B's first recall that finds it. The servers run with no embedder and
// no extractor, so that what is measured is the archive and the keyword
// index. It prints a table, and the report as JSON with -json.
//
// The database comes from -postgres URL (default $ENGRAM_TEST_POSTGRES_URL),
// or -cluster PORT starts a throwaway cluster with scripts/postgres.sh and
// deletes it at the end; each PostgreSQL configuration gets a database of its
// own, dropped at the end. Every server is stopped on exit and on an
// interrupt.
//
//	go build -o /tmp/engram ./cmd/engram
//	go run ./scripts/teambench -bin /tmp/engram -cluster 36020 -turns 20000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// configs are the configurations teambench knows, in the order it runs them.
var configs = []string{"files", "pg1", "pg2", "pp1", "pp2"}

type options struct {
	bin      string
	pgURL    string
	cluster  int
	script   string
	configs  []string
	turns    int
	clients  int
	batch    int
	queries  int
	probes   int
	mode     string
	seed     uint64
	jsonFile string
	keep     bool
}

// parseOptions reads the command line; an error names the flag at fault.
func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("teambench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.bin, "bin", "", "the engram binary to run (required; go build -o /tmp/engram ./cmd/engram)")
	fs.StringVar(&o.pgURL, "postgres", getenv("ENGRAM_TEST_POSTGRES_URL"), "a postgres:// URL of a server where teambench may create and drop databases")
	fs.IntVar(&o.cluster, "cluster", 0, "start a throwaway cluster on this loopback port with -script, and delete it at the end (instead of -postgres)")
	fs.StringVar(&o.script, "script", "scripts/postgres.sh", "the script that starts and stops a cluster")
	cfgs := fs.String("configs", strings.Join(configs, ","), "the configurations to run, comma-separated: files, pg1, pg2, pp1, pp2")
	fs.IntVar(&o.turns, "turns", 20000, "turns ingested in each configuration")
	fs.IntVar(&o.clients, "clients", 8, "concurrent HTTP clients, for ingest and for recall")
	fs.IntVar(&o.batch, "batch", 1, "turns per POST /v1/turns")
	fs.IntVar(&o.queries, "queries", 2000, "recall questions in each configuration")
	fs.IntVar(&o.probes, "probes", 200, "turns written on A and looked for on B (pg2 only)")
	fs.StringVar(&o.mode, "mode", "keyword", "the recall mode asked: keyword or auto (with no embedder, auto runs keyword)")
	fs.Uint64Var(&o.seed, "seed", 41, "the seed of the generated turns and questions")
	fs.StringVar(&o.jsonFile, "json", "", "also write the report as JSON to FILE")
	fs.BoolVar(&o.keep, "keep", false, "keep the servers' homes and logs (their folder is printed)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: every setting is a flag (-h lists them)", fs.Arg(0))
	}
	if o.bin == "" {
		return o, errors.New("-bin is required: the engram binary to run (go build -o /tmp/engram ./cmd/engram)")
	}
	if st, err := os.Stat(o.bin); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
		return o, fmt.Errorf("-bin %s: not an executable file", o.bin)
	}
	abs, err := filepath.Abs(o.bin)
	if err != nil {
		return o, fmt.Errorf("-bin %s: %w", o.bin, err)
	}
	o.bin = abs
	o.configs = nil
	seen := map[string]bool{}
	for _, c := range strings.Split(*cfgs, ",") {
		c = strings.TrimSpace(c)
		if !slices.Contains(configs, c) {
			return o, fmt.Errorf("-configs: unknown configuration %q: want files, pg1, pg2, pp1 or pp2", c)
		}
		if seen[c] {
			return o, fmt.Errorf("-configs: %q named twice", c)
		}
		seen[c] = true
		o.configs = append(o.configs, c)
	}
	for _, f := range []struct {
		name string
		v    int
		min  int
	}{{"turns", o.turns, 1}, {"clients", o.clients, 1}, {"batch", o.batch, 1}, {"queries", o.queries, 1}, {"probes", o.probes, 1}} {
		if f.v < f.min {
			return o, fmt.Errorf("-%s must be at least %d, got %d", f.name, f.min, f.v)
		}
	}
	if (seen["pg2"] || seen["pp2"]) && o.clients < 2 {
		return o, fmt.Errorf("-clients must be at least 2 with two servers (the clients are split across them), got %d", o.clients)
	}
	if o.mode != "keyword" && o.mode != "auto" {
		return o, fmt.Errorf("-mode %q: want keyword or auto", o.mode)
	}
	if o.cluster != 0 && (o.cluster < 1024 || o.cluster > 65535) {
		return o, fmt.Errorf("-cluster %d: want a port from 1024 to 65535", o.cluster)
	}
	if len(o.configs) > 1 || o.configs[0] != "files" {
		if o.cluster != 0 {
			o.pgURL = ""
		} else if o.pgURL == "" {
			return o, errors.New("the configurations other than files need PostgreSQL: give -postgres URL (or set ENGRAM_TEST_POSTGRES_URL), or -cluster PORT to start one")
		} else if _, err := withDatabase(o.pgURL, "x"); err != nil {
			return o, fmt.Errorf("-postgres: %w", err)
		}
	}
	return o, nil
}

func main() {
	o, err := parseOptions(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "teambench:", err)
		os.Exit(2)
	}
	// An interrupt cancels ctx; run's deferred cleanup then stops the
	// servers, drops the databases and deletes the cluster before exit.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "teambench:", err)
		stop()
		os.Exit(1)
	}
}
