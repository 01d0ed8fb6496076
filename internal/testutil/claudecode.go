package testutil

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// CCSession is the session id of the Claude Code fixtures' transcripts.
const CCSession = "5f3c2a9e-7d41-4b8e-9c1a-2e6f0b8d4a17"

// CCTranscript copies the Claude Code fixture transcript fixture (of the
// fixtures folder fixtures) into a fresh projects folder under dir, named
// name, and returns its path.
func CCTranscript(tb testing.TB, fixtures, dir, fixture, name string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, fixture))
	if err != nil {
		tb.Fatal(err)
	}
	p := filepath.Join(dir, "-home-dev-src-billing-api", name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

// CCHookInput is the fixture hook input of event (fixtures/hook-EVENT.json)
// for session, transcript and prompt.
func CCHookInput(tb testing.TB, fixtures, event, session, transcript, prompt string) string {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixtures, "hook-"+event+".json"))
	if err != nil {
		tb.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(b, &in); err != nil {
		tb.Fatal(err)
	}
	in["transcript_path"], in["session_id"] = transcript, session
	if _, ok := in["prompt"]; ok {
		in["prompt"] = prompt
	}
	out, _ := json.Marshal(in)
	return string(out)
}

// CCOffsets reads the Claude Code hook's transcript offsets in home.
func CCOffsets(tb testing.TB, home string) map[string]int64 {
	tb.Helper()
	var f struct {
		Transcripts map[string]int64 `json:"transcripts"`
	}
	b, err := os.ReadFile(filepath.Join(home, "hooks", "claude-code-offsets.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		tb.Fatal(err)
	}
	return f.Transcripts
}

// WriteTree writes files (name: contents; a name ending in / is a folder)
// into dir.
func WriteTree(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for name, body := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o700); err != nil {
				tb.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			tb.Fatal(err)
		}
	}
}
