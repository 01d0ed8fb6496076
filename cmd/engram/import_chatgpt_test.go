package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var chatgptExport = filepath.Join("..", "..", "testdata", "importer", "chatgpt", "conversations.json")

// TestImportChatGPTLocal imports the export twice into a home with no
// server: the second run archives nothing.
func TestImportChatGPTLocal(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	r := runCLI(t, home, "", "import", "chatgpt", "--namespace", "gpt", chatgptExport)
	if r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	want := "2 conversations, 14 messages read, 9 turns archived (0 already present), 5 skipped " +
		"(1 empty message, 1 hidden message, 1 non-text content (code), 1 non-text content (execution_output), 1 system message), 0 bad"
	if !strings.Contains(r.stderr, want) {
		t.Errorf("report:\n%s\nwant %q", r.stderr, want)
	}
	r = runCLI(t, home, "", "import", "chatgpt", chatgptExport, "--namespace", "gpt")
	if r.code != 0 || !strings.Contains(r.stderr, "0 turns archived (9 already present)") {
		t.Fatalf("re-import must add nothing: %+v", r)
	}
	r = runCLI(t, home, "", "stats")
	if r.code != 0 || !strings.Contains(r.stdout, "archive: 9 turns") {
		t.Errorf("stats: %+v", r)
	}
	// Only the current branch: the regenerated answer is not there, the
	// final one is, with its ChatGPT meta.
	r = runCLI(t, home, "", "recall", "--json", "--namespace", "gpt", "capital of Australia")
	if r.code != 0 {
		t.Fatalf("recall: %+v", r)
	}
	if strings.Contains(r.stdout, "Sydney") || !strings.Contains(r.stdout, "Canberra") {
		t.Errorf("recall shows another branch than the current one:\n%s", r.stdout)
	}
	var resp recallResponse
	if err := json.Unmarshal([]byte(r.stdout), &resp); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, res := range resp.Results {
		for _, s := range res.Sources {
			if s.ID == "chatgpt-a3-regen" && strings.Contains(compact(s.Meta), `"conversation":"conv-1"`) {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("recall lacks chatgpt-a3-regen with its meta:\n%s", r.stdout)
	}
}

// TestImportChatGPTServer imports through a running server, then again
// without it: the ids are the same either way.
func TestImportChatGPTServer(t *testing.T) {
	home := t.TempDir()
	s := startServer(t, home)
	r := runCLI(t, home, "", "import", "chatgpt", chatgptExport)
	if r.code != 0 || !strings.Contains(r.stderr, "9 turns archived (0 already present)") {
		t.Fatalf("import through the server: %+v\n%s", r, s.stderr)
	}
	r = runCLI(t, home, "", "import", "chatgpt", chatgptExport)
	if r.code != 0 || !strings.Contains(r.stderr, "0 turns archived (9 already present)") {
		t.Fatalf("re-import through the server: %+v", r)
	}
	s.stop(t)
	r = runCLI(t, home, "", "import", "chatgpt", "--quiet", chatgptExport)
	if r.code != 0 || !strings.Contains(r.stderr, "0 turns archived (9 already present)") {
		t.Fatalf("re-import without the server: %+v", r)
	}
}

func TestImportChatGPTErrors(t *testing.T) {
	home := t.TempDir()
	dir := t.TempDir()
	notExport := filepath.Join(dir, "x.json")
	if err := os.WriteFile(notExport, []byte(`{"not":"an array"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"import", "chatgpt"}, 2, "engram import chatgpt: want exactly one conversations.json"},
		{[]string{"import", "chatgpt", filepath.Join(dir, "missing.json")}, 2, "no file"},
		{[]string{"import", "chatgpt", notExport}, 1, "not a ChatGPT export"},
		// Bad conversations are reported and skipped, good ones kept: exit 1.
		{[]string{"import", "chatgpt", filepath.Join("..", "..", "testdata", "importer", "chatgpt", "malformed.json")}, 1,
			"conversation 3 (cyc): the parents of node"},
	} {
		r := runCLI(t, home, "", tc.args...)
		if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, r.code, tc.code, tc.want, r.stderr)
		}
	}
	r := runCLI(t, home, "", "stats")
	if !strings.Contains(r.stdout, "archive: 2 turns") {
		t.Errorf("the good conversation of malformed.json was not kept: %+v", r)
	}
}
