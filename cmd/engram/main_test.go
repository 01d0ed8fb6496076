package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/engram-dev/engram/internal/testutil"
)

// engramBin is the engram binary built once for the end-to-end tests.
var engramBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "engram-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	engramBin = filepath.Join(dir, "engram")
	args := []string{"build", "-o", engramBin}
	// The binary the end-to-end tests run is built with the race detector
	// only on request: the packages' own tests run under -race, and a raced
	// binary in every subprocess made this package take most of `make test`.
	if raceEnabled && os.Getenv("ENGRAM_E2E_RACE") == "1" {
		args = append(args, "-race")
	}
	out, err := exec.Command("go", append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build engram: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one CLI run produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs the engram binary with home as ENGRAM_HOME.
func runCLI(t testing.TB, home, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(engramBin, args...)
	cmd.Env = append(os.Environ(), "ENGRAM_HOME="+home)
	cmd.Stdin = strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// runCmd runs cmd and returns its exit status and output; a command that
// cannot run at all fails the test.
func runCmd(t testing.TB, cmd *exec.Cmd) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, stdout.String(), stderr.String()}
}

// server is a running `engram serve`.
type server struct {
	cmd    *exec.Cmd
	addr   string
	stderr *bytes.Buffer
	exited chan error
	done   chan struct{} // closed when the process has exited
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer starts `engram serve` on home and waits until it answers.
func startServer(t *testing.T, home string, extraEnv ...string) *server {
	t.Helper()
	s := &server{addr: freeAddr(t), stderr: &bytes.Buffer{}, exited: make(chan error, 1), done: make(chan struct{})}
	s.cmd = exec.Command(engramBin, "serve", "--addr", s.addr)
	s.cmd.Env = append(append(os.Environ(), "ENGRAM_HOME="+home), extraEnv...)
	s.cmd.Stderr = s.stderr
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() { // never leave a server behind a failed test
		select {
		case <-s.done:
		default:
			s.cmd.Process.Kill()
			<-s.done
		}
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get("http://" + s.addr + "/v1/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return s
			}
		}
		select {
		case err := <-s.exited:
			t.Fatalf("engram serve exited before answering: %v\n%s", err, s.stderr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.cmd.Process.Kill()
			t.Fatalf("engram serve did not answer within 60s\n%s", s.stderr)
		}
	}
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(t *testing.T) {
	t.Helper()
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			t.Fatalf("engram serve exited with %v after SIGTERM\n%s", err, s.stderr)
		}
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		t.Fatalf("engram serve did not stop within 30s of SIGTERM\n%s", s.stderr)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (s *server) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

// post sends a JSON body and decodes the answer.
func (s *server) post(ctx context.Context, path string, body any, out any) (int, error) {
	return testutil.PostJSON(ctx, "http://"+s.addr+path, body, out)
}

// get fetches path and decodes the JSON answer.
func (s *server) get(ctx context.Context, path string, out any) (int, error) {
	return testutil.GetJSON(ctx, "http://"+s.addr+path, out)
}

type recallResponse struct {
	Mode    string `json:"mode"`
	Results []struct {
		ID      string          `json:"id"`
		Text    string          `json:"text"`
		Meta    json.RawMessage `json:"meta"`
		Sources []struct {
			ID   string          `json:"id"`
			Meta json.RawMessage `json:"meta"`
		} `json:"sources"`
	} `json:"results"`
}
