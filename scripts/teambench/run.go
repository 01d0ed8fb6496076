package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// configReport is what one configuration measured.
type configReport struct {
	Config  string               `json:"config"`
	Servers int                  `json:"servers"`
	Ingest  ingestReport         `json:"ingest"`
	Recall  recallReport         `json:"recall"`
	Delay   *delayReport         `json:"delay,omitempty"`
	Memory  map[string]memStatus `json:"memory_after_ingest"` // by server name
	Disk    diskReport           `json:"disk_at_end"`
}

// report is a whole run.
type report struct {
	Started string         `json:"started"`
	CPUs    int            `json:"cpus"`
	Turns   int            `json:"turns"`
	Clients int            `json:"clients"`
	Batch   int            `json:"batch"`
	Mode    string         `json:"mode"`
	Seed    uint64         `json:"seed"`
	Configs []configReport `json:"configs"`
}

// run measures every configuration of o, one after the other, and prints
// the report. Everything it starts is stopped before it returns, on an
// error and on ctx's end too.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (err error) {
	dir, err := os.MkdirTemp("", "teambench-")
	if err != nil {
		return err
	}
	defer func() {
		if o.keep {
			fmt.Fprintf(stderr, "teambench: the homes and logs are kept in %s\n", dir)
		} else {
			err = errors.Join(err, os.RemoveAll(dir))
		}
	}()
	pgURL := o.pgURL
	if o.cluster != 0 && slices.ContainsFunc(o.configs, func(c string) bool { return c != "files" }) {
		fmt.Fprintf(stderr, "teambench: starting a PostgreSQL cluster on port %d\n", o.cluster)
		u, stop, err := startCluster(ctx, o.script, o.cluster)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, stop()) }()
		pgURL = u
	}
	rep := report{Started: time.Now().UTC().Format(time.RFC3339), CPUs: runtime.NumCPU(), Turns: o.turns,
		Clients: o.clients, Batch: o.batch, Mode: o.mode, Seed: o.seed}
	c := newCorpus(o.seed, 20000)
	err = rep.measure(o.configs, stdout, func(cfg string) (configReport, error) {
		return runConfig(ctx, o, c, cfg, dir, pgURL, stderr)
	})
	if err != nil {
		return err
	}
	if o.jsonFile != "" {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.jsonFile, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// measure runs one for each configuration in turn and prints the report.
// When one fails, what the configurations before it measured is printed
// all the same: a long run is not lost to its last part.
func (r *report) measure(cfgs []string, stdout io.Writer, one func(cfg string) (configReport, error)) error {
	for _, cfg := range cfgs {
		cr, err := one(cfg)
		if err != nil {
			if len(r.Configs) > 0 {
				err = errors.Join(err, r.print(stdout))
			}
			return fmt.Errorf("%s: %w", cfg, err)
		}
		r.Configs = append(r.Configs, cr)
	}
	return r.print(stdout)
}

// runConfig starts the servers of cfg on fresh homes (and database), runs
// the phases, and stops them.
func runConfig(ctx context.Context, o options, c *corpus, cfg, dir, pgURL string, stderr io.Writer) (cr configReport, err error) {
	cr = configReport{Config: cfg, Servers: 1, Memory: map[string]memStatus{}}
	db := ""
	if cfg != "files" {
		name := fmt.Sprintf("teambench_%d_%s", os.Getpid(), cfg)
		u, drop, err := createDatabase(ctx, pgURL, name)
		if err != nil {
			return cr, err
		}
		defer func() { err = errors.Join(err, drop()) }()
		db = u
	}
	if cfg == "pg2" || cfg == "pp2" {
		cr.Servers = 2
	}
	var servers []*server
	defer func() {
		for _, s := range servers {
			err = errors.Join(err, s.stop())
		}
	}()
	for i := range cr.Servers {
		s, err := startServer(ctx, o.bin, dir, fmt.Sprintf("%s-%c", cfg, 'a'+i), db, strings.HasPrefix(cfg, "pp"))
		if err != nil {
			return cr, err
		}
		servers = append(servers, s)
	}
	fmt.Fprintf(stderr, "teambench: %s: ingesting %d turns with %d clients on %d server(s)\n", cfg, o.turns, o.clients, len(servers))
	if cr.Ingest, err = ingest(ctx, o, c, servers); err != nil {
		return cr, err
	}
	for _, s := range servers {
		m, err := readStatus(s.cmd.Process.Pid)
		if err != nil {
			return cr, err
		}
		cr.Memory[s.name] = m
	}
	fmt.Fprintf(stderr, "teambench: %s: %.0f turns/s; asking %d questions\n", cfg, cr.Ingest.TurnsPerSec, o.queries)
	if cr.Recall, err = recall(ctx, o, c, servers); err != nil {
		return cr, err
	}
	if len(servers) == 2 {
		fmt.Fprintf(stderr, "teambench: %s: %d probes from %s to %s\n", cfg, o.probes, servers[0].name, servers[1].name)
		d, err := delays(ctx, o.probes, servers[0], servers[1])
		if err != nil {
			return cr, err
		}
		cr.Delay = &d
	}
	cr.Disk.Homes = map[string]int64{}
	for _, s := range servers {
		if cr.Disk.Homes[s.name], err = homeBytes(s.home); err != nil {
			return cr, err
		}
	}
	if db != "" {
		err = databaseBytes(ctx, db, &cr.Disk)
	}
	return cr, err
}

func (r report) print(w io.Writer) error {
	fmt.Fprintf(w, "teambench %s: %d turns, %d clients, %d turn(s) per POST, recall mode %s, %d CPUs\n",
		r.Started, r.Turns, r.Clients, r.Batch, r.Mode, r.CPUs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "config\tservers\tingest turns/s\tPOST p50/p99 ms\tcatch-up s\trecall p50/p99 ms\trecalls/s\tfound\tA->B p50/p99/max ms\tVmRSS/VmHWM MB (each server)\thome MB (each)\tarchive/palace tables MB")
	for _, c := range r.Configs {
		delay := "-"
		if c.Delay != nil {
			delay = fmt.Sprintf("%.1f / %.1f / %.1f", c.Delay.P50ms, c.Delay.P99ms, c.Delay.MaxMs)
		}
		var mem []string
		for _, name := range slices.Sorted(maps.Keys(c.Memory)) {
			m := c.Memory[name]
			mem = append(mem, fmt.Sprintf("%s %.0f/%.0f", name, mb(m.RSS), mb(m.HWM)))
		}
		var homes []string
		for _, name := range slices.Sorted(maps.Keys(c.Disk.Homes)) {
			homes = append(homes, fmt.Sprintf("%.1f", mb(c.Disk.Homes[name])))
		}
		tables := "-"
		if c.Disk.Database > 0 {
			tables = fmt.Sprintf("%.1f / %.1f", mb(c.Disk.ArchiveTables), mb(c.Disk.PalaceTables))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f / %.1f\t%.2f\t%.2f / %.2f\t%.0f\t%.0f%%\t%s\t%s\t%s\t%s\n",
			c.Config, c.Servers, c.Ingest.TurnsPerSec, c.Ingest.PostP50ms, c.Ingest.PostP99ms, c.Ingest.CatchUpSeconds,
			c.Recall.P50ms, c.Recall.P99ms, c.Recall.PerSec, 100*c.Recall.FoundShare, delay, strings.Join(mem, ", "),
			strings.Join(homes, ", "), tables)
	}
	return tw.Flush()
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
