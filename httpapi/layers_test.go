package httpapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/httpapi"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/palace"
)

// layerDay0 is the first day of the layer fixtures; the palace's clock
// stands at layerNow.
var (
	layerDay0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	layerNow  = layerDay0.AddDate(0, 1, 0)
)

func layerDay(n int) time.Time { return layerDay0.AddDate(0, 0, n) }

// mustOpenLayers returns a real palace holding the layer fixtures (see
// layertest.Put) served as the server's Layers over loopback HTTP.
func mustOpenLayers(tb testing.TB, cfg httpapi.Config) *stack {
	tb.Helper()
	p, err := palace.Open(filepath.Join(tb.TempDir(), "palace.db"), palace.Options{Now: func() time.Time { return layerNow }})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Close() })
	layertest.Put(tb, p, layerDay0, "layers", 6)
	cfg.Addr = "127.0.0.1:0"
	srv, err := httpapi.New(cfg, nil)
	if err != nil {
		tb.Fatal(err)
	}
	srv.Layers, srv.Browse = p, p
	ts := httptest.NewServer(srv.Handler())
	tb.Cleanup(ts.Close)
	return &stack{URL: ts.URL, Token: cfg.Token, Palace: p}
}

// get fetches path and returns the status, the raw body and the decoded one.
func (s *stack) get(tb testing.TB, path string) (int, string, map[string]any) {
	tb.Helper()
	code, b, out := send(tb, "GET", s.URL+path, s.Token, nil)
	return code, string(b), out
}

// objects returns the objects of the array out[key].
func objects(tb testing.TB, out map[string]any, key string) []map[string]any {
	tb.Helper()
	list, ok := out[key].([]any)
	if !ok {
		tb.Fatalf("%q is not an array: %v", key, out)
	}
	objs := make([]map[string]any, len(list))
	for i, x := range list {
		objs[i] = x.(map[string]any)
	}
	return objs
}

// ids returns the "id" of each object of out[key].
func ids(tb testing.TB, out map[string]any, key string) []string {
	tb.Helper()
	got := []string{}
	for _, o := range objects(tb, out, key) {
		got = append(got, o["id"].(string))
	}
	return got
}

// wantIDs fetches path, which must answer 200, and checks the ids of the
// list out[key] against want, in order.
func (s *stack) wantIDs(tb testing.TB, path, key string, want []string) {
	tb.Helper()
	code, raw, out := s.get(tb, path)
	if code != http.StatusOK {
		tb.Fatalf("%s: %d %s", path, code, raw)
	}
	if got := ids(tb, out, key); !slices.Equal(got, want) {
		tb.Errorf("%s: %s %v, want %v", path, key, got, want)
	}
}

func ts(day int) string { return url.QueryEscape(layerDay(day).Format(time.RFC3339)) }

// paramCase is a GET path and the status it must answer; when field is set,
// the answer must be an error naming that query parameter.
type paramCase struct {
	path  string
	code  int
	field string
}

// checkNotFound GETs path+q for each query q from s and checks that the
// answer is 404 not_found.
func checkNotFound(t *testing.T, s *stack, path string, queries ...string) {
	t.Helper()
	for _, q := range queries {
		code, raw, out := s.get(t, path+q)
		if code != http.StatusNotFound || out["error"].(map[string]any)["code"] != engram.ENOTFOUND {
			t.Errorf("%s: %d %s, want 404 not_found", q, code, raw)
		}
	}
}

// checkParams GETs each case's path from s and checks its status and, for a
// case with a field, that the error names the field.
func checkParams(t *testing.T, s *stack, cases []paramCase) {
	t.Helper()
	for _, c := range cases {
		code, raw, out := s.get(t, c.path)
		if code != c.code {
			t.Errorf("%.80s: status %d, want %d: %s", c.path, code, c.code, raw)
			continue
		}
		if c.field == "" {
			continue
		}
		e, _ := out["error"].(map[string]any)
		if e == nil || e["field"] != c.field || !strings.Contains(e["message"].(string), c.field) {
			t.Errorf("%.80s: error %s, want one naming %q", c.path, raw, c.field)
		}
	}
}

