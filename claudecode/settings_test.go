package claudecode_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/claudecode"
)

// TestIntegrate: engram's hooks go in beside the user's, a second run
// changes nothing, and remove takes out only engram's.
func TestIntegrate(t *testing.T) {
	path, err := claudecode.SettingsPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	orig := `{"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}`
	os.MkdirAll(filepath.Dir(path), 0o700)
	os.WriteFile(path, []byte(orig), 0o644)
	const command = "/usr/local/bin/engram --home /h" + claudecode.HookMarker
	read := func() string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	if changed, err := claudecode.Integrate(path, command, false); !changed || err != nil {
		t.Fatalf("integrate: changed %v, err %v", changed, err)
	}
	s := read()
	if strings.Count(s, command) != len(claudecode.HookEvents) || !strings.Contains(s, "notify-send done") || !strings.Contains(s, `"opus"`) {
		t.Fatalf("settings after integrate:\n%s", s)
	}
	if changed, err := claudecode.Integrate(path, command, false); changed || err != nil {
		t.Fatalf("again: changed %v, err %v", changed, err)
	}
	if changed, err := claudecode.Integrate(path, command, true); !changed || err != nil {
		t.Fatalf("remove: changed %v, err %v", changed, err)
	}
	if s := read(); strings.Contains(s, command) || !strings.Contains(s, "notify-send done") {
		t.Fatalf("settings after remove:\n%s", s)
	}
	if b, _ := os.ReadFile(path + ".engram-backup"); string(b) != orig {
		t.Fatalf("backup %q", b)
	}
}

// TestIntegrateRefusesHooksNotObject leaves a settings file whose "hooks"
// is no object as it is.
func TestIntegrateRefusesHooksNotObject(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	os.WriteFile(path, []byte(`{"hooks": []}`), 0o600)
	if _, err := claudecode.Integrate(path, "engram"+claudecode.HookMarker, false); err == nil || !strings.Contains(err.Error(), `"hooks" is not an object`) {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != `{"hooks": []}` {
		t.Fatalf("file changed: %s", b)
	}
}

// TestIngesterTranscripts archives every transcript, reports progress
// after each, and names the transcript that failed.
func TestIngesterTranscripts(t *testing.T) {
	be := &hookBackend{}
	g, err := claudecode.NewIngester(be, t.TempDir(), engram.Limits{}, "")
	if err != nil {
		t.Fatal(err)
	}
	var done []int
	paths := []string{filepath.Join(fixtures, "session.jsonl"), filepath.Join(fixtures, "broken.jsonl")}
	if err := g.Transcripts(context.Background(), paths, func(n int) { done = append(done, n) }); err != nil {
		t.Fatal(err)
	}
	if len(done) != 2 || done[1] != 2 || g.Archived != len(be.turns) || g.Archived == 0 || g.Bad == 0 {
		t.Fatalf("progress %v, archived %d of %d sent, %d bad", done, g.Archived, len(be.turns), g.Bad)
	}
	missing := filepath.Join(t.TempDir(), "gone.jsonl")
	if err := g.Transcripts(context.Background(), []string{missing}, func(int) {}); err == nil || !strings.HasPrefix(err.Error(), missing+": ") {
		t.Fatalf("missing transcript: %v", err)
	}
}
