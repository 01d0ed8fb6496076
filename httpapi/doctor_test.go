package httpapi_test

import (
	"context"
	"database/sql"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/httpapi"
)

// reindexStub records requests and answers with err, if set.
type reindexStub struct {
	got []engram.ReindexRequest
	err error
}

func (r *reindexStub) StartReindex(_ context.Context, req engram.ReindexRequest) (engram.ReindexStatus, error) {
	if r.err != nil {
		return engram.ReindexStatus{}, r.err
	}
	r.got = append(r.got, req)
	return engram.ReindexStatus{Model: "m", State: engram.ReindexRunning, Reembed: req.Reembed}, nil
}

func (r *reindexStub) ReindexStatus(context.Context) (engram.ReindexStatus, error) {
	if len(r.got) == 0 {
		return engram.ReindexStatus{}, engram.Errorf(engram.ENOTFOUND, "no reindex ran since the server started")
	}
	return engram.ReindexStatus{Model: "m", State: engram.ReindexDone}, nil
}

func mustServe(t *testing.T, cfg httpapi.Config, set func(*httpapi.Server)) string {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	srv, err := httpapi.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	set(srv)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(ts.Close)
	return ts.URL
}

func call(t *testing.T, method, url, token, body string) (int, map[string]any) {
	t.Helper()
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	code, _, out := send(t, method, url, token, b)
	return code, out
}

func TestDoctorReportStatus(t *testing.T) {
	var r engram.DoctorReport
	r.Add(engram.DoctorCheck{Name: "a", Status: engram.CheckOK})
	if r.Status != engram.CheckOK || r.Failed() {
		t.Fatalf("%+v", r)
	}
	r.Add(engram.DoctorCheck{Name: "b", Status: engram.CheckFail})
	r.Add(engram.DoctorCheck{Name: "c", Status: engram.CheckWarn})
	if r.Status != engram.CheckFail || !r.Failed() || len(r.Checks) != 3 {
		t.Fatalf("the worst status stays: %+v", r)
	}
}

func TestDoctorAndReindexRoutes(t *testing.T) {
	// Without the services: 501, as for the other optional routes.
	base := mustServe(t, httpapi.Config{}, func(*httpapi.Server) {})
	for _, c := range []struct{ method, path string }{{"GET", "/v1/doctor"}, {"POST", "/v1/reindex"}, {"GET", "/v1/reindex"}} {
		if code, out := call(t, c.method, base+c.path, "", "{}"); code != http.StatusNotImplemented {
			t.Errorf("%s %s without a service: %d %v", c.method, c.path, code, out)
		}
	}

	// The real engine of a home whose turn lost its vector: the doctor
	// fails and names the fix; the route answers 200 with its report.
	s, eng := mustOpenEngineStack(t, httpapi.Config{Token: "s3cret"})
	if code, out := s.do(t, "POST", "/v1/turns", []byte(`{"turns":[{"session":"s1","content":"the cache listens on port 6380"},{"session":"s1","content":"billing moved to Postgres"}]}`)); code != http.StatusCreated {
		t.Fatalf("POST /v1/turns: %d %v", code, out)
	}
	waitEmbedded(t, eng)
	lost := mustLoseVector(t, eng)
	if code, _ := call(t, "GET", s.URL+"/v1/doctor", "", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/doctor without the token: %d", code)
	}
	code, out := call(t, "GET", s.URL+"/v1/doctor", "s3cret", "")
	checks, _ := out["checks"].([]any)
	found := false
	for _, c := range checks {
		c := c.(map[string]any)
		if c["name"] == "vectors" && c["status"] == "fail" && c["fix"] == "engram reindex vectors" && strings.Contains(c["finding"].(string), lost) {
			found = true
		}
	}
	if code != http.StatusOK || out["status"] != "fail" || !found {
		t.Fatalf("GET /v1/doctor: %d %v", code, out)
	}
	// The answer is the engine's own report, check for check.
	want := eng.Doctor(context.Background())
	if len(checks) != len(want.Checks) {
		t.Fatalf("GET /v1/doctor has %d checks, the engine %d: %v", len(checks), len(want.Checks), out)
	}
	for i, c := range want.Checks {
		got := checks[i].(map[string]any)
		if got["name"] != c.Name || got["status"] != c.Status || (got["fix"] != nil || c.Fix != "") && got["fix"] != c.Fix {
			t.Errorf("check %d: %v, the engine's %+v", i, got, c)
		}
	}

	rx := &reindexStub{}
	base = mustServe(t, httpapi.Config{Token: "s3cret"}, func(s *httpapi.Server) { s.Reindex = rx })

	if code, out := call(t, "GET", base+"/v1/reindex", "s3cret", ""); code != http.StatusNotFound || out["error"].(map[string]any)["code"] != engram.ENOTFOUND {
		t.Errorf("GET /v1/reindex before any: %d %v", code, out)
	}
	for _, c := range []struct {
		body    string
		reembed bool
	}{{"", false}, {"{}", false}, {`{"reembed": true}`, true}, {`{"reembed": false}`, false}} {
		code, out := call(t, "POST", base+"/v1/reindex", "s3cret", c.body)
		if code != http.StatusAccepted || out["reembed"] != c.reembed || out["state"] != engram.ReindexRunning {
			t.Errorf("POST /v1/reindex %q: %d %v", c.body, code, out)
		}
	}
	if n := len(rx.got); n != 4 || !rx.got[2].Reembed {
		t.Errorf("requests: %+v", rx.got)
	}
	for _, c := range []struct{ body, field string }{
		{`{"reembed": "yes"}`, "reembed"},
		{`{"model": "x"}`, "model"},
		{`[1]`, "body"},
		{`{"reembed": tru`, "body"},
		{"\xff", "body"},
	} {
		code, out := call(t, "POST", base+"/v1/reindex", "s3cret", c.body)
		e, _ := out["error"].(map[string]any)
		if code != http.StatusBadRequest || e["field"] != c.field {
			t.Errorf("POST /v1/reindex %q: %d %v, want 400 on field %s", c.body, code, out, c.field)
		}
	}
	if code, out := call(t, "GET", base+"/v1/reindex", "s3cret", ""); code != http.StatusOK || out["state"] != engram.ReindexDone {
		t.Errorf("GET /v1/reindex: %d %v", code, out)
	}
	rx.err = engram.Errorf(engram.ECONFLICT, "a reindex of m is running")
	if code, out := call(t, "POST", base+"/v1/reindex", "s3cret", "{}"); code != http.StatusConflict {
		t.Errorf("POST /v1/reindex while one runs: %d %v", code, out)
	}
}

