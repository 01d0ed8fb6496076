package main_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPStdioMalformedLines: `engram mcp` answers each malformed line of
// its stdin (garbage, a raw NUL in a string, nesting deeper than JSON
// decoders take, trailing data, JSON that is no JSON-RPC message, a batch)
// with a JSON-RPC error and goes on serving the lines after it, as /mcp over
// HTTP does; it exits 0 when stdin closes. The binary runs on real pipes,
// and each answer is read before the next line is written.
func TestMCPStdioMalformedLines(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cmd := exec.Command(engramBin, "mcp")
	cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home, "ENGRAM_EXTRACTOR=none")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		cmd.Process.Kill()
		cmd.Wait()
	})
	lines := bufio.NewReader(stdout)
	type reply struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(stdin, line+"\n"); err != nil {
			t.Fatalf("write %.60q: %v (the process has exited?)\n%s", line, err, stderr.String())
		}
	}
	read := func(what string) reply {
		t.Helper()
		b, err := lines.ReadBytes('\n')
		if err != nil {
			t.Fatalf("%s: no answer: %v; stderr:\n%s", what, err, stderr.String())
		}
		var r reply
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: the answer is not JSON: %v: %q", what, err, b)
		}
		return r
	}
	wantError := func(what, line string, code int) {
		t.Helper()
		send(line)
		r := read(what)
		if r.Error == nil || r.Error.Code != code || string(r.ID) != "null" || r.Error.Message == "" {
			t.Fatalf("%s: want error %d with id null, got %+v (id %s)", what, code, r.Error, r.ID)
		}
	}
	wantResult := func(what, line, id string) reply {
		t.Helper()
		send(line)
		r := read(what)
		if r.Error != nil || len(r.Result) == 0 || string(r.ID) != id {
			t.Fatalf("%s: want a result for id %s, got %+v (id %s)", what, id, r.Error, r.ID)
		}
		return r
	}

	wantError("garbage", "this is not json", -32700)
	wantResult("initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`, "1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	wantError("raw NUL in a string", "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\",\"params\":{\"x\":\"a\x00b\"}}", -32700)
	deep := strings.Repeat("[", 20000) + strings.Repeat("]", 20000)
	wantError("deep nesting", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":`+deep+`}}`, -32700)
	wantError("trailing data", `{"jsonrpc":"2.0","id":4,"method":"ping"} {}`, -32700)
	wantError("half a message", `{"jsonrpc":"2.0","id":5,"meth`, -32700)
	wantError("no JSON-RPC message", `{"hello":"world"}`, -32600)
	wantError("a batch", `[{"jsonrpc":"2.0","id":6,"method":"ping"}]`, -32600)
	wantResult("ping", `{"jsonrpc":"2.0","id":7,"method":"ping"}`, "7")
	r := wantResult("tools/list", `{"jsonrpc":"2.0","id":"eight","method":"tools/list"}`, `"eight"`)
	if !strings.Contains(string(r.Result), `"recall"`) {
		t.Fatalf("tools/list lacks recall: %s", r.Result)
	}
	if err := stdin.Close(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("engram mcp at the end of stdin: %v\n%s", err, stderr.String())
	}
}
