package main

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/kwindex"
)

func TestPercentile(t *testing.T) {
	var xs []time.Duration
	for i := 200; i >= 1; i-- { // unsorted on purpose
		xs = append(xs, time.Duration(i)*time.Millisecond)
	}
	orig := slices.Clone(xs)
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{50, 100 * time.Millisecond}, {99, 198 * time.Millisecond}, {100, 200 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := percentile(xs, tc.p); got != tc.want {
			t.Errorf("p%g of 1..200 ms = %v, want %v", tc.p, got, tc.want)
		}
	}
	if !slices.Equal(xs, orig) {
		t.Error("percentile reordered its argument")
	}
	// Nearest rank: p95 of ten values is the tenth, not the ninth nor a
	// value between them.
	ten := []time.Duration{10, 9, 8, 7, 6, 5, 4, 3, 2, 1}
	if got := percentile(ten, 95); got != 10 {
		t.Errorf("p95 of 1..10 = %v, want 10", got)
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one value = %v, want it", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of none = %v, want 0", got)
	}
}

func TestParseStatus(t *testing.T) {
	const status = "Name:\tengram\nVmPeak:\t 2209800 kB\nVmHWM:\t  280360 kB\nVmRSS:\t  270000 kB\nThreads:\t12\n"
	m, err := parseStatus(strings.NewReader(status))
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS != 270000*1024 || m.HWM != 280360*1024 {
		t.Errorf("got RSS %d, HWM %d; want %d, %d", m.RSS, m.HWM, 270000*1024, 280360*1024)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"no VmHWM", "VmRSS:\t 10 kB\n", "no VmHWM line"},
		{"no VmRSS (a kernel thread)", "Name:\tkthreadd\nThreads:\t1\n", "no VmRSS line"},
		{"not kB", "VmRSS:\t 10 MB\nVmHWM:\t 10 kB\n", "VmRSS"},
		{"not a number", "VmRSS:\t 10 kB\nVmHWM:\t ten kB\n", "VmHWM"},
		{"negative", "VmRSS:\t -1 kB\nVmHWM:\t 10 kB\n", "VmRSS"},
	} {
		if _, err := parseStatus(strings.NewReader(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

// TestReadStatus reads this process's own /proc status, as teambench reads
// a server's.
func TestReadStatus(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("/proc/PID/status is Linux's")
	}
	m, err := readStatus(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.HWM < m.RSS {
		t.Errorf("RSS %d, HWM %d: want 0 < RSS <= HWM", m.RSS, m.HWM)
	}
	if _, err := readStatus(-1); err == nil {
		t.Error("the status of no process read without an error")
	}
}

func TestParseOptions_BadInput(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "engram")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const pg = "postgres://postgres@127.0.0.1:5433/engram"
	noEnv := func(string) string { return "" }
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-postgres", pg}, "-bin is required"},
		{[]string{"-bin", filepath.Join(dir, "missing"), "-postgres", pg}, "-bin"},
		{[]string{"-bin", plain, "-postgres", pg}, "not an executable"},
		{[]string{"-bin", dir, "-postgres", pg}, "not an executable"},
		{[]string{"-bin", bin, "-postgres", pg, "-turns", "0"}, "-turns"},
		{[]string{"-bin", bin, "-postgres", pg, "-clients", "-3"}, "-clients"},
		{[]string{"-bin", bin, "-postgres", pg, "-clients", "1"}, "two servers"},
		{[]string{"-bin", bin, "-postgres", pg, "-batch", "0"}, "-batch"},
		{[]string{"-bin", bin, "-postgres", pg, "-queries", "0"}, "-queries"},
		{[]string{"-bin", bin, "-postgres", pg, "-probes", "0"}, "-probes"},
		{[]string{"-bin", bin, "-postgres", pg, "-configs", "files,pg3"}, `"pg3"`},
		{[]string{"-bin", bin, "-postgres", pg, "-configs", "pg1,pg1"}, "twice"},
		{[]string{"-bin", bin, "-postgres", pg, "-configs", ""}, "-configs"},
		{[]string{"-bin", bin, "-postgres", pg, "-mode", "deep"}, "-mode"},
		{[]string{"-bin", bin}, "-postgres"},
		{[]string{"-bin", bin, "-postgres", "mysql://root@host/db"}, "-postgres"},
		{[]string{"-bin", bin, "-postgres", "postgres://u:secret@/db"}, "xxxxx"},
		{[]string{"-bin", bin, "-cluster", "80"}, "-cluster"},
		{[]string{"-bin", bin, "-postgres", pg, "extra"}, `"extra"`},
		{[]string{"-bin", bin, "-turns", "many"}, "-turns"},
	} {
		_, err := parseOptions(tc.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: err = %v, want one naming %q", tc.args, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%q: the error shows the password: %v", tc.args, err)
		}
	}
	// Good input: the files configuration alone needs no PostgreSQL, and
	// the URL may come from the environment.
	if o, err := parseOptions([]string{"-bin", bin, "-configs", "files"}, noEnv, io.Discard); err != nil || !slices.Equal(o.configs, []string{"files"}) {
		t.Errorf("files alone: %+v, %v", o, err)
	}
	env := func(k string) string {
		if k == "ENGRAM_TEST_POSTGRES_URL" {
			return pg
		}
		return ""
	}
	if o, err := parseOptions([]string{"-bin", bin}, env, io.Discard); err != nil || o.pgURL != pg || len(o.configs) != 5 {
		t.Errorf("URL from the environment: %+v, %v", o, err)
	}
}