func TestLayersMemories(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{"m2", "m4", "m3"}}, // namespace default, active, newest first
		{"?superseded=true", []string{"m2", "m4", "m3", "m1"}},
		{"?superseded=false", []string{"m2", "m4", "m3"}},
		{"?type=decision", []string{"m3"}},
		{"?type=plan&subject=bob", []string{"m4"}},
		{"?subject=Alice&superseded=1", []string{"m2", "m1"}},
		{"?q=billing+postgres", []string{"m3", "m4"}}, // best first
		{"?from=" + ts(6) + "&to=" + ts(11), []string{"m2", "m4"}},
		{"?to=" + ts(7), []string{"m3"}},
		{"?namespace=work", []string{"m5"}},
		{"?namespace=*", []string{"m2", "m4", "m3", "m5"}},
		{"?namespace=*&limit=2", []string{"m2", "m4"}},
		{"?namespace=", []string{"m2", "m4", "m3"}},
		{"?namespace=nobody", []string{}},
		{"?q=the", []string{}}, // only a stopword: nothing, not null
	} {
		s.wantIDs(t, "/v1/memories"+c.query, "memories", c.want)
	}
	_, raw, out := s.get(t, "/v1/memories?subject=alice&superseded=true")
	m1 := out["memories"].([]any)[1].(map[string]any)
	if m1["superseded_by"] != "m2" || len(m1["sources"].([]any)) != 1 || m1["type"] != "fact" || m1["ts"] != layerDay(0).Format(time.RFC3339) {
		t.Errorf("superseded memory: %s", raw)
	}
	if _, raw, _ := s.get(t, "/v1/memories?namespace=nobody"); !strings.Contains(raw, `"memories":[]`) {
		t.Errorf("an empty list must be [], got %s", raw)
	}
}

func TestLayersScenes(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	for _, c := range []struct {
		query string
		want  []string
	}{
		{"", []string{"sc1", "sc3", "sc2"}},
		{"?session=s1", []string{"sc1", "sc3"}},
		{"?q=postgres", []string{"sc2"}},
		{"?q=berlin&session=s2", []string{}},
		{"?from=" + ts(6) + "&to=" + ts(8), []string{"sc3"}},
		{"?limit=1", []string{"sc1"}},
		{"?namespace=*&session=s2", []string{"sc2"}},
		{"?namespace=work", []string{}},
	} {
		s.wantIDs(t, "/v1/scenes"+c.query, "scenes", c.want)
	}
	_, raw, out := s.get(t, "/v1/scenes?session=s1&limit=1")
	sc := out["scenes"].([]any)[0].(map[string]any)
	if sc["title"] != "Moving to Berlin" || len(sc["turns"].([]any)) != 2 || len(sc["participants"].([]any)) != 2 {
		t.Errorf("scene: %s", raw)
	}
}

func TestLayersPersona(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	code, raw, out := s.get(t, "/v1/persona")
	if code != http.StatusOK {
		t.Fatalf("%d %s", code, raw)
	}
	ps := out["personas"].([]any)
	if len(ps) != 2 || ps[0].(map[string]any)["speaker"] != "Alice" || ps[1].(map[string]any)["speaker"] != "Bob" {
		t.Fatalf("personas of the namespace: %s", raw)
	}
	_, raw, out = s.get(t, "/v1/persona?speaker=alice&namespace=default")
	ps = out["personas"].([]any)
	if len(ps) != 1 {
		t.Fatalf("persona of alice: %s", raw)
	}
	var lives map[string]any
	for _, f := range ps[0].(map[string]any)["facets"].([]any) {
		if f := f.(map[string]any); f["key"] == "lives_in" {
			lives = f
		}
	}
	if lives == nil || lives["value"] != "Berlin" || len(lives["history"].([]any)) != 1 ||
		lives["history"].([]any)[0].(map[string]any)["value"] != "Paris" {
		t.Errorf("lives_in facet: %v", lives)
	}
	for _, q := range []string{"?speaker=nobody", "?namespace=work"} {
		if code, raw, _ := s.get(t, "/v1/persona"+q); code != http.StatusOK || !strings.Contains(raw, `"personas":[]`) {
			t.Errorf("%s: %d %s, want 200 and []", q, code, raw)
		}
	}
}

