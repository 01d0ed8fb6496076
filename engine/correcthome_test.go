package engine_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/testutil"
)

// layeredHome is a home that archived lines and ran every job once.
func layeredHome(t *testing.T, home, lines string) config.Config {
	t.Helper()
	cfg := ingestHome(t, home, lines)
	runAllJobsOnce(t, cfg)
	return cfg
}

// rebuildHome rebuilds the palace of cfg's home from its archive, as
// `engram rebuild` does: the replaced palace kept beside it.
func rebuildHome(t *testing.T, cfg config.Config) {
	t.Helper()
	if _, err := engine.Rebuild(t.Context(), cfg, quiet(), nil, true); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
}

// withEngine opens the home of cfg, runs fn on it and closes it.
func withEngine(t *testing.T, cfg config.Config, fn func(e *engine.Engine)) {
	t.Helper()
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	fn(e)
}

// TestCorrectThenRebuild corrects a memory and a graph fact, then rebuilds
// the palace from the archive: the corrections come back from the home's
// journal and win over the extraction that runs again. A backup carries
// the journal and the tombstones.
func TestCorrectThenRebuild(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	cfg := layeredHome(t, home, `{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon."}
{"id":"t2","session":"s1","speaker":"Ana","content":"I work at Acme."}
`)
	memories := func(e *engine.Engine, superseded bool) []engram.Memory {
		t.Helper()
		mems, err := e.Memories(ctx, engram.MemoryQuery{Text: "Acme", Superseded: superseded})
		if err != nil {
			t.Fatal(err)
		}
		return mems
	}
	triples := func(e *engine.Engine) []engram.Triple {
		t.Helper()
		g, err := e.Graph(ctx, engram.GraphQuery{Entity: "Ana"})
		if err != nil {
			t.Fatal(err)
		}
		return g.Triples
	}
	var acme, lives string
	withEngine(t, cfg, func(e *engine.Engine) {
		if mems := memories(e, false); len(mems) > 0 {
			acme = mems[0].ID
		}
		for _, tr := range triples(e) {
			if tr.Object == "Lisbon" {
				lives = tr.ID
			}
		}
		if acme == "" || lives == "" {
			t.Fatalf("no memory about Acme or fact about Lisbon to correct: %q %q", acme, lives)
		}
		// A correction of what does not exist names it.
		if _, err := e.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: "mem-nothing", Wrong: true}); err == nil || !strings.Contains(err.Error(), "mem-nothing") {
			t.Errorf("a correction of an unknown memory: %v", err)
		}
		if _, err := e.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectMemory, ID: acme, Wrong: true, Reason: "never worked there"}); err != nil {
			t.Fatalf("mark the memory wrong: %v", err)
		}
		if _, err := e.Correct(ctx, engram.CorrectionRequest{Target: engram.CorrectFact, ID: lives, Object: "Porto"}); err != nil {
			t.Fatalf("correct the fact's object: %v", err)
		}
	})
	check := func(when string, cfg config.Config) {
		t.Helper()
		withEngine(t, cfg, func(e *engine.Engine) {
			for _, m := range memories(e, false) {
				if m.ID == acme {
					t.Errorf("%s: the memory marked wrong is listed: %+v", when, m)
				}
			}
			wrong := false
			for _, m := range memories(e, true) {
				wrong = wrong || m.ID == acme && m.Wrong
			}
			if !wrong {
				t.Errorf("%s: the history does not say the memory is wrong: %+v", when, memories(e, true))
			}
			porto, lisbon := false, false
			for _, tr := range triples(e) {
				porto = porto || tr.Object == "Porto"
				lisbon = lisbon || tr.Object == "Lisbon" || tr.Subject == "Lisbon"
			}
			if !porto || lisbon {
				t.Errorf("%s: the graph lacks the correction: %+v", when, triples(e))
			}
		})
	}
	check("after the corrections", cfg)
	if b, err := os.ReadFile(filepath.Join(home, "corrections.jsonl")); err != nil || strings.Count(string(b), "\n") != 2 {
		t.Fatalf("corrections journal: %v %q", err, b)
	}
	rebuildHome(t, cfg)
	check("after the rebuild", cfg)
	runAllJobsOnce(t, cfg)
	check("after the rebuild and the jobs", cfg)

	// A backup carries the journal and the tombstones; the restored home
	// keeps the corrections through its own rebuild.
	withEngine(t, cfg, func(e *engine.Engine) {
		if _, err := e.Forget(ctx, engram.ForgetRequest{IDs: []string{"t1"}}); err != nil {
			t.Fatalf("forget: %v", err)
		}
	})
	dir := filepath.Join(t.TempDir(), "backup")
	backupHome(t, cfg, dir, false)
	man, err := os.ReadFile(filepath.Join(dir, "engram-backup.json"))
	if err != nil || !strings.Contains(string(man), `"corrections.jsonl"`) {
		t.Fatalf("the manifest lacks the journal: %v %s", err, man)
	}
	restored := filepath.Join(t.TempDir(), "restored")
	if _, err := restoreHome(t, dir, restored, false); err != nil {
		t.Fatalf("restore: %v", err)
	}
	rcfg := homeConfig(t, restored)
	rebuildHome(t, rcfg)
	withEngine(t, rcfg, func(e *engine.Engine) {
		wrong := false
		for _, m := range memories(e, true) {
			wrong = wrong || m.Wrong
		}
		if !wrong {
			t.Errorf("the restored home lost the correction: %+v", memories(e, true))
		}
	})
	if resp := recallOnce(t, rcfg, engram.ModeKeyword, "Lisbon", 0); len(resp.Results) > 0 {
		t.Errorf("the restored home brought a forgotten turn back: %+v", resp)
	}
	testutil.MustFindCheck(t, doctor(t, rcfg, false), "forgotten", "ok")
}

