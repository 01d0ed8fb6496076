package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

func TestScaleCorpus(t *testing.T) {
	c, err := parseCorpus(scaleCorpus)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.templates) < 50 {
		t.Fatalf("%d templates", len(c.templates))
	}
	for _, bad := range []string{"I met {nobody}.", "@slot\nx", "I met {name.", "# only a comment"} {
		if _, err := parseCorpus("@name Ann Bo\n" + bad); err == nil {
			t.Errorf("parseCorpus accepts %q", bad)
		}
	}
	a, b := newScaleGen(c, 3, 7), newScaleGen(c, 3, 7)
	sessions := map[string]string{}
	for i := range 200 {
		x, y := a.next(), b.next()
		if x.Content != y.Content || x.ID != y.ID || !x.TS.Equal(y.TS) || x.Session != y.Session {
			t.Fatalf("turn %d differs for the same seed: %+v, %+v", i, x, y)
		}
		if strings.ContainsAny(x.Content, "{}_") || x.Content == "" {
			t.Fatalf("turn %d: %q", i, x.Content)
		}
		if ns, ok := sessions[x.Session]; ok && ns != x.Namespace {
			t.Fatalf("session %s in %s and %s", x.Session, ns, x.Namespace)
		}
		sessions[x.Session] = x.Namespace
	}
	if len(sessions) != 200/sessionTurns {
		t.Fatalf("%d sessions", len(sessions))
	}
}

func TestBenchScale(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a private engram")
	}
	var stderr bytes.Buffer
	// The rules extractor: the nlp one's tagger is slow under the race
	// detector, and what is tested here is the benchmark, not the extractor.
	getenv := func(k string) string {
		if k == "ENGRAM_EXTRACTOR" {
			return "rules"
		}
		return ""
	}
	heap := filepath.Join(t.TempDir(), "heap.prof")
	rep, err := RunScale(context.Background(), Env{Getenv: getenv, Stderr: &stderr, Version: "test"},
		ScaleOptions{Turns: 200, Namespaces: 2, Batch: 20, Posts: 10, Questions: 5, Modes: []string{engram.ModeKeyword, engram.ModeHybrid}, Seed: 1,
			MemProfile: heap})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, f := range []string{heap, heap + ".peak"} {
		// A profile is gzipped protocol buffers.
		if b, err := os.ReadFile(f); err != nil || len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("heap profile %s: %d bytes, %v", f, len(b), err)
		}
	}
	if rep.Idle.Posts < 10 || rep.Idle.Batches < 10 || rep.UnderJobs.Posts == 0 || rep.RebuildSeconds == 0 {
		t.Fatalf("report: %+v", rep)
	}
	if rep.Memories == 0 || rep.RSSAfterJobsMB == 0 || rep.BytesPerTurn == 0 || rep.HomeParts["archive"] == 0 {
		t.Fatalf("report: %+v", rep)
	}
	for _, r := range rep.Recall {
		if r.Latency.Requests != 5 || r.Found == 0 {
			t.Fatalf("recall %s: %+v", r.Mode, r)
		}
	}
	var out bytes.Buffer
	if err := rep.Print(&out); err != nil || !strings.Contains(out.String(), "under jobs") {
		t.Fatalf("print: %v\n%s", err, out.String())
	}
}
