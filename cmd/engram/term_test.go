package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/palace"
)

// hostile are texts that drive a terminal: colours (CSI), the window title
// (OSC 0, ended by BEL), the clipboard (OSC 52), a link (OSC 8, ended by
// ST), CSI as one C1 character, a raw C1 byte, a carriage return that
// overwrites the line, NUL and DEL.
var hostile = []string{
	"\x1b[31mred\x1b[0m",
	"\x1b]0;pwned title\x07",
	"\x1b]52;c;ZWNobyBoaQ==\x07",
	"\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\",
	"\u009b2J",
	"raw \x9b byte",
	"fine\rFAKE",
	"nul\x00del\x7f",
}

// rawControl returns the first control character of s that a terminal
// acts on (not newline or tab), or -1.
func rawControl(s string) rune {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			return rune(s[i])
		}
		if (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f) {
			return r
		}
		i += size
	}
	return -1
}

func TestTermText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, 中文\n\tindented", "plain text, 中文\n\tindented"},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"\x1b]0;t\x07", `\x1b]0;t\x07`},
		{"\x1b]8;;u\x1b\\x", `\x1b]8;;u\x1b\x`},
		{"\u009b2J", `\u009b2J`},
		{"a\x9bb", `a\x9bb`},
		{"a\rb", `a\x0db`},
		{"\x00\x7f", `\x00\x7f`},
	} {
		if got := termText(tc.in); got != tc.want {
			t.Errorf("termText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	for _, h := range hostile {
		if r := rawControl(termText(h)); r >= 0 {
			t.Errorf("termText(%q) keeps %U", h, r)
		}
	}
	// JSON output: DEL and the C1 controls, which encoding/json leaves raw,
	// are escaped, and the JSON means the same.
	js, _ := json.Marshal(map[string]string{"t": strings.Join(hostile, " ")})
	esc := jsonControls(js)
	if r := rawControl(string(esc)); r >= 0 {
		t.Errorf("jsonControls keeps %U: %s", r, esc)
	}
	var back map[string]string
	if err := json.Unmarshal(esc, &back); err != nil || back["t"] != strings.ToValidUTF8(strings.Join(hostile, " "), "\uFFFD") {
		t.Errorf("jsonControls changed the JSON: %q, %v", back["t"], err)
	}
}

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
	p, err := palace.Open(filepath.Join(home, engine.PalaceFile), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var mems []engram.Memory
	var scenes []engram.SceneWrite
	ts := layerDay(0)
	for i, h := range hostile {
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
	for i, h := range hostile {
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
			if r := rawControl(out); r >= 0 {
				t.Errorf("%v: %s holds the raw control %U:\n%q", args, what, r, out)
			}
		}
		if !slices.Contains(args, "--json") && !strings.Contains(stdout, `\x1b`) {
			t.Errorf("%v: the escapes are not shown as \\x1b:\n%s", args, stdout)
		}
	}
}
