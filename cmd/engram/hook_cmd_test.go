package main_test

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/testutil"
)

const ccFixtures = "../../testdata/claudecode"

func hookLog(home string) string {
	b, _ := os.ReadFile(filepath.Join(home, "logs", "hook.log"))
	return string(b)
}

// TestHookClaudeCodeOutput: the hook prints nothing on Stop and, on a
// prompt, the memories recalled for it, exiting 0 either way (server's
// TestRunHook checks what the hook archives and recalls, on the home
// opened here and through a server).
func TestHookClaudeCodeOutput(t *testing.T) {
	home := t.TempDir()
	first := testutil.CCTranscript(t, ccFixtures, t.TempDir(), "session.jsonl", testutil.CCSession+".jsonl")
	r := runCLI(t, home, testutil.CCHookInput(t, ccFixtures, "Stop", testutil.CCSession, first, ""), "hook", "claude-code")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("Stop: exit %d stdout %q stderr %q log %s", r.code, r.stdout, r.stderr, hookLog(home))
	}
	r = runCLI(t, home, testutil.CCHookInput(t, ccFixtures, "UserPromptSubmit", "second", first, "which port does the staging database use?"), "hook", "claude-code", "--budget", "400")
	if r.code != 0 || !strings.Contains(r.stdout, "<engram-memory mode=") || !strings.Contains(r.stdout, "6543") {
		t.Fatalf("UserPromptSubmit: exit %d stdout %q stderr %q log %s", r.code, r.stdout, r.stderr, hookLog(home))
	}
	if log := hookLog(home); log != "" {
		t.Errorf("hook.log not empty:\n%s", log)
	}
}

// TestHookClaudeCodeNeverFails: broken stdin, a broken or missing transcript,
// a bad command line and a stopped server: exit 0, nothing on stdout, the
// error in hook.log.
func TestHookClaudeCodeNeverFails(t *testing.T) {
	home := t.TempDir()
	projects := t.TempDir()
	broken := testutil.CCTranscript(t, ccFixtures, projects, "broken.jsonl", "broken.jsonl")
	fifo := filepath.Join(projects, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, stdin string
		args        []string
		log         string
	}{
		{"bad stdin", `{"hook_event_name": "UserPromptSubmit", "prompt": `, nil, "hook input is not JSON"},
		{"empty stdin", "", nil, "hook input is not JSON"},
		{"missing transcript", testutil.CCHookInput(t, ccFixtures, "UserPromptSubmit", "x", filepath.Join(projects, "nope.jsonl"), "invoice renderer?"), nil, "nope.jsonl"},
		{"broken transcript", testutil.CCHookInput(t, ccFixtures, "Stop", "b", broken, ""), nil, "line ending at byte"},
		{"bad flag", testutil.CCHookInput(t, ccFixtures, "Stop", "b", broken, ""), []string{"--bogus"}, "bogus"},
		// A FIFO no one writes held the hook in open(2), /dev/zero fed
		// it for ever: both past its deadline, with the home's lock held.
		{"a FIFO", testutil.CCHookInput(t, ccFixtures, "Stop", "f", fifo, ""), nil, "is a named pipe (FIFO), not a regular file"},
		{"/dev/zero", testutil.CCHookInput(t, ccFixtures, "Stop", "z", "/dev/zero", ""), nil, "/dev/zero is a device, not a regular file"},
		{"no integration", testutil.CCHookInput(t, ccFixtures, "Stop", "b", broken, ""), []string{"codex"}, "want 'engram hook claude-code'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"hook"}, tc.args...)
			if len(tc.args) == 0 || tc.args[0] != "codex" {
				args = append(args, "claude-code")
			}
			os.Remove(filepath.Join(home, "logs", "hook.log"))
			r := runCLI(t, home, tc.stdin, args...)
			if r.code != 0 || r.stdout != "" {
				t.Fatalf("exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
			}
			if !strings.Contains(hookLog(home), tc.log) {
				t.Errorf("hook.log lacks %q:\n%s", tc.log, hookLog(home))
			}
		})
	}
	// The broken transcript's good lines were archived, past its bad ones.
	st, _ := os.Stat(broken)
	if off := testutil.CCOffsets(t, home)[broken]; off != st.Size() {
		t.Errorf("offset %d, want %d", off, st.Size())
	}
	r := runCLI(t, home, "", "recall", "--namespace", "cc-billing-api", "--mode", "keyword", "wkhtmltopdf")
	if !strings.Contains(r.stdout, "2 results") {
		t.Errorf("good lines of the broken transcript not archived:\n%s", r.stdout)
	}

	// A stopped (SIGSTOP) server holds the home: the hook gives up quietly.
	s := startServer(t, home)
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.cmd.Process.Signal(syscall.SIGCONT) })
	os.Remove(filepath.Join(home, "logs", "hook.log"))
	r = runCLI(t, home, testutil.CCHookInput(t, ccFixtures, "UserPromptSubmit", "x", broken, "what renders the invoice PDFs?"), "hook", "claude-code")
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("stopped server: exit %d stdout %q", r.code, r.stdout)
	}
	// Not timed: the hook gave up because the server did not answer its
	// probe and holds the home, not because its own 8 s deadline (or
	// Claude Code's 10 s) ran out.
	if log := hookLog(home); !strings.Contains(log, "in use by another engram process") || strings.Contains(log, "deadline exceeded") {
		t.Errorf("hook.log with a stopped server:\n%s", log)
	}
	s.cmd.Process.Signal(syscall.SIGCONT)
	s.stop(t)
}

