package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/testutil"
	"github.com/engram-dev/engram/palace"
	"github.com/engram-dev/engram/pipeline"
	"github.com/engram-dev/engram/recall"
	"github.com/engram-dev/engram/server"
)

// stack is a real engram behind a real HTTP server on loopback.
type stack struct {
	URL     string
	Token   string
	Archive *archive.Archive
	Palace  *palace.DB
	Indexer *pipeline.Indexer
	LastSeq func() int64 // the archive's last seq
}

type status struct {
	a  *archive.Archive
	ix *pipeline.Indexer
	p  *palace.DB
}

func (s status) Health(ctx context.Context) engram.Health {
	return engram.Health{Status: "ok", ArchiveSeq: s.a.LastSeq(), IndexedSeq: s.ix.Indexed(), IndexLag: s.ix.Lag()}
}
func (s status) Stats(ctx context.Context) (engram.Stats, error) { return s.p.Stats(ctx) }

// mustOpenStack serves a real archive, palace and indexer over loopback
// HTTP. Each set func runs after the core services are wired and before the
// server starts, to serve more (backup, layers, MCP) from the same stack.
func mustOpenStack(tb testing.TB, cfg httpapi.Config, set ...func(*httpapi.Server, *stack)) *stack {
	tb.Helper()
	dir := tb.TempDir()
	a, err := archive.Open(filepath.Join(dir, "archive"), archive.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { a.Close() })
	p, err := palace.Open(filepath.Join(dir, "palace.db"), palace.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	ix := pipeline.NewIndexer(a, p)
	if err := ix.Open(context.Background()); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	cfg.Addr = "127.0.0.1:0"
	srv, err := httpapi.New(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	rs := recall.NewService(p)
	rs.Sync = ix.WaitCurrent
	srv.Ingest = &pipeline.Ingester{Archive: a, Indexer: ix}
	srv.Recall = rs
	srv.Status = status{a, ix, p}
	s := &stack{Token: cfg.Token, Archive: a, Palace: p, Indexer: ix, LastSeq: a.LastSeq}
	for _, f := range set {
		f(srv, s)
	}
	ts := httptest.NewServer(srv.Handler())
	tb.Cleanup(ts.Close)
	s.URL = ts.URL
	return s
}

// mustOpenEngineStack serves the real engine of a temporary home, opened
// as `engram serve` opens it (engine.Open with the default configuration:
// builtin vectors, the rules extractor), every route of the API on it.
func mustOpenEngineStack(tb testing.TB, cfg httpapi.Config) (*stack, *engine.Engine) {
	tb.Helper()
	return mustOpenEngineStackWith(tb, cfg, nil)
}

// mustOpenEngineStackWith is mustOpenEngineStack with the engine's
// configuration changed by set.
func mustOpenEngineStackWith(tb testing.TB, cfg httpapi.Config, set func(*config.Config)) (*stack, *engine.Engine) {
	tb.Helper()
	ecfg := config.DefaultConfig()
	ecfg.Home = filepath.Join(tb.TempDir(), "home")
	if set != nil {
		set(&ecfg)
	}
	e, err := engine.Open(context.Background(), ecfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := e.Close(); err != nil {
			tb.Error(err)
		}
	})
	cfg.Addr = "127.0.0.1:0"
	srv, err := httpapi.New(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	server.Mount(srv, e)
	ts := httptest.NewServer(srv.Handler())
	tb.Cleanup(ts.Close)
	return &stack{URL: ts.URL, Token: cfg.Token, LastSeq: e.LastSeq}, e
}

// do sends a request with a JSON body (empty when nil) and decodes the
// JSON answer into a map.
func (s *stack) do(tb testing.TB, method, path string, body []byte) (int, map[string]any) {
	tb.Helper()
	if body == nil {
		body = []byte{}
	}
	code, _, out := send(tb, method, s.URL+path, s.Token, body)
	return code, out
}

// postTurns posts body to /v1/turns of the server at base and returns the
// ids of the stored turns. It runs in writers beside a test: a failure is
// reported with t.Error (a goroutine may not end the test) and makes ok
// false.
func postTurns(t testing.TB, base, body string) (ids []string, ok bool) {
	resp, err := http.Post(base+"/v1/turns", "application/json", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return nil, false
	}
	defer resp.Body.Close()
	var out struct{ IDs []string }
	json.NewDecoder(resp.Body).Decode(&out)
	if resp.StatusCode != http.StatusCreated {
		t.Errorf("POST /v1/turns: %s", resp.Status)
		return nil, false
	}
	return out.IDs, true
}

// send makes a request to url, with a JSON body unless body is nil and
// token as the bearer unless it is "". It returns the status, the raw
// answer and the answer decoded as a JSON object, which it must be.
func send(tb testing.TB, method, url, token string, body []byte) (int, []byte, map[string]any) {
	tb.Helper()
	headers := map[string]string{}
	if body != nil {
		headers["Content-Type"] = "application/json"
	}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	resp := testutil.Request(tb, method, url, string(body), headers)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatalf("%s %s: answer is not JSON: %q", method, url, b)
	}
	return resp.StatusCode, b, out
}

func TestPostTurnsAndRecall(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{})
	code, out := s.do(t, "POST", "/v1/turns", []byte(`{"session":"s1","speaker":"Alice","content":"We decided to use PostgreSQL for the billing service","meta":{"dia_id":"D1:1","n":[1,2]}}`))
	if code != http.StatusCreated {
		t.Fatalf("status %d: %v", code, out)
	}
	ids := out["ids"].([]any)
	if len(ids) != 1 || ids[0] == "" {
		t.Fatalf("ids = %v", ids)
	}
	code, out = s.do(t, "POST", "/v1/turns", []byte(`{"turns":[{"session":"s1","role":"assistant","content":"Noted: PostgreSQL for billing.","ts":"2026-05-01T10:00:00Z"},{"session":"s2","content":"Lunch at noon?","namespace":"other"}]}`))
	if code != http.StatusCreated || len(out["ids"].([]any)) != 2 {
		t.Fatalf("batch: status %d: %v", code, out)
	}

	code, out = s.do(t, "POST", "/v1/recall", []byte(`{"query":"what database for billing?","k":5}`))
	if code != http.StatusOK {
		t.Fatalf("recall status %d: %v", code, out)
	}
	if out["mode"] != engram.ModeKeyword {
		t.Errorf("mode = %v", out["mode"])
	}
	if _, ok := out["took_ms"].(float64); !ok {
		t.Errorf("took_ms missing: %v", out)
	}
	results := out["results"].([]any)
	if len(results) != 2 {
		t.Fatalf("want the 2 billing turns of namespace default, got %d: %v", len(results), results)
	}
	first := results[0].(map[string]any)
	for _, f := range []string{"id", "kind", "text", "score", "ts", "namespace", "session", "sources"} {
		if _, ok := first[f]; !ok {
			t.Errorf("result lacks %q: %v", f, first)
		}
	}
	for _, r := range results {
		r := r.(map[string]any)
		srcs := r["sources"].([]any)
		if len(srcs) != 1 || srcs[0].(map[string]any)["id"] != r["id"] {
			t.Errorf("a turn must list itself as its source: %v", r)
		}
		if r["id"] == ids[0] {
			meta, _ := json.Marshal(r["meta"])
			if string(meta) != `{"dia_id":"D1:1","n":[1,2]}` {
				t.Errorf("meta not returned unchanged: %s", meta)
			}
			smeta, _ := json.Marshal(srcs[0].(map[string]any)["meta"])
			if string(smeta) != string(meta) {
				t.Errorf("source meta %s != %s", smeta, meta)
			}
		}
	}

	code, out = s.do(t, "POST", "/v1/recall", []byte(`{"query":"lunch","namespace":"other"}`))
	if code != http.StatusOK || len(out["results"].([]any)) != 1 {
		t.Fatalf("namespace other: %d %v", code, out)
	}
	code, out = s.do(t, "GET", "/v1/stats", nil)
	if code != http.StatusOK {
		t.Fatalf("stats: %d %v", code, out)
	}
	ns := out["namespaces"].(map[string]any)
	if ns["default"].(map[string]any)["turns"].(float64) != 2 || ns["other"].(map[string]any)["turns"].(float64) != 1 {
		t.Errorf("stats = %v", out)
	}
	code, out = s.do(t, "GET", "/v1/health", nil)
	if code != http.StatusOK || out["status"] != "ok" {
		t.Errorf("health: %d %v", code, out)
	}
}

