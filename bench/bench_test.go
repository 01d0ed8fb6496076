package bench

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
)

// TestOptionsRefused: settings no run can take are usage errors naming
// the flag, before any engram starts.
func TestOptionsRefused(t *testing.T) {
	good := ScaleOptions{Turns: 1, Namespaces: 1, Batch: 1, Posts: 1, Questions: 1}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for want, o := range map[string]ScaleOptions{
		"--turns must be at least 1, got 0":      {Namespaces: 1, Batch: 1, Posts: 1, Questions: 1},
		"--questions must be at least 1, got -2": {Turns: 1, Namespaces: 1, Batch: 1, Posts: 1, Questions: -2},
		"--batch must be at most":                {Turns: 1, Namespaces: 1, Batch: engram.DefaultMaxBatch + 1, Posts: 1, Questions: 1},
	} {
		var ue *UsageError
		if _, err := RunScale(context.Background(), Env{}, o); !errors.As(err, &ue) || !strings.HasPrefix(ue.Msg, want) {
			t.Errorf("%+v: %v, want %q", o, err, want)
		}
	}
	var ue *UsageError
	if _, err := RunLocomo(context.Background(), LocomoOptions{K: 0}, Env{}); !errors.As(err, &ue) || ue.Msg != "--k must be at least 1, got 0" {
		t.Errorf("k 0: %v", err)
	}
}

// TestOutput: the report goes to --out as JSON, and to w as JSON or
// printed.
func TestOutput(t *testing.T) {
	rep := map[string]int{"turns": 3}
	print := func(w io.Writer) error { _, err := io.WriteString(w, "3 turns\n"); return err }
	out := filepath.Join(t.TempDir(), "r.json")
	var w bytes.Buffer
	if err := Output(&w, rep, print, out, false); err != nil || w.String() != "3 turns\n" {
		t.Fatalf("printed %q, %v", w.String(), err)
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != "{\n  \"turns\": 3\n}\n" {
		t.Fatalf("--out holds %q, %v", b, err)
	}
	w.Reset()
	if err := Output(&w, rep, print, "", true); err != nil || w.String() != "{\n  \"turns\": 3\n}\n" {
		t.Fatalf("--json printed %q, %v", w.String(), err)
	}
	if err := Output(&w, rep, print, filepath.Join(out, "no", "dir"), false); err == nil || !strings.HasPrefix(err.Error(), "--out: ") {
		t.Fatalf("bad --out: %v", err)
	}
}