// TestForgetThenRebuild forgets a turn and a session after the layers were
// derived, rebuilds the palace from the archive, and then finds the
// forgotten words in no file of the home.
func TestForgetThenRebuild(t *testing.T) {
	ctx := t.Context()
	home := filepath.Join(t.TempDir(), "home")
	cfg := layeredHome(t, home, `{"id":"t1","session":"s1","speaker":"Ana","content":"I live in Lisbon and I work at Acme."}
{"id":"t2","session":"s1","speaker":"Ana","content":"I moved to Quokkaville and I love xylophones."}
{"id":"t3","session":"s2","speaker":"Bo","content":"My favourite band is Zanzibarmonic, we decided on Postgres."}
{"id":"t4","session":"s2","speaker":"Bo","content":"Zanzibarmonic plays on Friday in Quokkaville."}
{"id":"t5","session":"s3","speaker":"Bo","content":"We keep the API on port 30001."}
`)
	withEngine(t, cfg, func(e *engine.Engine) {
		if rep, err := e.Forget(ctx, engram.ForgetRequest{IDs: []string{"t2"}, Reason: "asked"}); err != nil || len(rep.Turns) != 1 {
			t.Fatalf("forget t2: %+v %v", rep, err)
		}
		if rep, err := e.Forget(ctx, engram.ForgetRequest{Session: "s2", Namespace: engram.DefaultNamespace}); err != nil || len(rep.Turns) != 2 {
			t.Fatalf("forget session s2: %+v %v", rep, err)
		}
		if rep, err := e.Forget(ctx, engram.ForgetRequest{IDs: []string{"nope"}}); err == nil && len(rep.Unknown) == 0 || err != nil && !strings.Contains(err.Error(), "nope") {
			t.Fatalf("forget of an unknown id: %+v %v", rep, err)
		}
	})
	rebuildHome(t, cfg)
	runAllJobsOnce(t, cfg)
	kinds := []string{engram.KindTurn, engram.KindMemory, engram.KindScene, engram.KindFact}
	for _, q := range []string{"Quokkaville", "xylophones", "Zanzibarmonic"} {
		resp := recallOnce(t, cfg, engram.ModeKeyword, q, 0, kinds...)
		for _, r := range resp.Results {
			if strings.Contains(r.Text, q) {
				t.Errorf("recall %q after the rebuild: %+v", q, r)
			}
		}
	}
	if resp := recallOnce(t, cfg, engram.ModeKeyword, "Lisbon", 0); len(resp.Results) == 0 || !strings.Contains(resp.Results[0].Text, "Lisbon") {
		t.Fatalf("a kept turn is lost: %+v", resp)
	}
	filetest.MustHoldNowhere(t, home, "Quokkaville", "xylophone", "Zanzibarmonic", "quokkavill", "zanzibarmon")
	doctor(t, cfg, false)
}