// TestPostTurnsWaitArchive: with ?wait=archive a POST is answered once its
// turns are archived, without waiting for the index; without it (or with
// wait=index) the POST waits for the index and, when the index stays
// behind, says so in a warning. The index here never moves: its indexer is
// not opened.
func TestPostTurnsWaitArchive(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{}, func(srv *httpapi.Server, s *stack) {
		srv.Ingest = &pipeline.Ingester{Archive: s.Archive, Indexer: pipeline.NewIndexer(s.Archive, s.Palace), Wait: time.Millisecond}
	})
	for i, tc := range []struct {
		path    string
		warning bool
	}{
		{"/v1/turns?wait=archive", false},
		{"/v1/turns", true},
		{"/v1/turns?wait=index", true},
		{"/v1/turns?wait=archive", false},
	} {
		code, out := s.do(t, "POST", tc.path, []byte(`{"session":"s","content":"turn `+strconv.Itoa(i)+`"}`))
		if code != http.StatusCreated {
			t.Fatalf("POST %s: %d %v", tc.path, code, out)
		}
		if _, warned := out["warnings"]; warned != tc.warning {
			t.Errorf("POST %s: warnings %v, want them: %v", tc.path, out["warnings"], tc.warning)
		}
		if got := s.Archive.LastSeq(); got != int64(i+1) {
			t.Fatalf("POST %s: the archive's last seq is %d, want %d", tc.path, got, i+1)
		}
	}
	// The client asks for the same under engram.IngestNoIndexWait.
	c := httpapi.NewClient(s.URL, s.Token)
	turn := []engram.Turn{{Session: "s", Content: "through the client", Role: engram.RoleUser}}
	for _, tc := range []struct {
		ctx     context.Context
		warning bool
	}{{engram.IngestNoIndexWait(context.Background()), false}, {context.Background(), true}} {
		res, err := c.Ingest(tc.ctx, turn)
		if err != nil {
			t.Fatal(err)
		}
		if warned := len(res.Warnings) > 0; warned != tc.warning {
			t.Errorf("client Ingest (waits for the index: %v): warnings %q", engram.IngestWaitsForIndex(tc.ctx), res.Warnings)
		}
	}
}

