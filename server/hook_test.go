package server_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/claudecode"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/server"
)

const ccFixtures = "../testdata/claudecode"

// TestRunHook runs the Claude Code hook through the home's server, and on
// the home opened here: Stop archives the first session quietly; a prompt
// in a new session gets the memory; a trigger phrase gets deep recall;
// offsets stop before the line being written and advance once it is
// complete.
func TestRunHook(t *testing.T) {
	for _, served := range []bool{false, true} {
		t.Run(map[bool]string{false: "here", true: "served"}[served], func(t *testing.T) {
			home := filepath.Join(t.TempDir(), "home")
			if served {
				s := startServer(t, home, nil)
				if err := server.WriteServeInfo(home, s.Addr()); err != nil { // as engram serve does
					t.Fatal(err)
				}
			}
			testHookFlow(t, home)
		})
	}
}

func testHookFlow(t *testing.T, home string) {
	ctx := t.Context()
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var logged []error
	run := func(in string, budget int) string {
		t.Helper()
		h := &claudecode.Hook{Home: home, Limits: cfg.Limits(), Budget: budget, Pack: recall.Pack,
			Log: func(err error) { logged = append(logged, err) }}
		out, err := server.RunHook(ctx, cfg, h, strings.NewReader(in))
		if err != nil {
			t.Fatalf("RunHook: %v", err)
		}
		return out
	}
	projects := t.TempDir()
	first := testutil.CCTranscript(t, ccFixtures, projects, "session.jsonl", testutil.CCSession+".jsonl")
	if out := run(testutil.CCHookInput(t, ccFixtures, "Stop", testutil.CCSession, first, ""), claudecode.DefaultHookBudget); out != "" {
		t.Fatalf("Stop: %q", out)
	}
	st, _ := os.Stat(first)
	off := testutil.CCOffsets(t, home)[first]
	if off <= 0 || off >= st.Size() {
		t.Fatalf("offset %d after Stop, want inside (0, %d): the partial last line must stay unread", off, st.Size())
	}
	second := filepath.Join(filepath.Dir(first), "second.jsonl")
	os.WriteFile(second, []byte(`{"type":"user","uuid":"c0000000-0000-4000-8000-000000000001","sessionId":"second","cwd":"/home/dev/src/billing-api","timestamp":"2026-05-03T08:00:00Z","message":{"role":"user","content":"Starting on the staging deploy today."}}`+"\n"), 0o600)

	out := run(testutil.CCHookInput(t, ccFixtures, "UserPromptSubmit", "second", second, "which port does the staging database use?"), claudecode.DefaultHookBudget)
	if !strings.Contains(out, "<engram-memory mode=") || !strings.Contains(out, "6543") {
		t.Fatalf("UserPromptSubmit: %q", out)
	}
	if strings.Contains(out, "Starting on the staging deploy") {
		t.Errorf("the current session's own turn was recalled:\n%s", out)
	}
	if strings.Contains(out, "mode=\"deep\"") {
		t.Errorf("a plain prompt ran deep:\n%s", out)
	}
	out = run(testutil.CCHookInput(t, ccFixtures, "UserPromptSubmit", "second", second, "do you remember which port the staging database uses?"), 400)
	if !strings.Contains(out, `mode="deep"`) || !strings.Contains(out, "6543") {
		t.Fatalf("trigger phrase: %q", out)
	}
	if n := len(strings.Fields(out)); n > 400 {
		t.Errorf("context of %d words over a 400-token budget", n)
	}

	// The line being written completes: the next hook archives it.
	f, _ := os.OpenFile(first, os.O_APPEND|os.O_WRONLY, 0)
	b, _ := os.ReadFile(filepath.Join(ccFixtures, "session.jsonl"))
	full := `{"parentUuid": "a0000000-0000-4000-8000-000000000010", "isSidechain": false, "cwd": "/home/dev/src/billing-api", "sessionId": "` + testutil.CCSession + `", "type": "user", "uuid": "a0000000-0000-4000-8000-000000000011", "timestamp": "2026-05-01T09:01:00.000Z", "message": {"role": "user", "content": "Now deploy it with scripts/deploy.sh"}}`
	partial := string(b[strings.LastIndexByte(string(b), '\n')+1:])
	if !strings.HasPrefix(full, partial[:40]) {
		t.Fatalf("fixture's partial line changed: %q", partial)
	}
	f.Truncate(st.Size() - int64(len(partial)))
	f.WriteString(full + "\n")
	f.Close()
	out = run(testutil.CCHookInput(t, ccFixtures, "SessionEnd", testutil.CCSession, first, ""), claudecode.DefaultHookBudget)
	st, _ = os.Stat(first)
	if out != "" || testutil.CCOffsets(t, home)[first] != st.Size() {
		t.Fatalf("SessionEnd: %q, offset %d of %d", out, testutil.CCOffsets(t, home)[first], st.Size())
	}
	be, err := server.OpenBackend(ctx, cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer be.Close()
	resp, err := be.Recall(ctx, engram.RecallRequest{Namespace: "cc-billing-api", Mode: engram.ModeKeyword, Query: "deploy.sh", K: 10})
	if err != nil || len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "scripts/deploy.sh") {
		t.Errorf("completed line not archived: %+v, %v", resp.Results, err)
	}
	if len(logged) > 0 {
		t.Errorf("the hook logged: %v", errors.Join(logged...))
	}
}

// TestRunHookForeignHome: a home that holds another program's files is
// refused before the hook reads its input, and nothing is written into it.
func TestRunHookForeignHome(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "engram.db"), []byte("SQLite format 3\x00"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := filetest.Snapshot(t, home)
	cfg, err := server.LoadConfig(home, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	h := &claudecode.Hook{Home: home, Limits: cfg.Limits(), Pack: recall.Pack, Log: func(err error) { t.Errorf("logged: %v", err) }}
	var fe *homedir.ForeignError
	if _, err := server.RunHook(t.Context(), cfg, h, strings.NewReader(`{"hook_event_name":"Stop"}`)); !errors.As(err, &fe) {
		t.Fatalf("RunHook on another program's home: %v", err)
	}
	filetest.MustBeUnchanged(t, "the hook", home, before)
}