func TestLayersGraph(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	facts := func(query string) (string, []string) {
		t.Helper()
		code, raw, out := s.get(t, "/v1/kg"+query)
		if code != http.StatusOK {
			t.Fatalf("%s: %d %s", query, code, raw)
		}
		ent := out["entity"].(map[string]any)
		var got []string
		for _, tr := range out["triples"].([]any) {
			tr := tr.(map[string]any)
			f := tr["subject"].(string) + " " + tr["predicate"].(string) + " " + tr["object"].(string)
			if to, ok := tr["valid_to"].(string); ok {
				f += " until " + to[:10]
			}
			got = append(got, f)
		}
		return ent["name"].(string), got
	}
	for _, c := range []struct {
		query, entity string
		want          []string
	}{
		// Now (the palace's clock): Berlin.
		{"?entity=Alice", "Alice", []string{"Alice name Ally", "Alice works_at Acme", "Alice lives_in Berlin"}},
		// As of day 5 the single-valued lives_in said Paris.
		{"?entity=alice&as_of=" + ts(5), "Alice", []string{"Alice lives_in Paris until 2026-03-11", "Alice name Ally", "Alice works_at Acme"}},
		{"?entity=Alice&as_of=" + ts(1) + "&namespace=default", "Alice", []string{"Alice lives_in Paris until 2026-03-11", "Alice name Ally"}},
		{"?entity=ally&timeline=true", "Alice", []string{"Alice lives_in Paris until 2026-03-11", "Alice name Ally", "Alice works_at Acme", "Alice lives_in Berlin"}},
		{"?entity=Alice&timeline=1&limit=2", "Alice", []string{"Alice lives_in Paris until 2026-03-11", "Alice name Ally"}},
		{"?entity=Berlin", "Berlin", []string{"Alice lives_in Berlin"}},
		{"?entity=Berlin&as_of=" + ts(5), "Berlin", nil},
	} {
		name, got := facts(c.query)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.query, got, c.want)
		}
		if name != c.entity {
			t.Errorf("%s: entity %q, want %q", c.query, name, c.entity)
		}
	}
	if _, raw, _ := s.get(t, "/v1/kg?entity=Berlin&as_of="+ts(5)); !strings.Contains(raw, `"triples":[]`) {
		t.Errorf("no triples must be [], got %s", raw)
	}
	checkNotFound(t, s, "/v1/kg", "?entity=Nobody", "?entity=Alice&namespace=work")
}

func TestLayersBadParams(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{})
	long := strings.Repeat("x", engram.DefaultMaxFieldBytes+1)
	checkParams(t, s, []paramCase{
		{"/v1/memories?type=idea", 400, "type"},
		{"/v1/memories?type=", 200, ""},
		{"/v1/memories?limit=0", 400, "limit"},
		{"/v1/memories?limit=1001", 400, "limit"},
		{"/v1/memories?limit=1000", 200, ""},
		{"/v1/memories?limit=ten", 400, "limit"},
		{"/v1/memories?limit=", 400, "limit"},
		{"/v1/memories?superseded=yes", 400, "superseded"},
		{"/v1/memories?superseded", 400, "superseded"},
		{"/v1/memories?from=yesterday", 400, "from"},
		{"/v1/memories?to=2026-03-01", 400, "to"},
		{"/v1/memories?from=" + ts(5) + "&to=" + ts(5), 400, "to"},
		{"/v1/memories?from=0001-01-01T00:00:00Z", 400, "from"},
		{"/v1/memories?bogus=1", 400, "bogus"},
		{"/v1/memories?type=fact&type=plan", 400, "type"},
		{"/v1/memories?q=%zz", 400, "query"},
		{"/v1/memories?q=%ff", 400, "q"},
		{"/v1/memories?subject=" + long, 413, "subject"},
		{"/v1/memories?subject=A%00na", 400, "subject"},
		{"/v1/memories?namespace=work%0A", 400, "namespace"},
		{"/v1/memories?q=" + strings.Repeat("x", engram.MaxQueryBytes+1), 413, "q"},
		{"/v1/scenes?speaker=Alice", 400, "speaker"},
		{"/v1/scenes?limit=-1", 400, "limit"},
		{"/v1/scenes?from=soon", 400, "from"},
		{"/v1/persona?namespace=*", 400, "namespace"},
		{"/v1/persona?session=s1", 400, "session"},
		{"/v1/kg", 400, "entity"},
		{"/v1/kg?entity=", 400, "entity"},
		{"/v1/kg?entity=Alice&as_of=last+week", 400, "as_of"},
		{"/v1/kg?entity=Alice&timeline=maybe", 400, "timeline"},
		{"/v1/kg?entity=Alice&timeline=true&as_of=" + ts(5), 400, "as_of"},
		{"/v1/kg?entity=Alice&namespace=*", 400, "namespace"},
		{"/v1/kg?entity=Alice&limit=5000", 400, "limit"},
		{"/v1/kg?entity=Alice&from=" + ts(1), 400, "from"},
	})
}

