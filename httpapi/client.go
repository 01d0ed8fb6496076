package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/engram-dev/engram"
)

// DefaultClientTimeout bounds one request of a Client; a backup, which takes
// minutes on a large home, is not bounded (its context is).
const DefaultClientTimeout = 5 * time.Minute

// Client is a client of a running engram's HTTP API: how the CLI reaches
// the server that owns a home, and what `engram mcp` serves its tools
// through while one runs. Errors the server sends come back as the
// *engram.Error it sent (code, field, message); a server that cannot be
// reached is EUNAVAILABLE.
type Client struct {
	base  string
	token string
	http  *http.Client
}

var (
	_ engram.IngestService  = (*Client)(nil)
	_ engram.RecallService  = (*Client)(nil)
	_ engram.StatusService  = (*Client)(nil)
	_ engram.LayerService   = (*Client)(nil)
	_ engram.VaultAdmin     = (*Client)(nil)
	_ engram.BackupService  = (*Client)(nil)
	_ engram.ReindexService = (*Client)(nil)
	_ engram.ReembedService = (*Client)(nil)
)

// NewClient returns a client of the server at base ("http://HOST:PORT"),
// sending token as the bearer token when it is set.
func NewClient(base, token string) *Client {
	return &Client{base: base, token: token, http: &http.Client{Timeout: DefaultClientTimeout}}
}

// Base is the server's address, as given to NewClient.
func (c *Client) Base() string { return c.base }

// Close releases nothing: a Client holds no connection of its own. It lets
// a Client stand where an engine that must be closed could.
func (c *Client) Close() error { return nil }

// Ingest implements engram.IngestService through POST /v1/turns (with
// ?wait=archive under engram.IngestNoIndexWait).
func (c *Client) Ingest(ctx context.Context, turns []engram.Turn) (engram.IngestResult, error) {
	type wire struct {
		Turns []engram.TurnInput `json:"turns"`
	}
	body := wire{Turns: make([]engram.TurnInput, len(turns))}
	for i, t := range turns {
		body.Turns[i] = engram.TurnInput{
			ID: t.ID, Namespace: t.Namespace, Session: t.Session, Role: string(t.Role),
			Speaker: t.Speaker, Content: t.Content, Meta: t.Meta,
		}
		if !t.TS.IsZero() { // none: the server's now
			body.Turns[i].TS = t.TS.Format(time.RFC3339Nano)
		}
	}
	path := "/v1/turns"
	if !engram.IngestWaitsForIndex(ctx) {
		path += "?wait=archive"
	}
	return call[engram.IngestResult](ctx, c, http.MethodPost, path, body)
}

// Recall implements engram.RecallService through POST /v1/recall.
func (c *Client) Recall(ctx context.Context, req engram.RecallRequest) (engram.RecallResponse, error) {
	return call[engram.RecallResponse](ctx, c, http.MethodPost, "/v1/recall", req)
}

// Health implements engram.StatusService through GET /v1/health; a server
// that does not answer is "unreachable", with the error as its problem.
func (c *Client) Health(ctx context.Context) engram.Health {
	var h engram.Health
	if err := c.Do(ctx, http.MethodGet, "/v1/health", nil, &h); err != nil {
		return engram.Health{Status: "unreachable", Problems: []string{err.Error()}}
	}
	return h
}

// Stats implements engram.StatusService through GET /v1/stats.
func (c *Client) Stats(ctx context.Context) (engram.Stats, error) {
	return call[engram.Stats](ctx, c, http.MethodGet, "/v1/stats", nil)
}

// Do sends in (nil: no body) as JSON to path and decodes the answer into
// out.
func (c *Client) Do(ctx context.Context, method, path string, in, out any) error {
	return c.do(ctx, c.http, method, path, in, out)
}

// call sends in (nil: no body) to path and returns the answer.
func call[T any](ctx context.Context, c *Client, method, path string, in any) (T, error) {
	var out T
	err := c.Do(ctx, method, path, in, &out)
	return out, err
}