// TestCorpus: a turn is the same whatever corpus value makes it (the
// clients ask for them in any order), and a question holds words of its
// turn.
func TestCorpus(t *testing.T) {
	a, b := newCorpus(41, 2000), newCorpus(41, 2000)
	for _, i := range []int{0, 1, 999, 123456} {
		if ta, tb := a.turn(i), b.turn(i); ta != tb {
			t.Errorf("turn %d: %+v and %+v", i, ta, tb)
		}
		words := a.content(i)
		if len(words) < 8 || len(words) > 30 {
			t.Errorf("turn %d has %d words, want 8 to 30", i, len(words))
		}
		q := strings.Fields(a.question(i, rand.New(rand.NewPCG(1, uint64(i)))))
		if len(q) == 0 || len(q) > 3 {
			t.Errorf("question of turn %d: %q", i, q)
		}
		for _, w := range q {
			if !slices.Contains(words, w) {
				t.Errorf("question of turn %d holds %q, not one of its words", i, w)
			}
		}
	}
	if c := newCorpus(42, 2000); c.turn(5) == a.turn(5) {
		t.Error("another seed made the same turn")
	}
}

// TestProbeWords: every probe's word is one token that the keyword index
// keeps as it is (a word the Porter stemmer shortens could share its stem
// with another probe's, and recall on B would find that one), and no two
// are alike.
func TestProbeWords(t *testing.T) {
	seen := map[string]bool{}
	for i := range 5000 {
		w := "qx" + letters(i)
		var toks []string
		kwindex.Tokens(w, func(tok string) { toks = append(toks, tok) })
		if len(toks) != 1 || toks[0] != w {
			t.Fatalf("probe %d's word %q is indexed as %q", i, w, toks)
		}
		if seen[w] {
			t.Fatalf("probe %d's word %q is another probe's", i, w)
		}
		seen[w] = true
	}
}

// TestMeasure_KeepsWhatWasMeasured: a configuration that fails leaves the
// figures of those before it printed, and the error names it.
func TestMeasure_KeepsWhatWasMeasured(t *testing.T) {
	var out strings.Builder
	r := report{Turns: 10}
	err := r.measure([]string{"files", "pg1", "pg2"}, &out, func(cfg string) (configReport, error) {
		if cfg == "pg1" {
			return configReport{}, errProbeLost
		}
		return configReport{Config: cfg, Servers: 1, Ingest: ingestReport{TurnsPerSec: 123}}, nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), "pg1: ") {
		t.Fatalf("err = %v, want one naming pg1", err)
	}
	if !strings.Contains(out.String(), "files") || !strings.Contains(out.String(), "123") {
		t.Errorf("the figures of files are not printed:\n%s", out.String())
	}
	if strings.Contains(out.String(), "pg2") {
		t.Errorf("pg2 ran after pg1 failed:\n%s", out.String())
	}
}

func TestHomeBytes(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "archive"), 0o700); err != nil {
		t.Fatal(err)
	}
	for name, size := range map[string]int{"palace.db": 4096, "archive/2026-12.jsonl": 1000} {
		if err := os.WriteFile(filepath.Join(dir, name), make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "palace.db"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	n, err := homeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n != 5096 {
		t.Errorf("homeBytes = %d, want 5096 (two files; the link not counted again)", n)
	}
	if _, err := homeBytes(filepath.Join(dir, "none")); err == nil {
		t.Error("the size of a missing folder read without an error")
	}
}
