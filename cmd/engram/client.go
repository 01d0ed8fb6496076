package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/atomicfile"
)

// serveFile, in the home, tells CLI commands where the running server of
// that home listens, so they talk to it instead of opening the home (which
// the server has locked).
const serveFile = "serve.json"

type serveInfo struct {
	Addr      string    `json:"addr"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
}

// backend is what CLI commands need: a local engine, or the running server.
type backend interface {
	engram.IngestService
	engram.RecallService
	engram.StatusService
	Close() error
}

// openBackend returns a client of the home's running server if one answers,
// else opens the home in this process.
func (m *Main) openBackend(ctx context.Context, cfg Config) (backend, error) {
	if c := discoverServer(ctx, cfg); c != nil {
		return c, nil
	}
	return openEngine(ctx, cfg, m.logger(cfg))
}

func discoverServer(ctx context.Context, cfg Config) *remote {
	b, err := os.ReadFile(filepath.Join(cfg.Home, serveFile))
	if err != nil {
		return nil
	}
	var info serveInfo
	if json.Unmarshal(b, &info) != nil || info.Addr == "" {
		return nil
	}
	c := &remote{base: "http://" + info.Addr, token: cfg.Token, http: &http.Client{Timeout: 5 * time.Minute}}
	hctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var h engram.Health
	if err := c.do(hctx, http.MethodGet, "/v1/health", nil, &h); err != nil {
		return nil
	}
	return c
}

func writeServeInfo(home string, info serveInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(home, serveFile), b, 0o600)
}

func removeServeInfo(home string) {
	if err := os.Remove(filepath.Join(home, serveFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintln(os.Stderr, "engram: remove", serveFile+":", err)
	}
}

// remote is a client of a running engram's HTTP API.
type remote struct {
	base  string
	token string
	http  *http.Client
}

func (c *remote) Close() error { return nil }

func (c *remote) Ingest(ctx context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	type wire struct {
		Turns []engram.TurnInput `json:"turns"`
	}
	body := wire{Turns: make([]engram.TurnInput, len(turns))}
	for i, t := range turns {
		body.Turns[i] = engram.TurnInput{
			ID: t.ID, Namespace: t.Namespace, Session: t.Session, Role: string(t.Role),
			Speaker: t.Speaker, Content: t.Content, TS: t.TS.Format(time.RFC3339Nano), Meta: t.Meta,
		}
	}
	var res engram.IngestResult
	err := c.do(ctx, http.MethodPost, "/v1/turns", body, &res)
	return res, err
}

func (c *remote) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	var resp engram.RecallResponse
	err := c.do(ctx, http.MethodPost, "/v1/recall", req, &resp)
	return resp, err
}

func (c *remote) Health(ctx context.Context) engram.Health {
	var h engram.Health
	if err := c.do(ctx, http.MethodGet, "/v1/health", nil, &h); err != nil {
		return engram.Health{Status: "unreachable", Problems: []string{err.Error()}}
	}
	return h
}

func (c *remote) Stats(ctx context.Context) (engram.Stats, error) {
	var st engram.Stats
	err := c.do(ctx, http.MethodGet, "/v1/stats", nil, &st)
	return st, err
}

func (c *remote) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return engram.Errorf(engram.EUNAVAILABLE, "engram server at %s: %v", c.base, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode >= 300 {
		var e struct {
			Error struct{ Code, Message, Field string } `json:"error"`
		}
		if json.Unmarshal(b, &e) == nil && e.Error.Code != "" {
			return &engram.Error{Code: e.Error.Code, Field: e.Error.Field, Message: e.Error.Message}
		}
		return engram.Errorf(engram.EINTERNAL, "engram server: %s", resp.Status)
	}
	return json.Unmarshal(b, out)
}
