package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const agentMap = "content=payload.parts,ts=event.ts,session=event.thread.id,role=event.sender.type,speaker=event.sender.name,id=event.id,meta=tags"

var agentJSONL = filepath.Join("..", "..", "testdata", "importer", "jsonl", "agent.jsonl")

func TestImportJSONLLocal(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	r := runCLI(t, home, "", "import", "jsonl", "--map", agentMap, "--namespace", "agents", agentJSONL)
	if r.code != 1 {
		t.Fatalf("bad lines must exit 1: %+v", r)
	}
	for _, want := range []string{
		"line 5: content: nothing at \"payload.parts\"",
		"line 6: not valid JSON",
		"line 7: ts: \"yesterday-ish\" is not a time",
		"line 8: role: unknown role \"narrator\"",
		"agent.jsonl: 8 lines read, 4 turns archived (0 already present), 0 skipped, 4 bad",
		"4 lines were not imported",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	r = runCLI(t, home, "", "import", "jsonl", "--map", agentMap, "--namespace", "agents", agentJSONL)
	if !strings.Contains(r.stderr, "0 turns archived (4 already present)") {
		t.Errorf("re-import must add nothing:\n%s", r.stderr)
	}
	r = runCLI(t, home, "", "recall", "--namespace", "agents", "--json", "Main Street")
	if r.code != 0 || !strings.Contains(r.stdout, "jsonl-evt-2") || !strings.Contains(r.stdout, `"channel": "web"`) {
		t.Errorf("recall: %+v", r)
	}
}

// TestImportJSONLServer imports through a server without an id mapping, then
// a copy of the file from another folder locally: the hashed ids depend on
// the file's base name, not its folder, so the copy adds nothing.
func TestImportJSONLServer(t *testing.T) {
	home := t.TempDir()
	good := filepath.Join("..", "..", "testdata", "importer", "jsonl", "good.jsonl")
	s := startServer(t, home)
	args := []string{"import", "jsonl", "--map", "content=text,role=who", "--map", "ts=at", good}
	r := runCLI(t, home, "", args...)
	if r.code != 0 || !strings.Contains(r.stderr, "good.jsonl: 3 lines read, 3 turns archived (0 already present)") {
		t.Fatalf("import through the server: %+v\n%s", r, s.stderr)
	}
	s.stop(t)
	copied := filepath.Join(t.TempDir(), "good.jsonl")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(copied, b, 0o600); err != nil {
		t.Fatal(err)
	}
	args[len(args)-1] = copied
	r = runCLI(t, home, "", args...)
	if r.code != 0 || !strings.Contains(r.stderr, "3 lines read, 0 turns archived (3 already present)") {
		t.Fatalf("re-import of a copy, locally: %+v", r)
	}
}

func TestImportJSONLUsage(t *testing.T) {
	home := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "jsonl", agentJSONL}, "want --map content=PATH"},
		{[]string{"import", "jsonl", "--map", "ts=t", agentJSONL}, "the mapping needs content=PATH"},
		{[]string{"import", "jsonl", "--map", "content=c,colour=x", agentJSONL}, `"colour=x": want FIELD=PATH`},
		{[]string{"import", "jsonl", "--map", "content=c"}, "want exactly one FILE"},
		{[]string{"import", "jsonl", "--map", "content=c", "nope.jsonl"}, "no file nope.jsonl"},
	} {
		r := runCLI(t, home, "", tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "Run 'engram import jsonl --help'") {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", tc.args, r.code, tc.want, r.stderr)
		}
	}
	r := runCLI(t, home, `{"m":"from stdin"}`+"\n", "import", "jsonl", "--map", "content=m", "-")
	if r.code != 0 || !strings.Contains(r.stderr, "stdin: 1 lines read, 1 turns archived") {
		t.Errorf("stdin: %+v", r)
	}
}
