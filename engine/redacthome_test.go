package engine_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/homedir"
	"github.com/engram-dev/engram/internal/filetest"
	"github.com/engram-dev/engram/internal/vectortest"
	"github.com/engram-dev/engram/palace"
)

// redactOnce opens the home of cfg, redacts as req asks and closes it, as
// `engram redact --yes` does with no server; the redaction must succeed.
func redactOnce(t *testing.T, cfg config.Config, req engram.RedactRequest) engram.RedactReport {
	t.Helper()
	e, err := engine.Open(t.Context(), cfg, quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	rep, err := e.Redact(t.Context(), req)
	if err != nil {
		t.Fatalf("redact %+v: %v", req, err)
	}
	return rep
}

// TestRedactHome redacts a span of a turn with a marker of its own and
// finds it in no file of the home afterwards, nor after a rebuild.
func TestRedactHome(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg := ingestHome(t, home, `{"id":"t1","session":"s1","speaker":"Ana","content":"the staging password is plumbusgrax, keep it safe"}
{"id":"t2","session":"s1","speaker":"Ana","content":"we deploy on Fridays"}
`)
	rep := redactOnce(t, cfg, engram.RedactRequest{IDs: []string{"t1"}, Texts: []string{"plumbusgrax"}, Marker: "[secret]"})
	if rep.Spans != 1 || !slices.Equal(rep.Turns, []string{"t1"}) {
		t.Fatalf("redact: %+v", rep)
	}
	resp := recallOnce(t, cfg, engram.ModeKeyword, "staging password", 0)
	if len(resp.Results) == 0 || resp.Results[0].Text != "the staging password is [secret], keep it safe" {
		t.Fatalf("recall after the redaction: %+v", resp)
	}
	rebuildHome(t, cfg)
	filetest.MustHoldNowhere(t, home, "plumbusgrax")
	doctor(t, cfg, false)
}

// TestRedactOtherModels redacts turns on a home whose palace holds the
// vectors of two models. A model that can embed gets the redacted turn's
// vector made again from the new text, whether it is active or not; one
// that cannot (its Ollama server down) loses it, the redaction succeeds
// all the same and warns, naming the model and what makes the vectors
// again, and the model's watermark goes back so that its next catch-up
// embeds the turn.
func TestRedactOtherModels(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	ingestHome(t, home, `{"id":"t1","session":"s1","speaker":"Ana","content":"the staging password is plumbusgrax, keep it safe"}
{"id":"t2","session":"s1","speaker":"Ana","content":"the deploy key is zibbleflorp, do not share it"}
`)
	ctx := t.Context()
	b := embedder.New()
	const down = "ollama:nomodel"
	embedded := func(texts ...string) []engram.VectorItem {
		t.Helper()
		vecs, err := b.Embed(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		items := make([]engram.VectorItem, len(texts))
		for i, v := range vecs {
			items[i] = engram.VectorItem{ID: fmt.Sprintf("t%d", i+1), Kind: engram.KindTurn, Namespace: "default", Vector: v}
		}
		return items
	}
	// withPalace runs fn on the home's palace, the engine closed.
	withPalace := func(fn func(p *palace.DB)) {
		t.Helper()
		p, err := palace.Open(filepath.Join(home, homedir.PalaceFile), palace.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		fn(p)
	}
	// vectorOf is model's vector of turn id (nil: none) and its watermark.
	vectorOf := func(p *palace.DB, model, id string) ([]float32, int64) {
		t.Helper()
		v, err := p.Vectors(ctx, model, 0)
		if err != nil {
			t.Fatal(err)
		}
		wm, err := v.Watermark(ctx)
		if err != nil {
			t.Fatal(err)
		}
		all, err := v.VectorsSince(ctx, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		for _, sv := range all {
			if sv.ID == id {
				return sv.Vector, wm
			}
		}
		return nil, wm
	}
	old := embedded("Ana: the staging password is plumbusgrax, keep it safe", "Ana: the deploy key is zibbleflorp, do not share it")
	withPalace(func(p *palace.DB) {
		for _, model := range []string{b.Model(), down} {
			v, err := p.Vectors(ctx, model, b.Dim())
			if err != nil {
				t.Fatal(err)
			}
			if err := v.PutTurnVectors(ctx, old, 2); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.ActivateModel(ctx, down); err != nil {
			t.Fatal(err)
		}
	})

	// The active model cannot embed: the retired builtin one can.
	writeConfig(t, home, "embedder = \"ollama\"\nollama_model = \"nomodel\"\nollama_host = \"http://127.0.0.1:1\"\n")
	rep := redactOnce(t, homeConfig(t, home), engram.RedactRequest{IDs: []string{"t1"}, Texts: []string{"plumbusgrax"}})
	if rep.Spans != 1 || len(rep.Turns) != 1 || len(rep.Warnings) != 1 ||
		!strings.HasPrefix(rep.Warnings[0], "the "+down+" vectors of 1 redacted turn are deleted and not made again") ||
		!strings.Contains(rep.Warnings[0], "they are made when its embedder is back") {
		t.Fatalf("redact with the active model down: %+v", rep)
	}
	want := embedded("Ana: the staging password is [redacted], keep it safe")[0].Vector
	withPalace(func(p *palace.DB) {
		if v, wm := vectorOf(p, b.Model(), "t1"); !vectortest.SameDirection(v, want) || wm != 2 {
			t.Errorf("the builtin vector of the redacted turn is not made from its new text (watermark %d, want 2)", wm)
		}
		if v, wm := vectorOf(p, down, "t1"); v != nil || wm != 0 {
			t.Errorf("%s: the redacted turn's vector is left (%v), or the watermark %d is not before it", down, v != nil, wm)
		}
		if err := p.ActivateModel(ctx, b.Model()); err != nil {
			t.Fatal(err)
		}
	})

	// The active model embeds; the retired one, its server down, cannot.
	writeConfig(t, home, "embedder = \"builtin\"\nollama_host = \"http://127.0.0.1:1\"\n")
	rep = redactOnce(t, homeConfig(t, home), engram.RedactRequest{IDs: []string{"t2"}, Texts: []string{"zibbleflorp"}})
	if len(rep.Warnings) != 1 ||
		!strings.HasPrefix(rep.Warnings[0], "the "+down+" vectors of 1 redacted turn are deleted and not made again") ||
		!strings.HasSuffix(rep.Warnings[0], "`engram reembed --model "+down+"` makes them") {
		t.Fatalf("redact with a retired model down: %+v", rep)
	}
	want = embedded("Ana: the deploy key is [redacted], do not share it")[0].Vector
	withPalace(func(p *palace.DB) {
		if v, _ := vectorOf(p, b.Model(), "t2"); !vectortest.SameDirection(v, want) {
			t.Error("the active model's vector of the redacted turn is not made from its new text")
		}
		if v, wm := vectorOf(p, down, "t2"); v != nil || wm != 0 {
			t.Errorf("%s: the redacted turn's vector is left (%v), or the watermark %d is not before it", down, v != nil, wm)
		}
	})
	filetest.MustHoldNowhere(t, home, "plumbusgrax", "zibbleflorp")
}

// TestRedactWarnsOfASession: a redaction of a span a session name holds
// (which it does not reach) succeeds and warns so, naming forget.
func TestRedactWarnsOfASession(t *testing.T) {
	cfg := ingestHome(t, filepath.Join(t.TempDir(), "home"), `{"id":"t1","session":"plumbusgrax-chat","content":"the password is plumbusgrax"}
`)
	rep := redactOnce(t, cfg, engram.RedactRequest{Texts: []string{"plumbusgrax"}})
	if rep.Spans != 1 || len(rep.Turns) != 1 || !slices.ContainsFunc(rep.Warnings, func(w string) bool {
		return strings.Contains(w, `a span is also in the session of 1 turn ("t1")`) && strings.Contains(w, "engram forget --turn ID")
	}) {
		t.Fatalf("redact of a span a session holds: %+v", rep)
	}
}

// TestRedactReachesPiecesOfASpan redacts a span after every layer job ran
// on its turn: the scene job's title and term statistics hold words of the
// span ("Grimblethorp" of "Grimblethorp-11"), not the span whole, and
// must lose them too; nothing of the span is left in any file.
func TestRedactReachesPiecesOfASpan(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	cfg := ingestHome(t, home, `{"id":"a6","session":"s4","speaker":"Ana","content":"the secret is Grimblethorp-11, keep the rest"}
{"id":"a7","session":"s4","speaker":"Bo","content":"the last turn stays"}
{"id":"a8","session":"s5","speaker":"Ana","content":"我的密码是青龙偃月刀，别告诉别人"}
`)
	withEngine(t, cfg, func(e *engine.Engine) { runAllJobs(t, e) })
	db := openPalaceDB(t, home)
	var title string
	if err := db.QueryRow(`SELECT title FROM scenes WHERE session = 's4'`).Scan(&title); err != nil || !strings.Contains(title, "Grimblethorp") {
		t.Fatalf("the scene's title before: %q %v; the test needs one made of the span's word", title, err)
	}
	db.Close()
	rep := redactOnce(t, cfg, engram.RedactRequest{Texts: []string{"Grimblethorp-11", "青龙偃月刀"}})
	if rep.Spans != 2 || !slices.Equal(rep.Turns, []string{"a6", "a8"}) {
		t.Fatalf("redact: %+v", rep)
	}
	filetest.MustHoldNowhere(t, home, "Grimblethorp", "青龙", "偃月")
}
