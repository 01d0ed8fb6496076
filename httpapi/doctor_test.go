package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
)

// doctorStub answers with a fixed report; the real checks run against a
// real home in cmd/engram's tests.
type doctorStub struct{ rep engram.DoctorReport }

func (d doctorStub) Doctor(context.Context) engram.DoctorReport { return d.rep }

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
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: not JSON: %q", method, url, b)
	}
	return resp.StatusCode, out
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

	var rep engram.DoctorReport
	rep.Add(engram.DoctorCheck{Name: "vectors", Status: engram.CheckFail, Finding: "2 turns have no vector", Fix: "engram reindex vectors"})
	rx := &reindexStub{}
	base = mustServe(t, httpapi.Config{Token: "s3cret"}, func(s *httpapi.Server) { s.Doctor, s.Reindex = doctorStub{rep}, rx })
	if code, _ := call(t, "GET", base+"/v1/doctor", "", ""); code != http.StatusUnauthorized {
		t.Errorf("GET /v1/doctor without the token: %d", code)
	}
	code, out := call(t, "GET", base+"/v1/doctor", "s3cret", "")
	checks, _ := out["checks"].([]any)
	if code != http.StatusOK || out["status"] != "fail" || len(checks) != 1 ||
		checks[0].(map[string]any)["fix"] != "engram reindex vectors" {
		t.Fatalf("GET /v1/doctor: %d %v", code, out)
	}

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
