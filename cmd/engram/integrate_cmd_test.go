package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// settingsHooks reads a settings file's hooks: event -> commands.
func settingsHooks(t *testing.T, path string) (map[string]any, map[string][]string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	cmds := map[string][]string{}
	hooks, _ := s["hooks"].(map[string]any)
	for ev, groups := range hooks {
		for _, g := range groups.([]any) {
			for _, h := range g.(map[string]any)["hooks"].([]any) {
				cmds[ev] = append(cmds[ev], h.(map[string]any)["command"].(string))
			}
		}
	}
	return s, cmds
}

func TestIntegrateClaudeCode(t *testing.T) {
	home := t.TempDir()
	project := t.TempDir()
	path := filepath.Join(project, ".claude", "settings.json")
	os.MkdirAll(filepath.Dir(path), 0o700)
	orig := `{
  "model": "opus",
  "permissions": {"allow": ["Bash(go test:*)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "gofmt -w \"$FILE\""}]}],
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}]
  }
}
`
	os.WriteFile(path, []byte(orig), 0o644)

	r := runCLI(t, home, "", "integrate", "claude-code", "--project", project)
	if r.code != 0 {
		t.Fatalf("integrate: %+v", r)
	}
	s, cmds := settingsHooks(t, path)
	if s["model"] != "opus" || s["permissions"] == nil {
		t.Errorf("other settings lost: %v", s)
	}
	if len(cmds["PostToolUse"]) != 1 || len(cmds["Stop"]) != 2 || cmds["Stop"][0] != "notify-send done" {
		t.Errorf("other hooks changed: %v", cmds)
	}
	for _, ev := range []string{"UserPromptSubmit", "Stop", "SessionEnd"} {
		c := cmds[ev][len(cmds[ev])-1]
		if !strings.Contains(c, "hook claude-code") || !strings.Contains(c, home) || !filepath.IsAbs(strings.Fields(c)[0]) {
			t.Errorf("%s: command %q", ev, c)
		}
	}
	if b, _ := os.ReadFile(path + ".engram-backup"); string(b) != orig {
		t.Errorf("backup %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}

	// Again: no duplicates, and the backup stays the original.
	r = runCLI(t, home, "", "integrate", "claude-code", "--project", project)
	if r.code != 0 || !strings.Contains(r.stdout, "nothing to change") {
		t.Fatalf("second integrate: %+v", r)
	}
	if _, cmds := settingsHooks(t, path); len(cmds["UserPromptSubmit"]) != 1 || len(cmds["Stop"]) != 2 {
		t.Errorf("duplicated: %v", cmds)
	}

	// --print changes nothing and shows the snippet.
	before, _ := os.ReadFile(path)
	r = runCLI(t, home, "", "integrate", "claude-code", "--print")
	var snippet struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Type, Command string
				Timeout       int
			}
		}
	}
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &snippet) != nil || len(snippet.Hooks) != 3 ||
		snippet.Hooks["UserPromptSubmit"][0].Hooks[0].Type != "command" || snippet.Hooks["Stop"][0].Hooks[0].Timeout == 0 {
		t.Errorf("--print: %+v", r)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("--print changed the settings")
	}

	// --remove takes ours out and leaves the rest.
	r = runCLI(t, home, "", "integrate", "claude-code", "--project", project, "--remove")
	if r.code != 0 {
		t.Fatalf("remove: %+v", r)
	}
	s, cmds = settingsHooks(t, path)
	if len(cmds) != 2 || len(cmds["Stop"]) != 1 || len(cmds["PostToolUse"]) != 1 || s["model"] != "opus" {
		t.Errorf("after remove: %v", cmds)
	}

	// A project with no settings yet; remove empties the hooks object.
	fresh := t.TempDir()
	if r := runCLI(t, home, "", "integrate", "claude-code", "--project", fresh, "--namespace", "work"); r.code != 0 {
		t.Fatalf("fresh: %+v", r)
	}
	fp := filepath.Join(fresh, ".claude", "settings.json")
	if _, cmds := settingsHooks(t, fp); !strings.Contains(cmds["Stop"][0], "--namespace work") {
		t.Errorf("fresh: %v", cmds)
	}
	if _, err := os.Stat(fp + ".engram-backup"); err == nil {
		t.Error("backup of a file that did not exist")
	}
	runCLI(t, home, "", "integrate", "claude-code", "--project", fresh, "--remove")
	if s, _ := settingsHooks(t, fp); len(s) != 0 {
		t.Errorf("after remove: %v", s)
	}

	// Bad settings are left alone.
	os.WriteFile(path, []byte("{not json"), 0o644)
	if r := runCLI(t, home, "", "integrate", "claude-code", "--project", project); r.code != 1 || !strings.Contains(r.stderr, "not a JSON object") {
		t.Errorf("broken settings: %+v", r)
	}
	if r := runCLI(t, home, "", "integrate", "cursor"); r.code != 2 {
		t.Errorf("unknown integration: %+v", r)
	}
}