// waitEmbedded waits until every archived turn of eng has its vector.
func waitEmbedded(t *testing.T, eng *engine.Engine) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		h := eng.Health(context.Background())
		if h.Vectors != nil && h.Vectors.Model != "" && h.Vectors.EmbeddedSeq >= h.ArchiveSeq {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the vectors did not catch up: %+v", h)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// mustLoseVector deletes the vector of the first turn from the palace's
// SQLite, as a damaged or lost row would, and returns the turn's id.
func mustLoseVector(t *testing.T, eng *engine.Engine) string {
	t.Helper()
	u := url.URL{Scheme: "file", Path: filepath.Join(eng.Config().Home, homedir.PalaceFile)}
	db, err := sql.Open("sqlite", u.String()+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	if err := db.QueryRow(`SELECT id FROM turns ORDER BY seq LIMIT 1`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if res, err := db.Exec(`DELETE FROM vectors WHERE id = ?`, id); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("deleted %d vectors of %s", n, id)
	}
	return id
}

// TestHealthDetailsNeedToken: /v1/health answers without the token, but
// its problems (which can name turn ids and upstream URLs) and the vector
// side's state only with it.
func TestHealthDetailsNeedToken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	s, _ := mustOpenEngineStackWith(t, httpapi.Config{Token: "s3cret"}, func(c *config.Config) {
		c.Embedder, c.OllamaHost = config.EmbedderOllama, dead
	})
	code, raw, with := send(t, "GET", s.URL+"/v1/health", s.Token, nil)
	if code != 200 || with["problems"] == nil || !strings.Contains(string(raw), ln.Addr().String()) {
		t.Fatalf("health with the token: %d %s, want the problem naming %s", code, raw, dead)
	}
	code, raw, without := send(t, "GET", s.URL+"/v1/health", "", nil)
	if code != 200 || without["status"] != with["status"] || without["problems"] != nil || without["vectors"] != nil ||
		strings.Contains(string(raw), ln.Addr().String()) {
		t.Errorf("health without the token: %d %s, want the status without details", code, raw)
	}
	if code, raw, _ := send(t, "GET", s.URL+"/v1/health", "wrong", nil); code != 200 || strings.Contains(string(raw), ln.Addr().String()) {
		t.Errorf("health with a wrong token: %d %s", code, raw)
	}
}
