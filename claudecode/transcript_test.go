package claudecode_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/claudecode"
)

const fixtures = "../testdata/claudecode"

type mapped struct {
	id, role, speaker, content string
	sidechain                  bool
}

// TestMapFixture maps every line of a realistic transcript.
func TestMapFixture(t *testing.T) {
	var got []mapped
	var bad int
	var metas []claudecode.MetaCC
	end, err := claudecode.Scan(t.Context(), filepath.Join(fixtures, "session.jsonl"), 0, func(line []byte, _ int64) error {
		in, ok, err := claudecode.Mapper{}.Map(line)
		if err != nil {
			bad++
			return nil
		}
		if !ok {
			return nil
		}
		turn, err := in.Turn("", time.Time{}, engram.Limits{})
		if err != nil {
			t.Fatalf("turn %s: %v", in.ID, err)
		}
		var m claudecode.Meta
		if err := json.Unmarshal(turn.Meta, &m); err != nil {
			t.Fatal(err)
		}
		metas = append(metas, m.ClaudeCode)
		if turn.Namespace != "cc-billing-api" || turn.Session != "5f3c2a9e-7d41-4b8e-9c1a-2e6f0b8d4a17" {
			t.Errorf("turn %s: namespace %q session %q", turn.ID, turn.Namespace, turn.Session)
		}
		got = append(got, mapped{turn.ID, string(turn.Role), turn.Speaker, turn.Content, m.ClaudeCode.Sidechain})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d bad lines, want 0", bad)
	}
	st, _ := os.Stat(filepath.Join(fixtures, "session.jsonl"))
	if end >= st.Size() {
		t.Errorf("Scan ended at %d of %d: it consumed the partial last line", end, st.Size())
	}
	want := []mapped{
		{"cc-a0000000-0000-4000-8000-000000000002", "user", "user", "The staging database for billing-api runs on port 6543, not 5432. Please fix the config and run the tests.", false},
		{"cc-a0000000-0000-4000-8000-000000000004", "assistant", "claude", "I'll update the staging config to use port 6543.", false},
		{"cc-a0000000-0000-4000-8000-000000000005", "assistant", "claude", "[tool Edit: config/staging.yaml]", false},
		{"cc-a0000000-0000-4000-8000-000000000006", "tool", "", "", false}, // checked below
		{"cc-a0000000-0000-4000-8000-000000000007", "assistant", "claude", "[tool Bash: go test ./...]", false},
		{"cc-a0000000-0000-4000-8000-000000000008", "tool", "", "[tool error: ok github.com/acme/billing-api/config 0.012s FAIL github.com/acme/billing-api/db 0.101s]", false},
		{"cc-a0000000-0000-4000-8000-000000000009", "assistant", "claude", "Sub-agent: the db test fails because it still dials port 5432 in db/db_test.go.", true},
		{"cc-a0000000-0000-4000-8000-000000000010", "assistant", "claude", "Fixed: staging now uses port 6543 and db/db_test.go reads the port from the config.\n[tool Grep: 5432]", false},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d turns, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if w.content == "" { // the long tool result
			if !strings.HasPrefix(g.content, "[tool result: The file config/staging.yaml") && !strings.HasPrefix(g.content, "[tool result: The file /home/dev/src/billing-api/config/staging.yaml") {
				t.Errorf("turn %d content %q", i, g.content)
			}
			if n := len([]rune(g.content)); n > claudecode.DefaultResultChars+len("[tool result: ]") {
				t.Errorf("turn %d: tool result of %d characters not cut", i, n)
			}
			g.content = ""
		}
		if g != w {
			t.Errorf("turn %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
	if metas[1].Parent != "a0000000-0000-4000-8000-000000000003" || metas[0].Parent != "" || metas[0].CWD != "/home/dev/src/billing-api" {
		t.Errorf("meta parents: %+v %+v", metas[0], metas[1])
	}
}

func TestMapLines(t *testing.T) {
	const head = `{"sessionId":"s1","cwd":"/w/My Project","uuid":"u1","timestamp":"2026-05-01T09:00:00Z",`
	tests := []struct {
		name, line string
		ok, err    bool
		role       string
		content    string
	}{
		{"string prompt", head + `"type":"user","message":{"role":"user","content":"hello"}}`, true, false, "user", "hello"},
		{"thinking only", head + `"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"}]}}`, false, false, "", ""},
		{"text and thinking", head + `"type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":" yes "}]}}`, true, false, "assistant", "yes"},
		{"summary", `{"type":"summary","summary":"x","leafUuid":"u9"}`, false, false, "", ""},
		{"system", head + `"type":"system","content":"hooks ran"}`, false, false, "", ""},
		{"meta", head + `"type":"user","isMeta":true,"message":{"role":"user","content":"Caveat"}}`, false, false, "", ""},
		{"blank", "   ", false, false, "", ""},
		{"not json", `{"type":"user",`, false, true, "", ""},
		{"no uuid", `{"type":"user","sessionId":"s","message":{"role":"user","content":"x"}}`, false, true, "", ""},
		{"Write", head + `"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Write","input":{"file_path":"/w/My Project/a/b.go","content":"package b"}}]}}`, true, false, "assistant", "[tool Write: a/b.go]"},
		{"Read outside cwd", head + `"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Read","input":{"file_path":"/etc/hosts"}}]}}`, true, false, "assistant", "[tool Read: /etc/hosts]"},
		{"multi-line Bash", head + `"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"Bash","input":{"command":"cd x &&\n  make"}}]}}`, true, false, "assistant", "[tool Bash: cd x && make]"},
		{"unknown tool", head + `"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"mcp__engram__recall","input":{"query":"port"}}]}}`, true, false, "assistant", "[tool mcp__engram__recall: port]"},
		{"TodoWrite", head + `"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","name":"TodoWrite","input":{"todos":[]}}]}}`, true, false, "assistant", "[tool TodoWrite]"},
		{"empty result", head + `"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":""}]}}`, true, false, "tool", "[tool result]"},
		{"text with result", head + `"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"},{"type":"text","text":"and also"}]}}`, true, false, "user", "[tool result: ok]\nand also"},
		{"image only", head + `"type":"user","message":{"role":"user","content":[{"type":"image","source":{}}]}}`, false, false, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, ok, err := claudecode.Mapper{}.Map([]byte(tt.line))
			if (err != nil) != tt.err || ok != tt.ok {
				t.Fatalf("ok %v err %v, want ok %v err %v", ok, err, tt.ok, tt.err)
			}
			if !ok {
				return
			}
			if in.Role != tt.role || in.Content != tt.content || in.ID != "cc-u1" || in.Namespace != "cc-my-project" {
				t.Errorf("got %+v", in)
			}
		})
	}
}

func TestNamespace(t *testing.T) {
	for cwd, want := range map[string]string{
		"/home/dev/src/billing-api": "cc-billing-api",
		"/w/My Project/":            "cc-my-project",
		"":                          "cc-default",
		"/":                         "cc-default",
		"/x/日本":                     "cc-default",
		"/x/.hidden":                "cc-hidden",
	} {
		if got := claudecode.Namespace(cwd); got != want {
			t.Errorf("Namespace(%q) = %q, want %q", cwd, got, want)
		}
	}
	in, _, _ := claudecode.Mapper{Namespace: "work"}.Map([]byte(`{"type":"user","uuid":"u","sessionId":"s","cwd":"/a/b","message":{"role":"user","content":"x"}}`))
	if in.Namespace != "work" {
		t.Errorf("Mapper.Namespace ignored: %q", in.Namespace)
	}
}
