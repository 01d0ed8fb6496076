package pgpalace

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// TestPersonas_AsSQLite checks that this palace folds persona facets as
// package palace's SQLite file does: the same profiles from the same
// observations in batches, through a forget, a redaction of a name that
// speakers, keys and values hold, and a reset.
func TestPersonas_AsSQLite(t *testing.T) {
	ctx := t.Context()
	turns := searchTurns(t)
	pg, lite := bothPalaces(t, turns, 100)
	type personaPalace interface {
		ApplyFacets(ctx context.Context, worker string, updates []engram.FacetUpdate, throughSeq int64) error
		Persona(ctx context.Context, namespace, speaker string) ([]engram.Persona, error)
		ResetPersonas(ctx context.Context, worker string) error
		WorkerSeq(ctx context.Context, worker string) (int64, error)
		ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error)
		RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error)
	}
	palaces := []personaPalace{pg, lite}
	rng := rand.New(rand.NewPCG(3, 9))
	speakers := []string{"Ana", "ana", "Ben", "Émile", "émile", "Zorblax"}
	values := []string{"Lisbon", "Porto", "jazz", "Zorblax tea", "chess", "the night shift"}
	var updates []engram.FacetUpdate
	base := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	for i := range 400 {
		tu := turns[rng.IntN(len(turns))]
		ev := []string{tu.ID}
		if i%5 == 0 {
			ev = append(ev, turns[rng.IntN(len(turns))].ID)
		}
		facet := []string{engram.FacetIdentity, engram.FacetPreference, engram.FacetPlace}[rng.IntN(3)]
		updates = append(updates, engram.FacetUpdate{Namespace: []string{"work", "home"}[rng.IntN(2)], Speaker: speakers[rng.IntN(len(speakers))],
			Facet: facet, Key: []string{"lives_in", "likes:jazz", "likes:zorblax", "works_at"}[rng.IntN(4)],
			Value: values[rng.IntN(len(values))], At: base.Add(time.Duration(rng.IntN(90*24)) * time.Hour), Evidence: ev})
	}
	for _, p := range palaces {
		for i := 0; i < len(updates); i += 37 {
			if err := p.ApplyFacets(ctx, "persona", updates[i:min(i+37, len(updates))], int64(i+37)); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.ApplyFacets(ctx, "persona", updates[100:150], 500); err != nil { // applied twice: no change
			t.Fatal(err)
		}
	}
	compare := func(when string) {
		t.Helper()
		for _, ns := range []string{"work", "home", "none"} {
			for _, sp := range []string{"", "ana", "ANA", "émile", "Émile", "zorblax", "nobody"} {
				want, err := lite.Persona(ctx, ns, sp)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pg.Persona(ctx, ns, sp)
				if err != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s: Persona(%q, %q) = %v, %v\nwant %v", when, ns, sp, brief(got), err, brief(want))
				}
			}
		}
		for _, p := range palaces[:1] {
			got, _ := p.WorkerSeq(ctx, "persona")
			want, _ := lite.WorkerSeq(ctx, "persona")
			if got != want {
				t.Errorf("%s: watermark %d; the SQLite palace's %d", when, got, want)
			}
		}
	}
	compare("folded")
	if all, _ := lite.Persona(ctx, "work", ""); len(all) < 4 {
		t.Fatalf("only %d personas", len(all))
	}

	var forget []engram.ForgetTurn
	for i, tu := range turns {
		if i%4 == 1 {
			forget = append(forget, engram.ForgetTurn{ID: tu.ID, Seq: int64(len(turns) + i + 1)})
		}
	}
	var fres []engram.ForgetResult
	for _, p := range palaces {
		res, err := p.ForgetTurns(ctx, forget, time.Now(), nil)
		if err != nil {
			t.Fatal(err)
		}
		fres = append(fres, res)
	}
	if fres[0].Facets != fres[1].Facets || fres[0].Facets == 0 {
		t.Errorf("ForgetTurns changed %d facets; the SQLite palace %d", fres[0].Facets, fres[1].Facets)
	}
	compare("after a forget")

	var red []engram.Turn
	for i, tu := range turns {
		if i%4 != 1 && i%3 == 0 {
			tu.Content += " [redacted]"
			red = append(red, tu)
		}
	}
	var rres []engram.RedactResult
	for _, p := range palaces {
		res, err := p.RedactTurns(ctx, red, []string{"Zorblax"}, "[redacted]")
		if err != nil {
			t.Fatal(err)
		}
		rres = append(rres, res)
	}
	if rres[0].Facets != rres[1].Facets || rres[0].Facets == 0 {
		t.Errorf("RedactTurns changed %d facets; the SQLite palace %d", rres[0].Facets, rres[1].Facets)
	}
	compare("after a redaction")

	for _, p := range palaces {
		if err := p.ResetPersonas(ctx, "persona"); err != nil {
			t.Fatal(err)
		}
	}
	compare("after a reset")
	if got, _ := pg.Persona(ctx, "work", ""); len(got) != 0 {
		t.Fatalf("personas after a reset: %v", brief(got))
	}
}

// brief lists personas a line a facet, for a failure's message.
func brief(ps []engram.Persona) string {
	var b strings.Builder
	for _, p := range ps {
		for _, f := range p.Facets {
			fmt.Fprintf(&b, "\n  %s/%s %s/%s=%q since %s ev %v, %d past", p.Namespace, p.Speaker, f.Facet, f.Key, f.Value,
				f.Since.Format(time.DateOnly), f.Evidence, len(f.History))
		}
	}
	return b.String()
}
