package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
)

// TestCommandsEscapeStoredText: turns, memories and scenes whose text, ids,
// sessions and speakers hold terminal escapes are printed by recall,
// memories and scenes with those escapes visible and inert, in text and in
// JSON.
func TestCommandsEscapeStoredText(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte("extractor = \"none\"\nlog_level = \"warn\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := palace.Open(filepath.Join(home, homedir.PalaceFile), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var mems []engram.Memory
	var scenes []engram.SceneWrite
	ts := layerDay(0)
	for i, h := range testutil.Hostile {
		id := "m" + string(rune('a'+i))
		mems = append(mems, engram.Memory{ID: id, Namespace: "default", Type: engram.MemoryFact, Subject: "zebu " + h,
			Text: "zebu memory " + h, Importance: 0.5, TS: ts, ValidFrom: ts, Sources: []string{"t" + id}})
		scenes = append(scenes, engram.SceneWrite{Scene: engram.Scene{ID: "sc" + id, Namespace: "default", Session: "s" + h,
			Title: "zebu scene " + h, Summary: "zebu summary " + h, Start: ts, End: ts, Participants: []string{"Al" + h}, Turns: []string{"t" + id}}})
	}
	if _, err := p.PutMemories(ctx, "test", mems, 0); err != nil {
		t.Fatal(err)
	}
	if err := p.PutScenes(ctx, "test", scenes, 0); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i, h := range testutil.Hostile {
		b, err := json.Marshal(map[string]any{"id": "turn" + string(rune('a'+i)), "session": "sess", "speaker": "Eve",
			"role": "user", "content": "zebu turn " + h, "meta": map[string]string{"k": h}})
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b))
	}
	file := filepath.Join(t.TempDir(), "turns.jsonl")
	if err := os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runMain(t, "--home", home, "ingest", "--quiet", file); code != 0 {
		t.Fatalf("ingest: exit %d\n%s", code, stderr)
	}
	for _, args := range [][]string{
		{"recall", "--mode", "keyword", "--k", "20", "zebu"},
		{"recall", "--mode", "keyword", "--k", "20", "--json", "zebu"},
		{"recall", "--k", "20", "--budget", "2000", "zebu"},
		{"memories"},
		{"memories", "--json"},
		{"memories", "zebu"},
		{"scenes"},
	} {
		code, stdout, stderr := runMain(t, append([]string{"--home", home}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		if !strings.Contains(stdout, "zebu") {
			t.Fatalf("%v printed none of the texts:\n%s", args, stdout)
		}
		for what, out := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if r := testutil.RawControl(out); r >= 0 {
				t.Errorf("%v: %s holds the raw control %U:\n%q", args, what, r, out)
			}
		}
		if !slices.Contains(args, "--json") && !strings.Contains(stdout, `\x1b`) {
			t.Errorf("%v: the escapes are not shown as \\x1b:\n%s", args, stdout)
		}
	}
}
