package pgpalace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/scheduler"
)

// TestWorkers_MessagesWithNUL: a job's error and a skip's reason may quote
// a model's output or a turn, NUL bytes and invalid UTF-8 included, which
// PostgreSQL's text refuses: they are recorded without them, not lost to
// an error of the record itself.
func TestWorkers_MessagesWithNUL(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	const bad = "unusable output: {\"text\": \"a\x00b\xff\"}"
	const want = "unusable output: {\"text\": \"ab\uFFFD\"}"
	st := scheduler.State{Name: "l1-memories", LastRun: time.Unix(100, 0), LastError: bad, Failures: 2}
	if err := db.JobStates().Save(ctx, st); err != nil {
		t.Fatalf("save a job state whose error holds a NUL: %v", err)
	}
	states, err := db.JobStates().Load(ctx)
	if err != nil || states["l1-memories"].LastError != want {
		t.Fatalf("job state read back: %+v, %v; want the error %q", states["l1-memories"], err, want)
	}
	if err := db.Skip(ctx, "l1-memories", 1, 5, bad); err != nil {
		t.Fatalf("skip with a reason that holds a NUL: %v", err)
	}
	skips, err := db.Skips(ctx, 10)
	if err != nil || len(skips) != 1 || skips[0].Error != want {
		t.Fatalf("skips read back: %+v, %v; want one with %q", skips, err, want)
	}
}

// TestLongNames_TooLarge: a name or key longer than PostgreSQL's b-tree
// rows take (2,704 bytes, after compression) is ETOOLARGE saying so, not
// a database failure. The layer jobs cut what extraction writes below it
// (pipeline's storable); this is what a direct caller meets.
func TestLongNames_TooLarge(t *testing.T) {
	db := open(t)
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	for b.Len() < 3000 {
		fmt.Fprintf(&b, "w%x ", rng.Uint64())
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	err := db.ApplyTriples(ctx, "g", []engram.Triple{{ID: "tr1", Namespace: "default", Subject: "Ana", Predicate: "likes", Object: b.String(),
		ValidFrom: at, Confidence: 1, Sources: []string{"t1"}}}, 1)
	if engram.ErrorCode(err) != engram.ETOOLARGE || !strings.Contains(err.Error(), "longer than the database's index takes") {
		t.Fatalf("a triple naming a paragraph: %v, want ETOOLARGE saying so", err)
	}
}
