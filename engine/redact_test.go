package engine_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/config"
	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/engine"
	"github.com/engram-dev/engram/internal/vectortest"
)

// holdingEmbedServer is an OpenAI-compatible embedding server that answers
// with the builtin embedder's vectors, and holds the first request whose
// input holds a text until the test releases it: an embedder that is slow
// just when a batch of turns is in flight.
type holdingEmbedServer struct {
	emb     *embedder.Builtin
	hold    string
	reached chan struct{} // closed when the held request arrives
	release chan struct{} // closed by the test to answer it

	once sync.Once
}

func newHoldingEmbedServer(t *testing.T, hold string) (*holdingEmbedServer, string) {
	s := &holdingEmbedServer{emb: embedder.New(), hold: hold, reached: make(chan struct{}), release: make(chan struct{})}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	t.Cleanup(s.unhold) // before the server closes: no request stays held
	return s, srv.URL + "/v1"
}

// unhold answers the held request, if not done yet.
func (s *holdingEmbedServer) unhold() {
	select {
	case <-s.release:
	default:
		close(s.release)
	}
}

func (s *holdingEmbedServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Input []string `json:"input"`
	}
	if r.URL.Path != "/v1/embeddings" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
		return
	}
	if slices.ContainsFunc(req.Input, func(in string) bool { return strings.Contains(in, s.hold) }) {
		held := false
		s.once.Do(func() { held = true })
		if held {
			close(s.reached)
			select {
			case <-s.release:
			case <-r.Context().Done():
				return
			}
		}
	}
	vecs, err := s.emb.Embed(r.Context(), req.Input)
	if err != nil {
		http.Error(w, `{"error":{"message":"embed"}}`, http.StatusInternalServerError)
		return
	}
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	reply := struct {
		Data []item `json:"data"`
	}{}
	for i, v := range vecs {
		reply.Data = append(reply.Data, item{Index: i, Embedding: v})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

// TestRedactWhileABatchEmbeds: the vector indexer reads a turn and embeds
// it (slowly), the turn is redacted meanwhile, then the batch would write
// the vector of the old text. The redaction must win: afterwards the
// turn's vector is the embedding of its redacted text.
func TestRedactWhileABatchEmbeds(t *testing.T) {
	ctx := t.Context()
	const secret = "zorbletrax"
	srv, base := newHoldingEmbedServer(t, secret)
	cfg := config.DefaultConfig()
	cfg.Home = filepath.Join(t.TempDir(), "home")
	cfg.Embedder, cfg.OpenAIBaseURL, cfg.OpenAIModel = config.EmbedderOpenAI, base, "fake-embed"
	cfg.Extractor = config.ExtractorNone
	e, err := engine.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		srv.unhold()
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	old := engram.Turn{ID: "r1", Namespace: engram.DefaultNamespace, Session: "s1", Role: engram.RoleUser, Speaker: "Ana", Content: "My password is " + secret + ", keep it."}
	if _, err := e.Ingest(ctx, []engram.Turn{old}); err != nil {
		t.Fatal(err)
	}
	select { // the indexer's batch holds the turn's old text
	case <-srv.reached:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	rep, err := e.Redact(ctx, engram.RedactRequest{IDs: []string{"r1"}, Texts: []string{secret}})
	if err != nil || len(rep.Turns) != 1 || len(rep.Warnings) != 0 {
		t.Fatalf("redact: %+v, %v", rep, err)
	}
	srv.unhold() // the batch goes on, after the redaction
	if err := e.WaitVectors(ctx); err != nil {
		t.Fatal(err)
	}

	redacted := old
	redacted.Content = "My password is [redacted], keep it."
	want, err := embedder.New().Embed(ctx, []string{old.EmbedText(), redacted.EmbedText()})
	if err != nil {
		t.Fatal(err)
	}
	stored, err := e.StoredVectors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := stored["r1"]
	switch {
	case !ok:
		t.Fatal("the redacted turn has no vector")
	case vectortest.SameDirection(got.Vector, want[0]):
		t.Fatal("the turn's vector is the embedding of the text the redaction replaced")
	case !vectortest.SameDirection(got.Vector, want[1]):
		t.Fatal("the turn's vector is not the embedding of its redacted text")
	}
}

// TestRedactWhileTheIndexerHoldsTheOldText: a turn is archived just as a
// redaction begins, and the indexer reads it before the archive's rewrite
// but stores it after: the palace gets its old text. The redaction must
// wait for that batch and redact the palace's copy too. The indexer's
// batch goes on when the redaction waits for it, or else (a redaction that
// does not wait) when the redaction has returned.
func TestRedactWhileTheIndexerHoldsTheOldText(t *testing.T) {
	ctx := t.Context()
	const secret = "quillibrant-77"
	read := make(chan struct{})    // the indexer read the late turn
	release := make(chan struct{}) // the indexer may store it
	var readOnce, releaseOnce sync.Once
	letGo := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(letGo)
	var e *engine.Engine
	ingested := make(chan error, 1)
	engine.SetTestHooks(t, func(batch []engram.Turn) {
		if slices.ContainsFunc(batch, func(tu engram.Turn) bool { return tu.ID == "late" }) {
			readOnce.Do(func() {
				close(read)
				<-release
			})
		}
	}, func() {
		late := engram.Turn{ID: "late", Namespace: engram.DefaultNamespace, Session: "s1", Role: engram.RoleUser, Content: "The vault code is " + secret + "."}
		go func() {
			_, err := e.Ingest(ctx, []engram.Turn{late})
			ingested <- err
		}()
		<-read
	}, letGo)
	cfg := config.DefaultConfig()
	cfg.Home = filepath.Join(t.TempDir(), "home")
	cfg.Extractor = config.ExtractorNone
	var err error
	e, err = engine.Open(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Error(err)
		}
	})
	rep, err := e.Redact(ctx, engram.RedactRequest{IDs: []string{"late"}, Texts: []string{secret}})
	if err != nil || len(rep.Turns) != 1 {
		t.Fatalf("redact: %+v, %v", rep, err)
	}
	letGo()
	if err := <-ingested; err != nil {
		t.Fatal(err)
	}
	turns, err := e.ListTurns(ctx, engram.TurnQuery{Namespace: engram.DefaultNamespace, Session: "s1"})
	if err != nil || len(turns) != 1 {
		t.Fatalf("turns: %+v, %v", turns, err)
	}
	if want := "The vault code is [redacted]."; turns[0].Content != want {
		t.Fatalf("the palace holds %q, want %q", turns[0].Content, want)
	}
}