// get sends GET path?v and returns the answer.
func get[T any](ctx context.Context, c *Client, path string, v url.Values) (T, error) {
	var out T
	err := c.get(ctx, path, v, &out)
	return out, err
}

// get sends GET path?v and decodes the answer into out.
func (c *Client) get(ctx context.Context, path string, v url.Values, out any) error {
	if len(v) > 0 {
		path += "?" + v.Encode()
	}
	return c.Do(ctx, http.MethodGet, path, nil, out)
}

func (c *Client) do(ctx context.Context, hc *http.Client, method, path string, in, out any) error {
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
	resp, err := hc.Do(req)
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

// ListJobs lists the scheduled jobs (GET /v1/jobs).
func (c *Client) ListJobs(ctx context.Context) ([]engram.JobStatus, error) {
	var out struct{ Jobs []engram.JobStatus }
	err := c.Do(ctx, http.MethodGet, "/v1/jobs", nil, &out)
	return out.Jobs, err
}

// RunJob runs one job now (POST /v1/jobs/{name}/run) and returns its status
// after the run.
func (c *Client) RunJob(ctx context.Context, name string) (engram.JobStatus, error) {
	var st engram.JobStatus
	err := c.Do(ctx, http.MethodPost, "/v1/jobs/"+url.PathEscape(name)+"/run", nil, &st)
	return st, err
}

// RunJobs runs jobs one after the other, each through POST
// /v1/jobs/{name}/run, and returns their statuses after the runs: the job
// called name, or with due those whose next run is due, or every job.
// ENOTFOUND for a name the server has no job of.
func (c *Client) RunJobs(ctx context.Context, name string, due bool) ([]engram.JobStatus, error) {
	list, err := c.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	var out []engram.JobStatus
	for _, j := range list {
		if (name != "" && j.Name != name) || (due && !j.NextRun.IsZero() && j.NextRun.After(time.Now())) {
			continue
		}
		st, err := c.RunJob(ctx, j.Name)
		if err != nil {
			return out, err
		}
		out = append(out, st)
	}
	if name != "" && len(out) == 0 {
		return nil, engram.Errorf(engram.ENOTFOUND, "no job %q", name)
	}
	return out, nil
}

// StartReembed implements engram.ReembedService through POST /v1/reembed.
func (c *Client) StartReembed(ctx context.Context, model string) (engram.ReembedStatus, error) {
	return call[engram.ReembedStatus](ctx, c, http.MethodPost, "/v1/reembed", map[string]string{"model": model})
}

// Doctor runs the server's checks (GET /v1/doctor).
func (c *Client) Doctor(ctx context.Context) (engram.DoctorReport, error) {
	return call[engram.DoctorReport](ctx, c, http.MethodGet, "/v1/doctor", nil)
}

// StartReindex implements engram.ReindexService through POST /v1/reindex.
func (c *Client) StartReindex(ctx context.Context, req engram.ReindexRequest) (engram.ReindexStatus, error) {
	return call[engram.ReindexStatus](ctx, c, http.MethodPost, "/v1/reindex", req)
}

// ReindexStatus implements engram.ReindexService through GET /v1/reindex.
func (c *Client) ReindexStatus(ctx context.Context) (engram.ReindexStatus, error) {
	return call[engram.ReindexStatus](ctx, c, http.MethodGet, "/v1/reindex", nil)
}

// Backup implements engram.BackupService through POST /v1/backup: the
// server copies its home into req.Dir, a folder on its machine. No client
// timeout applies (a large home takes minutes); ctx ends the wait.
func (c *Client) Backup(ctx context.Context, req engram.BackupRequest) (engram.BackupReport, error) {
	var rep engram.BackupReport
	err := c.do(ctx, &http.Client{}, http.MethodPost, "/v1/backup", req, &rep)
	return rep, err
}

// Vaults implements engram.VaultAdmin through GET /v1/vaults.
func (c *Client) Vaults(ctx context.Context) ([]engram.VaultStatus, error) {
	var out struct {
		Vaults []engram.VaultStatus `json:"vaults"`
	}
	err := c.get(ctx, "/v1/vaults", nil, &out)
	return out.Vaults, err
}

// SyncVaults implements engram.VaultAdmin through POST /v1/vaults/sync.
func (c *Client) SyncVaults(ctx context.Context, root string) ([]engram.VaultSyncReport, error) {
	body := map[string]string{}
	if root != "" {
		body["vault"] = root
	}
	var out struct {
		Reports []engram.VaultSyncReport `json:"reports"`
	}
	err := c.Do(ctx, http.MethodPost, "/v1/vaults/sync", body, &out)
	return out.Reports, err
}

// DocGraph implements engram.VaultService's DocGraph through GET /v1/graph.
func (c *Client) DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error) {
	return get[engram.DocGraph](ctx, c, "/v1/graph", docGraphValues(vault, doc, depth))
}

