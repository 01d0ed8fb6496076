package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/atomicfile"
	"github.com/engram-dev/engram/internal/lockedio"
	"github.com/engram-dev/engram/internal/textutil"
	"github.com/engram-dev/engram/server"
)

// Env is what a benchmark takes from the command that runs it.
type Env struct {
	// Getenv reads the environment of the private engram's configuration
	// (ENGRAM_*), as for any engram.
	Getenv func(string) string
	// Stderr receives progress lines and the engram's warnings.
	Stderr io.Writer
	// Version is the engram version the report's server reports.
	Version string
}

// locked returns env with its Stderr safe for concurrent writes: a
// benchmark's progress lines and its engram's log come from several
// goroutines.
func (e Env) locked() Env {
	if _, ok := e.Stderr.(*lockedio.Writer); !ok && e.Stderr != nil {
		e.Stderr = lockedio.New(e.Stderr)
	}
	return e
}

// UsageError is a benchmark setting the private server refuses (a recall
// mode, a k): the command's usage error.
type UsageError struct{ Msg string }

// Error implements error.
func (e *UsageError) Error() string { return e.Msg }

// Output writes a benchmark's report rep: as JSON to the file out when it
// is set (atomically), and to w as JSON when asJSON, else by print.
func Output(w io.Writer, rep any, print func(io.Writer) error, out string, asJSON bool) error {
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	if out != "" {
		if err := atomicfile.WriteFile(out, js, 0o644); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if asJSON {
		_, err = w.Write(js)
		return err
	}
	return print(w)
}

// benchEngram is a private engram for a benchmark: its own home, opened and
// served over HTTP on a free loopback port exactly as `engram serve` does it
// (server.Start), and a client that uses only the HTTP API.
type benchEngram struct {
	home   string
	keep   bool // leave the home in place on Close
	cfg    config.Config
	srv    *server.Server
	closed bool // srv closed before Close
	client *httpapi.Client
}

// startEngram starts a private engram. Its home is keep if given
// (created if needed, kept afterwards), else a new temporary folder removed
// on Close. Each tune function adjusts the configuration before the start. Its configuration is the defaults, then the home's config.toml
// (a kept home may hold one), then the ENGRAM_* environment, as for any
// engram; but it always listens on a free loopback port without a token, and
// logs at warn unless ENGRAM_LOG_LEVEL says otherwise.
func startEngram(ctx context.Context, keep string, env Env, tune ...func(*config.Config)) (_ *benchEngram, err error) {
	b := &benchEngram{keep: keep != ""}
	if b.keep {
		if b.home, err = filepath.Abs(keep); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(b.home, 0o700); err != nil {
			return nil, fmt.Errorf("create --keep home: %w", err)
		}
	} else if b.home, err = os.MkdirTemp("", "engram-bench-"); err != nil {
		return nil, err
	}
	cfg, err := server.LoadConfig(b.home, env.Getenv)
	if err != nil {
		b.removeHome()
		return nil, err
	}
	cfg.Addr, cfg.Token = "127.0.0.1:0", ""
	cfg.Version = env.Version
	if env.Getenv("ENGRAM_LOG_LEVEL") == "" {
		cfg.LogLevel = "warn"
	}
	for _, f := range tune {
		f(&cfg.Config)
	}
	b.cfg = cfg.Config
	lvl, _ := config.ParseLevel(cfg.LogLevel)
	b.srv, err = server.Start(ctx, cfg, slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: lvl})))
	if err != nil {
		b.removeHome()
		return nil, err
	}
	b.client = httpapi.NewClient("http://"+b.srv.Addr(), "")
	return b, nil
}

// onEngram starts a private engram, runs run on it and closes it. The error
// is run's, else Close's; the context's when it has ended, since a canceled
// bench fails wherever it was. A kept home is named on env.Stderr, as
// "engram bench NAME: home kept in DIR".
func onEngram(ctx context.Context, name, keep string, env Env, run func(*benchEngram) error) error {
	b, err := startEngram(ctx, keep, env)
	if err != nil {
		return err
	}
	err = run(b)
	if cerr := b.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	if b.keep {
		fmt.Fprintf(env.Stderr, "engram bench %s: home kept in %s\n", name, b.home)
	}
	return nil
}

// Close stops the server and the engine and removes a temporary home.
func (b *benchEngram) Close() error {
	var err error
	if !b.closed {
		err = b.srv.Close()
	}
	if rerr := b.removeHome(); err == nil {
		err = rerr
	}
	return err
}

