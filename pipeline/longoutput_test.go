package pipeline_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/extract"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/pgpalace"
	"github.com/engram-dev/engram/pipeline"
)

// longOutput is the rules extractor with what a model may write beside:
// each memory's text run on for hundreds of distinct words, and the
// object of its relation a paragraph.
type longOutput struct{ engram.Extractor }

func (x longOutput) Extract(ctx context.Context, turns []engram.Turn) ([]engram.Memory, error) {
	mems, err := x.Extractor.Extract(ctx, turns)
	// Words a compressor cannot shorten (PostgreSQL compresses an index
	// row before it measures it).
	rng := rand.New(rand.NewPCG(1, 2))
	var words []string
	for range 200 { // about 3,400 bytes: under memrule.MaxText, over an index row
		words = append(words, fmt.Sprintf("w%x", rng.Uint64()))
	}
	run := strings.Join(words, " ")
	for i := range mems {
		mems[i].Text += " " + run
		if r := mems[i].Relation; r != nil {
			r.Object += " " + run
		}
	}
	return mems, err
}

// TestMemoryWorker_LongOutputOnPostgres: memories of thousands of bytes
// and relations naming a paragraph are stored in the palace in PostgreSQL
// (whose b-tree index rows end at 2,704 bytes), cut and without the long
// names, and the persona and graph jobs after them run, instead of the
// batch failing at every run.
func TestMemoryWorker_LongOutputOnPostgres(t *testing.T) {
	ctx := waitCtx(t)
	a, _ := mustArchive(t, team())
	pg, err := pgpalace.Open(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	for _, w := range []interface{ Run(context.Context) error }{
		&pipeline.MemoryWorker{Archive: a, Extractor: longOutput{extract.RulesExtractor{}}, Store: pg},
		&pipeline.PersonaWorker{Store: pg},
		&pipeline.GraphWorker{Store: pg},
	} {
		if err := w.Run(ctx); err != nil {
			t.Fatalf("%T: %v", w, err)
		}
	}
	mems, err := pg.Memories(ctx, engram.MemoryQuery{Superseded: true, Limit: 1000})
	if err != nil || len(mems) == 0 {
		t.Fatalf("memories: %d, %v", len(mems), err)
	}
	for _, m := range mems {
		if len(m.Text) > 1000 || (m.Relation != nil && len(m.Relation.Object) > 200) {
			t.Fatalf("a memory stored as extracted: %d bytes of text, relation %+v", len(m.Text), m.Relation)
		}
	}
}