// Memories implements engram.LayerService through GET /v1/memories.
func (c *Client) Memories(ctx context.Context, q engram.MemoryQuery) ([]engram.Memory, error) {
	var out struct {
		Memories []engram.Memory `json:"memories"`
	}
	err := c.get(ctx, "/v1/memories", memoryValues(q), &out)
	return out.Memories, err
}

// Scenes implements engram.LayerService through GET /v1/scenes.
func (c *Client) Scenes(ctx context.Context, q engram.SceneQuery) ([]engram.Scene, error) {
	var out struct {
		Scenes []engram.Scene `json:"scenes"`
	}
	err := c.get(ctx, "/v1/scenes", sceneValues(q), &out)
	return out.Scenes, err
}

// Persona implements engram.LayerService through GET /v1/persona.
func (c *Client) Persona(ctx context.Context, namespace, speaker string) ([]engram.Persona, error) {
	var out struct {
		Personas []engram.Persona `json:"personas"`
	}
	err := c.get(ctx, "/v1/persona", personaValues(namespace, speaker), &out)
	return out.Personas, err
}

// Graph implements engram.LayerService through GET /v1/kg.
func (c *Client) Graph(ctx context.Context, q engram.GraphQuery) (engram.GraphResult, error) {
	return get[engram.GraphResult](ctx, c, "/v1/kg", graphValues(q))
}

// WaitReindex waits for the server's reindex to end, asking GET
// /v1/reindex every poll and telling progress each status. A reindex that
// failed is returned with no error: its status says why. ctx ends the
// wait, not the reindex.
func (c *Client) WaitReindex(ctx context.Context, poll time.Duration, progress func(engram.ReindexStatus)) (engram.ReindexStatus, error) {
	return wait(ctx, poll, progress, func() (engram.ReindexStatus, bool, error) {
		st, err := c.ReindexStatus(ctx)
		return st, st.State == engram.ReindexDone || st.State == engram.ReindexFailed, err
	})
}

// WaitReembed waits for the server's re-embed to end, asking GET
// /v1/health every poll and telling progress each status. A re-embed that
// failed is returned with no error: its status says why. ctx ends the
// wait, not the re-embed.
func (c *Client) WaitReembed(ctx context.Context, poll time.Duration, progress func(engram.ReembedStatus)) (engram.ReembedStatus, error) {
	return wait(ctx, poll, progress, func() (engram.ReembedStatus, bool, error) {
		h := c.Health(ctx)
		if h.Vectors == nil || h.Vectors.Reembed == nil {
			return engram.ReembedStatus{}, false, fmt.Errorf("the server reports no re-embed: %v", h.Problems)
		}
		st := *h.Vectors.Reembed
		return st, st.State == engram.ReembedDone || st.State == engram.ReembedFailed, nil
	})
}

// wait calls get every poll, telling progress what it returns, until it
// says the wait is over or fails, or ctx ends.
func wait[T any](ctx context.Context, poll time.Duration, progress func(T), get func() (T, bool, error)) (T, error) {
	for {
		select {
		case <-ctx.Done():
			var zero T
			return zero, ctx.Err()
		case <-time.After(poll):
		}
		st, over, err := get()
		if err != nil {
			return st, err
		}
		progress(st)
		if over {
			return st, nil
		}
	}
}
