package main

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/layertest"
	"github.com/engram-dev/engram/server"
)

var layerDay0 = time.Date(2025, 3, 1, 9, 0, 0, 0, time.UTC)

func layerDay(n int) time.Time { return layerDay0.AddDate(0, 0, n) }

// mustLayerHome returns a home whose palace holds memories, scenes, facets
// and triples about Alice (who moved from Paris to Berlin on 2025-03-11)
// and Bob (billing on Postgres), written through the palace directly, the
// extractor off (layertest.MustHome).
func mustLayerHome(t *testing.T) string { return layertest.MustHome(t, homedir.PalaceFile, layerDay0) }

// startLayerServer serves home's HTTP API in this process, the way `engram
// serve` does (serve.json included), until the test ends.
func startLayerServer(t *testing.T, home string) server.Config {
	t.Helper()
	srv := startServerHere(t, home)
	t.Cleanup(func() { server.RemoveServeInfo(home) })
	cfg := server.Config{Config: srv.Engine.Config()}
	if err := server.WriteServeInfo(home, srv.Addr()); err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestLayerCommands(t *testing.T) {
	home := mustLayerHome(t)
	t.Run("local", func(t *testing.T) { checkLayerCommands(t, home) })
	cfg := startLayerServer(t, home)
	// The server holds the home's lock: the commands can only succeed
	// through its HTTP API.
	if e, err := engine.Open(context.Background(), cfg.Config, (&Main{Stderr: io.Discard}).logger(cfg)); err == nil {
		e.Close()
		t.Fatal("the home opened beside its server; the http run would prove nothing")
	}
	t.Run("http", func(t *testing.T) { checkLayerCommands(t, home) })
}

func checkLayerCommands(t *testing.T, home string) {
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runMain(t, append([]string{"--home", home}, args...)...)
	}
	ok := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := run(args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, stderr)
		}
		return stdout
	}
	ids := func(key string, args ...string) []string {
		t.Helper()
		out := ok(append(args, "--json")...)
		var res map[string][]struct {
			ID      string `json:"id"`
			Speaker string `json:"speaker"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		got := []string{}
		for _, x := range res[key] {
			got = append(got, x.ID+x.Speaker)
		}
		return got
	}
	has := func(what, out string, want ...string) {
		t.Helper()
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s lacks %q:\n%s", what, w, out)
			}
		}
	}
	hasNot := func(what, out string, unwanted ...string) {
		t.Helper()
		for _, w := range unwanted {
			if strings.Contains(out, w) {
				t.Errorf("%s holds %q:\n%s", what, w, out)
			}
		}
	}

	// memories
	out := ok("memories")
	has("memories", out, "DATE", "TYPE", "SOURCES", "TEXT", "2025-03-11  fact", "Alice lives in Berlin", "decision", "plan")
	hasNot("memories", out, "Paris", "Carol")
	if !slices.ContainsFunc(strings.Split(out, "\n"), func(l string) bool {
		f := strings.Fields(l)
		return len(f) > 4 && f[1] == "fact" && f[2] == "2" && f[3] == "m2" && strings.Join(f[4:], " ") == "Alice lives in Berlin"
	}) {
		t.Errorf("no line with date, type, 2 sources, id and text:\n%s", out)
	}
	has("memories --superseded", ok("memories", "--superseded", "--subject", "alice"), "Alice lives in Paris (superseded by m2)")
	has("memories --namespace *", ok("memories", "--namespace", "*"), "[work] Carol works at Acme")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"memories"}, []string{"m2", "m4", "m3"}},
		{[]string{"memories", "--type", "decision"}, []string{"m3"}},
		{[]string{"memories", "billing", "postgres"}, []string{"m3", "m4"}},
		{[]string{"memories", "--superseded", "--limit", "2", "--subject", "Alice"}, []string{"m2", "m1"}},
		{[]string{"memories", "--namespace", "work"}, []string{"m5"}},
		{[]string{"memories", "--namespace", "nobody"}, []string{}},
		{[]string{"scenes"}, []string{"sc1", "sc3", "sc2"}},
		{[]string{"scenes", "--session", "s1", "--limit", "1"}, []string{"sc1"}},
		{[]string{"scenes", "postgres"}, []string{"sc2"}},
		{[]string{"persona"}, []string{"Alice", "Bob"}},
		{[]string{"persona", "bob"}, []string{"Bob"}},
		{[]string{"persona", "nobody"}, []string{}},
	} {
		key := map[string]string{"memories": "memories", "scenes": "scenes", "persona": "personas"}[c.args[0]]
		if got := ids(key, c.args...); !slices.Equal(got, c.want) {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
	if out := ok("memories", "--namespace", "nobody", "--json"); !strings.Contains(out, `"memories": []`) {
		t.Errorf("empty memories must print [], got %s", out)
	}
	has("memories none", ok("memories", "--namespace", "nobody"), "no memories")

	// scenes
	out = ok("scenes")
	has("scenes", out, "2025-03-11 09:00 .. 10:00  s1  [default]  Moving to Berlin",
		"    Alice tells Bob she is moving from Paris to Berlin", "    Alice, Bob; 2 turns", "Billing database")

	// persona
	out = ok("persona", "alice")
	has("persona alice", out, "Alice  [default]  updated 2025-03-11", "identity", "lives_in", "Berlin", "since 2025-03-11",
		"was Paris", "2025-03-01 .. 2025-03-11", "likes:jazz")
	hasNot("persona alice", out, "Bob")
	has("persona nobody", ok("persona", "nobody"), `no persona for "nobody" in namespace default`)

	// kg: now Berlin; as of a date before the move, Paris.
	out = ok("kg", "Alice")
	has("kg Alice", out, "Alice (also Ally)  [default]", "lives_in", "Berlin", "[2025-03-11 ..]", "works_at", "Acme")
	hasNot("kg Alice", out, "Paris")
	for _, asOf := range []string{"2025-03-06", "2025-03-06T00:00:00Z"} {
		out = ok("kg", "--as-of", asOf, "alice")
		has("kg --as-of "+asOf, out, "Paris", "[2025-03-01 .. 2025-03-11]", "as of 2025-03-0")
		hasNot("kg --as-of "+asOf, out, "Berlin")
	}
	has("kg --as-of the day of the move", ok("kg", "--as-of", "2025-03-11", "Alice"), "Berlin")
	out = ok("kg", "--timeline", "ally")
	has("kg --timeline", out, "timeline", "[2025-03-01 .. 2025-03-11]", "[2025-03-11 ..]", "Paris", "Berlin")
	var g engram.GraphResult
	if err := json.Unmarshal([]byte(ok("kg", "--json", "--as-of", "2025-03-02T00:00:00Z", "Alice")), &g); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tr := range g.Triples {
		got = append(got, tr.Predicate+" "+tr.Object)
	}
	if g.Entity.Name != "Alice" || !slices.Equal(got, []string{"lives_in Paris", "name Ally"}) {
		t.Errorf("kg --json as of 2025-03-02: %+v", g)
	}
	if err := json.Unmarshal([]byte(ok("kg", "--json", "--timeline", "--limit", "1", "Alice")), &g); err != nil || len(g.Triples) != 1 {
		t.Errorf("kg --limit 1: %v %+v", err, g)
	}
	if code, _, stderr := run("kg", "Nobody"); code != 1 || !strings.Contains(stderr, `no entity "Nobody"`) {
		t.Errorf("kg of an unknown entity: exit %d, %s", code, stderr)
	}

	// Usage errors: exit 2, the problem, and a hint.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"memories", "--type", "idea"}, `--type "idea": want one of fact, decision, preference, plan, event`},
		{[]string{"memories", "--limit", "0"}, "--limit 0: want 1 to 1000"},
		{[]string{"memories", "--limit", "1001"}, "--limit 1001: want 1 to 1000"},
		{[]string{"memories", "--superseded=maybe"}, "invalid boolean value"},
		{[]string{"scenes", "--limit", "-3"}, "--limit -3"},
		{[]string{"scenes", "--speaker", "x"}, "flag provided but not defined: -speaker"},
		{[]string{"persona", "--namespace", "*"}, `--namespace "*" is not allowed here`},
		{[]string{"kg"}, "missing the entity"},
		{[]string{"kg", "--as-of", "yesterday", "Alice"}, `--as-of "yesterday" is neither a date`},
		{[]string{"kg", "--as-of", "2025-03-06", "--timeline", "Alice"}, "--as-of and --timeline do not go together"},
		{[]string{"kg", "--namespace", "*", "Alice"}, `--namespace "*" is not allowed here`},
	} {
		code, _, stderr := run(c.args...)
		hint := "Run 'engram " + c.args[0] + " --help' for usage."
		if code != exitUsage || !strings.Contains(stderr, c.want) || !strings.HasSuffix(strings.TrimSpace(stderr), hint) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, %q and the hint", c.args, code, stderr, c.want)
		}
	}
	for _, cmd := range []string{"memories", "scenes", "persona", "kg"} {
		if code, stdout, _ := run(cmd, "--help"); code != 0 || !strings.Contains(stdout, "Usage: engram "+cmd) {
			t.Errorf("%s --help: exit %d\n%s", cmd, code, stdout)
		}
	}
}

// startServerHere serves home in this process the way `engram serve` does,
// on a free loopback port, until the test ends.
func startServerHere(t *testing.T, home string) *server.Server {
	t.Helper()
	m := &Main{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" }, home: home}
	cfg, err := m.loadConfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:0"
	srv, err := server.Start(context.Background(), cfg, m.logger(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
	})
	return srv
}