func TestHookClaudeCodeHelp(t *testing.T) {
	r := runCLI(t, t.TempDir(), "", "hook", "--help")
	if r.code != 0 || !strings.Contains(r.stdout, "Usage: engram hook claude-code") {
		t.Fatalf("%+v", r)
	}
}

// BenchmarkHookUserPromptSubmit runs the real binary as Claude Code would,
// against a running server holding a realistic transcript, with one new
// line per prompt, and reports the median wall time, process start
// included.
func BenchmarkHookUserPromptSubmit(b *testing.B) {
	home := b.TempDir()
	s := startServerTB(b, home)
	defer s.kill()
	projects := b.TempDir()
	first := testutil.CCTranscript(b, ccFixtures, projects, "session.jsonl", testutil.CCSession+".jsonl")
	if r := runCLI(b, home, testutil.CCHookInput(b, ccFixtures, "Stop", testutil.CCSession, first, ""), "hook", "claude-code"); r.code != 0 {
		b.Fatal(r)
	}
	cur := filepath.Join(filepath.Dir(first), "current.jsonl")
	f, err := os.Create(cur)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var times []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		line, _ := json.Marshal(map[string]any{"type": "user", "uuid": "bench-" + time.Now().Format("150405.000000000") + "-" + string(rune('a'+i%26)),
			"sessionId": "current", "cwd": "/home/dev/src/billing-api", "timestamp": time.Now().UTC().Format(time.RFC3339Nano),
			"message": map[string]any{"role": "user", "content": "Let's look at the staging database settings again."}})
		f.Write(append(line, '\n'))
		cmd := exec.Command(engramBin, "hook", "claude-code")
		cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home)
		cmd.Stdin = strings.NewReader(testutil.CCHookInput(b, ccFixtures, "UserPromptSubmit", "current", cur, "which port does the staging database use?"))
		start := time.Now()
		out, err := cmd.Output()
		times = append(times, time.Since(start))
		if err != nil || !strings.Contains(string(out), "6543") {
			b.Fatalf("hook: %v %q\n%s", err, out, hookLog(home))
		}
	}
	b.StopTimer()
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(times[len(times)*9/10].Microseconds())/1000, "p90-ms")
}

// startServerTB is startServer for a benchmark: `engram serve` on a free
// port, waited for until it answers.
func startServerTB(b *testing.B, home string) *server {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := &server{addr: addr, stderr: &bytes.Buffer{}, exited: make(chan error, 1), done: make(chan struct{})}
	s.cmd = exec.Command(engramBin, "serve", "--addr", addr)
	s.cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait(); close(s.done) }()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); {
		if resp, err := http.Get("http://" + addr + "/v1/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		select {
		case err := <-s.exited:
			b.Fatalf("engram serve exited: %v\n%s", err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
	}
	s.kill()
	b.Fatalf("engram serve did not answer within 60s\n%s", s.stderr)
	return nil
}