func TestLayersAuthAndAbsent(t *testing.T) {
	s := mustOpenLayers(t, httpapi.Config{Token: "secret"})
	bare := &stack{URL: s.URL}
	for _, p := range []string{"/v1/memories", "/v1/scenes", "/v1/persona", "/v1/kg?entity=Alice"} {
		if code, raw, _ := bare.get(t, p); code != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d %s", p, code, raw)
		}
		if code, raw, _ := s.get(t, p); code != http.StatusOK {
			t.Errorf("%s with the token: %d %s", p, code, raw)
		}
	}
	// A server without Layers answers 501 on the layer routes.
	none := mustOpenStack(t, httpapi.Config{})
	for _, p := range []string{"/v1/memories", "/v1/scenes", "/v1/persona", "/v1/kg?entity=Alice"} {
		code, out := none.do(t, "GET", p, nil)
		if code != http.StatusNotImplemented || out["error"].(map[string]any)["code"] != engram.EUNSUPPORTED {
			t.Errorf("%s without Layers: %d %v", p, code, out)
		}
	}
}

// TestLayerLag: turns the layer workers have not taken in yet show in
// /v1/health's layer_lag, and deep recall warns meanwhile (it weighs the
// layers); once the jobs ran, both are quiet.
func TestLayerLag(t *testing.T) {
	s, _ := mustOpenEngineStack(t, httpapi.Config{})
	if code, out := s.do(t, "POST", "/v1/turns", []byte(`{"turns":[{"session":"s","speaker":"Ana","content":"Ana decided to move the billing service to Postgres"},{"session":"s","speaker":"Bo","content":"Bo lives in Lisbon now"}]}`)); code != 201 {
		t.Fatalf("POST /v1/turns: %d %v", code, out)
	}
	lagOf := func() map[string]any {
		code, h := s.do(t, "GET", "/v1/health", nil)
		if code != 200 {
			t.Fatalf("health: %d %v", code, h)
		}
		lag, _ := h["layer_lag"].(map[string]any)
		return lag
	}
	deepWarnings := func() string {
		code, out := s.do(t, "POST", "/v1/recall", []byte(`{"query":"do you remember where the billing service went?"}`))
		if code != 200 || out["mode"] != "deep" {
			t.Fatalf("deep recall: %d %v", code, out)
		}
		b, _ := json.Marshal(out["warnings"])
		return string(b)
	}
	if lag := lagOf(); lag["l1-memories"] != 2.0 || lag["l2-scenes"] != 2.0 {
		t.Fatalf("layer_lag before the jobs ran: %v, want l1-memories and l2-scenes 2 turns behind", lag)
	}
	if w := deepWarnings(); !strings.Contains(w, "the derived layers are behind the archive (l1-memories 2 turns, l2-scenes 2 turns") {
		t.Fatalf("deep recall while the layers lag: warnings %s", w)
	}
	for _, job := range []string{"l1-memories", "l2-scenes", "l3-persona", "l4-graph"} {
		if code, out := s.do(t, "POST", "/v1/jobs/"+job+"/run", nil); code != 200 || out["failing"] != false {
			t.Fatalf("run %s: %d %v", job, code, out)
		}
	}
	if lag := lagOf(); lag != nil {
		t.Fatalf("layer_lag after the jobs ran: %v", lag)
	}
	if w := deepWarnings(); strings.Contains(w, "derived layers") {
		t.Fatalf("deep recall with current layers still warns: %s", w)
	}
}
