package server_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"

	"github.com/engram-dev/engram/server"
)

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startServer serves home in this process as `engram serve` does: the
// configuration of its config.toml and of env (ENGRAM_* variables), on a
// free loopback port, until the test ends.
func startServer(t *testing.T, home string, env map[string]string) *server.Server {
	t.Helper()
	s, _ := serve(t, home, env)
	return s
}

// serve is startServer, and returns too a stop that closes the server
// before the test ends (the end of the test then does nothing more).
func serve(t *testing.T, home string, env map[string]string) (*server.Server, func()) {
	t.Helper()
	return serveLogged(t, home, env, quiet())
}

// serveLogged is serve with the server's log written to logger.
func serveLogged(t *testing.T, home string, env map[string]string, logger *slog.Logger) (*server.Server, func()) {
	t.Helper()
	cfg, err := server.LoadConfig(home, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:0"
	srv, err := server.Start(t.Context(), cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			if err := srv.Close(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return srv, stop
}

// call sends body (JSON; none when nil) to the server's path and decodes
// the answer into out (when not nil); it returns the status.
func call(t *testing.T, srv *server.Server, method, path string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, "http://"+srv.Addr()+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %v: %s", method, path, resp.StatusCode, err, raw)
		}
	}
	return resp.StatusCode
}