func TestIdempotentResend(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{})
	body := []byte(`{"id":"client-42","session":"s","content":"only once"}`)
	for i := 0; i < 3; i++ {
		code, out := s.do(t, "POST", "/v1/turns", body)
		if code != http.StatusCreated || out["ids"].([]any)[0] != "client-42" {
			t.Fatalf("send %d: %d %v", i, code, out)
		}
		if dup := out["turns"].([]any)[0].(map[string]any)["duplicate"] == true; dup != (i > 0) {
			t.Errorf("send %d: duplicate = %v", i, dup)
		}
	}
	if n := s.Archive.LastSeq(); n != 1 {
		t.Fatalf("archive holds %d turns, want 1", n)
	}
}

func TestBadInput(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{MaxBodyBytes: 4096, Limits: engram.Limits{MaxContentBytes: 100, MaxBatch: 3}})
	long := strings.Repeat("x", 101)
	for _, tc := range []struct {
		name, path, body string
		status           int
		field, msg       string
	}{
		{"malformed json", "/v1/turns", `{"session":"s",`, 400, "body", "malformed JSON"},
		{"not an object", "/v1/turns", `["a"]`, 400, "body", "JSON object"},
		{"empty body", "/v1/turns", ``, 400, "body", "empty"},
		{"missing session", "/v1/turns", `{"content":"hi"}`, 400, "session", "session is required"},
		{"empty session", "/v1/turns", `{"session":"","content":"hi"}`, 400, "session", "required"},
		{"missing content", "/v1/turns", `{"session":"s"}`, 400, "content", "content is required"},
		{"blank content", "/v1/turns", `{"session":"s","content":"  \n"}`, 400, "content", "blank"},
		{"invalid utf-8", "/v1/turns", "{\"session\":\"s\",\"content\":\"\xff\xfe\"}", 400, "body", "UTF-8"},
		{"unknown role", "/v1/turns", `{"session":"s","content":"hi","role":"robot"}`, 400, "role", `unknown role "robot"`},
		{"bad timestamp", "/v1/turns", `{"session":"s","content":"hi","ts":"yesterday"}`, 400, "ts", "RFC 3339"},
		{"meta not object", "/v1/turns", `{"session":"s","content":"hi","meta":[1]}`, 400, "meta", "JSON object"},
		{"content wrong type", "/v1/turns", `{"session":"s","content":42}`, 400, "content", "must be a string"},
		{"unknown field", "/v1/turns", `{"session":"s","content":"hi","sesion":"x"}`, 400, "sesion", "unknown field"},
		{"content too long", "/v1/turns", `{"session":"s","content":"` + long + `"}`, 413, "content", "over the limit of 100"},
		{"body too large", "/v1/turns", `{"session":"s","content":"` + strings.Repeat("y", 5000) + `"}`, 413, "body", "over the limit of 4096"},
		{"batch with one bad turn", "/v1/turns", `{"turns":[{"session":"s","content":"ok"},{"session":"s","content":"ok"},{"session":"s"}]}`, 400, "turns[2].content", "content is required"},
		{"batch over limit", "/v1/turns", `{"turns":[{"session":"s","content":"1"},{"session":"s","content":"2"},{"session":"s","content":"3"},{"session":"s","content":"4"}]}`, 413, "turns", "over the limit of 3"},
		{"empty batch", "/v1/turns", `{"turns":[]}`, 400, "turns", "at least one"},
		{"batch mixed with fields", "/v1/turns", `{"turns":[{"session":"s","content":"1"}],"session":"s"}`, 400, "session", "only \"turns\""},
		{"session with control char", "/v1/turns", `{"session":"a\u0007b","content":"hi"}`, 400, "session", "control"},
		{"namespace * written to", "/v1/turns", `{"namespace":"*","session":"s","content":"hi"}`, 400, "namespace", "cannot be written to"},
		{"namespace with a slash", "/v1/turns", `{"namespace":"a/b","session":"s","content":"hi"}`, 400, "namespace", "path separator"},
		{"namespace with a backslash", "/v1/turns", `{"namespace":"..\\x","session":"s","content":"hi"}`, 400, "namespace", "path separator"},
		{"namespace with a control char", "/v1/turns", `{"namespace":"a\u0001b","session":"s","content":"hi"}`, 400, "namespace", "control"},
		{"unknown wait", "/v1/turns?wait=never", `{"session":"s","content":"hi"}`, 400, "wait", `wait "never" is neither index`},
		{"batch namespace *", "/v1/turns", `{"turns":[{"session":"s","content":"1"},{"namespace":"*","session":"s","content":"2"}]}`, 400, "turns[1].namespace", "cannot be written to"},
		{"recall namespace too long", "/v1/recall", `{"query":"x","namespace":"` + strings.Repeat("n", 300) + `"}`, 413, "namespace", "over the limit of 256"},
		{"recall namespace with a control char", "/v1/recall", `{"query":"x","namespace":"a\u0000"}`, 400, "namespace", "control"},
		{"recall blank query", "/v1/recall", `{"query":"  "}`, 400, "query", "required"},
		{"recall bad k", "/v1/recall", `{"query":"x","k":0.5}`, 400, "k", "integer"},
		{"recall k too big", "/v1/recall", `{"query":"x","k":100000}`, 400, "k", "between 1 and"},
		{"recall k 0", "/v1/recall", `{"query":"x","k":0}`, 400, "k", "between 1 and"},
		{"recall unknown mode", "/v1/recall", `{"query":"x","mode":"psychic"}`, 400, "mode", `unknown mode "psychic"`},
		{"recall unknown field", "/v1/recall", `{"query":"x","top":3}`, 400, "top", "unknown field"},
		{"recall malformed", "/v1/recall", `{"query":`, 400, "body", "JSON object"},
		{"recall bad as_of", "/v1/recall", `{"query":"x","as_of":"last tuesday"}`, 400, "as_of", "RFC 3339"},
		{"recall as_of out of range", "/v1/recall", `{"query":"x","as_of":"0001-01-01T00:00:00Z"}`, 400, "as_of", "out of range"},
		{"recall bad budget", "/v1/recall", `{"query":"x","budget_tokens":"lots"}`, 400, "budget_tokens", "integer"},
		{"recall negative budget", "/v1/recall", `{"query":"x","budget_tokens":-5}`, 400, "budget_tokens", "between 0 and"},
		{"recall kinds not an array", "/v1/recall", `{"query":"x","kinds":"memory"}`, 400, "kinds", "array of strings"},
		{"recall unknown kind", "/v1/recall", `{"query":"x","kinds":["turn","memories"]}`, 400, "kinds[1]", "unknown kind"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := s.do(t, "POST", tc.path, []byte(tc.body))
			if code != tc.status {
				t.Fatalf("status %d, want %d: %v", code, tc.status, out)
			}
			e, _ := out["error"].(map[string]any)
			if e == nil {
				t.Fatalf("no error object: %v", out)
			}
			if e["field"] != tc.field {
				t.Errorf("field %q, want %q (%v)", e["field"], tc.field, e)
			}
			if msg, _ := e["message"].(string); !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not say %q", msg, tc.msg)
			}
		})
	}
	if n := s.Archive.LastSeq(); n != 0 {
		t.Errorf("bad requests archived %d turns", n)
	}
	// The probe: a recall namespace of 10 KB, under the default
	// body limit, answered 200.
	big := mustOpenStack(t, httpapi.Config{})
	if code, out := big.do(t, "POST", "/v1/recall", []byte(`{"query":"x","namespace":"`+strings.Repeat("n", 10<<10)+`"}`)); code != 413 ||
		out["error"].(map[string]any)["field"] != "namespace" {
		t.Errorf("recall in a 10 KB namespace: %d %v", code, out)
	}
	// Unknown routes and methods get JSON errors too.
	if code, out := s.do(t, "GET", "/v1/nope", nil); code != 404 || out["error"] == nil {
		t.Errorf("unknown route: %d %v", code, out)
	}
	if code, out := s.do(t, "PUT", "/v1/turns", nil); code != 405 || out["error"] == nil {
		t.Errorf("wrong method: %d %v", code, out)
	}
}