func (b *benchEngram) removeHome() error {
	if b.keep {
		return nil
	}
	return os.RemoveAll(b.home)
}

// waitIndexed waits until the server reports every archived turn in its
// keyword index, so that no answer depends on how fast the indexer happened
// to be. (Recall itself waits briefly for the other indexes and says so in
// its warnings, which the report shows.)
func (b *benchEngram) waitIndexed(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		var h engram.Health
		if err := b.client.Do(ctx, http.MethodGet, "/v1/health", nil, &h); err != nil {
			return fmt.Errorf("GET /v1/health: %w", err)
		}
		if h.IndexLag == 0 && h.IndexedSeq >= h.ArchiveSeq {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the index is still %d turns behind the archive after %s (status %s: %s)",
				h.IndexLag, timeout, h.Status, strings.Join(h.Problems, "; "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// candidateModes are the recall modes a benchmark measures when none is
// given, in report order: those of them the server accepts. shallow (vector)
// and deep (fusion) are the modes the design promises; naming them here
// means a benchmark measures them the day the server learns them, with no
// change to the bench.
var candidateModes = []string{engram.ModeKeyword, engram.ModeShallow, engram.ModeHybrid, engram.ModeDeep, engram.ModeAuto}

// probeNamespace is where mode probes search: a namespace no benchmark
// writes, so probes find nothing and change nothing.
const probeNamespace = "bench-probe"

// checkRecall asks the server one recall with mode and k, to learn before any
// work whether it accepts them. A refusal is returned as the server's
// *engram.Error (code EINVALID, field "mode" for an unknown mode).
func (b *benchEngram) checkRecall(ctx context.Context, mode string, k int) error {
	_, err := b.client.Recall(ctx, engram.RecallRequest{Namespace: probeNamespace, Query: "engram bench probe", K: k, Mode: mode})
	return err
}

// recallModes returns the modes to measure: each of given, which the server
// must accept, or when none is given every candidate mode the server
// accepts. A refusal of a given mode or of k is a usage error carrying the
// server's message.
func (b *benchEngram) recallModes(ctx context.Context, given []string, k int) ([]string, error) {
	modes, candidates := given, given
	if len(given) == 0 {
		modes, candidates = nil, candidateModes
	}
	for _, mode := range candidates {
		err := b.checkRecall(ctx, mode, k)
		var e *engram.Error
		switch {
		case err == nil:
			if len(given) == 0 {
				modes = append(modes, mode)
			}
		case !errors.As(err, &e) || e.Code != engram.EINVALID:
			return nil, fmt.Errorf("recall in mode %s: %w", mode, err)
		case e.Field == "mode" && len(given) == 0:
			// Not a mode this server knows (yet).
		case e.Field == "mode":
			return nil, &UsageError{Msg: fmt.Sprintf("the server refuses --mode %s: %s", mode, e.Error())}
		default:
			return nil, &UsageError{Msg: fmt.Sprintf("the server refuses --k %d: %s", k, e.Error())}
		}
	}
	if len(modes) == 0 {
		return nil, fmt.Errorf("the server accepts none of the recall modes %s", strings.Join(candidateModes, ", "))
	}
	return modes, nil
}

// cutoffs returns the ranks at which scores are reported: 1, 5 and 10 as far
// as k reaches, and k itself.
func cutoffs(k int) []int {
	var cs []int
	for _, c := range []int{1, 5, 10} {
		if c < k {
			cs = append(cs, c)
		}
	}
	return append(cs, k)
}

// latencyReport summarises recall latencies in milliseconds: measured by the
// client around each HTTP request, and the server's own took_ms.
type latencyReport struct {
	Requests    int     `json:"requests"`
	ClientP50MS float64 `json:"client_p50_ms"`
	ClientP95MS float64 `json:"client_p95_ms"`
	ClientMaxMS float64 `json:"client_max_ms"`
	ServerP50MS float64 `json:"server_p50_ms"`
}

func newLatencyReport(client []time.Duration, server []float64) latencyReport {
	ms := make([]float64, len(client))
	for i, d := range client {
		ms[i] = float64(d.Microseconds()) / 1000
	}
	return latencyReport{
		Requests:    len(client),
		ClientP50MS: percentile(ms, 0.50),
		ClientP95MS: percentile(ms, 0.95),
		ClientMaxMS: percentile(ms, 1),
		ServerP50MS: percentile(server, 0.50),
	}
}

// percentile returns the nearest-rank p-quantile of xs (0 for none).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// plural returns "1 turn", "2 turns" (package textutil).
var plural = textutil.Plural
