package bench

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestBenchContention runs the benchmark small: both phases ask every
// question, the writers acknowledge turns, and the report prints.
func TestBenchContention(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a private engram")
	}
	var stderr bytes.Buffer
	getenv := func(k string) string {
		if k == "ENGRAM_EXTRACTOR" {
			return "none"
		}
		return ""
	}
	rep, err := RunContention(context.Background(), Env{Getenv: getenv, Stderr: &stderr, Version: "test"},
		ContentionOptions{Turns: 200, Namespaces: 2, Writers: 2, Readers: 2, Batch: 10, Questions: 10, Seed: 1})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if rep.Idle.Requests != 10 || rep.Writes.Requests != 10 || rep.Idle.Found == 0 || rep.WrittenTurns == 0 || rep.P99Ratio == 0 {
		t.Fatalf("report: %+v", rep)
	}
	var out bytes.Buffer
	if err := rep.Print(&out); err != nil || !strings.Contains(out.String(), "under 2 writers") {
		t.Fatalf("print: %v\n%s", err, out.String())
	}
}

func TestContentionOptionsCheck(t *testing.T) {
	ok := ContentionOptions{Turns: 1, Namespaces: 1, Readers: 1, Batch: 1, Questions: 1}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		o    ContentionOptions
		flag string
	}{
		{ContentionOptions{Turns: 0, Namespaces: 1, Readers: 1, Batch: 1, Questions: 1}, "--turns"},
		{ContentionOptions{Turns: 1, Namespaces: 1, Readers: 1, Batch: 1, Questions: 1, Writers: -1}, "--writers"},
		{ContentionOptions{Turns: 1, Namespaces: 1, Readers: 1, Batch: 100000, Questions: 1}, "--batch"},
	} {
		if err := tc.o.Check(); err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: %v, want an error naming %s", tc.o, err, tc.flag)
		}
	}
}