func TestTokenAuth(t *testing.T) {
	if _, err := httpapi.New(httpapi.Config{Addr: "0.0.0.0:30001"}, nil); engram.ErrorCode(err) != engram.EINVALID ||
		!strings.Contains(err.Error(), "requires a token") {
		t.Fatalf("non-loopback without token: %v", err)
	}
	// Off loopback, a token anyone could guess, or one no header carries,
	// is refused, naming the token; on loopback any token goes.
	for _, tok := range []string{"x", " ", "   \t  ", "short-token", "0123456789abcdef ", "0123456789\nabcdef"} {
		if _, err := httpapi.New(httpapi.Config{Addr: "0.0.0.0:30001", Token: tok}, nil); engram.ErrorField(err) != "token" {
			t.Errorf("non-loopback with token %q: %v, want an error on token", tok, err)
		}
	}
	if _, err := httpapi.New(httpapi.Config{Addr: "0.0.0.0:30001", Token: "0123456789abcdef"}, nil); err != nil {
		t.Errorf("non-loopback with a 16-byte token: %v", err)
	}
	if _, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:30001", Token: "x"}, nil); err != nil {
		t.Errorf("loopback with a short token: %v", err)
	}
	s := mustOpenStack(t, httpapi.Config{Token: "s3cret"})
	if code, _ := s.do(t, "POST", "/v1/turns", []byte(`{"session":"s","content":"authorised"}`)); code != 201 {
		t.Fatalf("with token: %d", code)
	}
	s.Token = "wrong"
	code, out := s.do(t, "POST", "/v1/recall", []byte(`{"query":"authorised"}`))
	if code != 401 || out["error"].(map[string]any)["code"] != engram.EUNAUTHORIZED {
		t.Fatalf("wrong token: %d %v", code, out)
	}
	s.Token = ""
	if code, _ := s.do(t, "GET", "/v1/stats", nil); code != 401 {
		t.Fatalf("no token: %d", code)
	}
	if code, _ := s.do(t, "GET", "/v1/health", nil); code != 200 {
		t.Fatalf("health must not need the token: %d", code)
	}
	// The scheme is case-insensitive (RFC 9110 11.1), the token is not.
	for auth, want := range map[string]int{
		"Bearer s3cret": 200, "bearer s3cret": 200, "BEARER s3cret": 200, "Bearer  s3cret": 200,
		"Bearer S3CRET": 401, "Basic s3cret": 401, "Bearers3cret": 401, "s3cret": 401, "Bearer": 401,
	} {
		req, _ := http.NewRequest("GET", s.URL+"/v1/stats", nil)
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: %d, want %d", auth, resp.StatusCode, want)
		}
	}
}

func TestServerOpenClose(t *testing.T) {
	srv, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Open(); err == nil {
		t.Fatal("Open without services must fail")
	}
	s := mustOpenStack(t, httpapi.Config{})
	_ = s
	srv.Ingest, srv.Recall, srv.Status = &pipeline.Ingester{Archive: s.Archive, Indexer: s.Indexer}, recall.NewService(s.Palace), status{s.Archive, s.Indexer, s.Palace}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + srv.Addr() + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get("http://" + srv.Addr() + "/v1/health"); err == nil {
		t.Fatal("server still answers after Close")
	}
}

// TestStalledBody: a client that sends its headers and stalls in its body
// is answered 408 and cut off once the read timeout passes, instead of
// holding the connection for ever; a body that keeps coming is served.
func TestStalledBody(t *testing.T) {
	s := mustOpenStack(t, httpapi.Config{})
	srv, err := httpapi.New(httpapi.Config{Addr: "127.0.0.1:0", ReadTimeout: 300 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	srv.Ingest, srv.Recall, srv.Status = &pipeline.Ingester{Archive: s.Archive, Indexer: s.Indexer}, recall.NewService(s.Palace), status{s.Archive, s.Indexer, s.Palace}
	if err := srv.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close(context.Background()) })

	conn, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A guard against a server that never answers (the bug): far past the
	// read timeout, so that a slow machine only makes the test slower.
	conn.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(conn, "POST /v1/turns HTTP/1.1\r\nHost: "+srv.Addr()+"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"session\":"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a stalled body: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(b), `"code":"timeout"`) || !strings.Contains(string(b), `"field":"body"`) {
		t.Fatalf("stalled body: %s %s", resp.Status, b)
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("the connection is still open after the 408: %v", err)
	}
	if s.LastSeq() != 0 {
		t.Fatal("the stalled request archived a turn")
	}
}
