package pgpalace

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// sceneWrites groups turns into scenes as the scene job would: runs of
// six turns of a session, titled and summarised with their words, the
// last of each session open (a draft holding its words).
func sceneWrites(turns []engram.Turn, round int) []engram.SceneWrite {
	bySession := map[engram.SessionKey][]engram.Turn{}
	var keys []engram.SessionKey
	for _, tu := range turns {
		k := engram.SessionKey{Namespace: tu.Namespace, Session: tu.Session}
		if bySession[k] == nil {
			keys = append(keys, k)
		}
		bySession[k] = append(bySession[k], tu)
	}
	var out []engram.SceneWrite
	for _, k := range keys {
		ts := bySession[k]
		for i := 0; i < len(ts); i += 6 {
			out = append(out, sceneOf(ts[i:min(i+6, len(ts))], fmt.Sprintf("sc-%s-%s-%d", k.Namespace, k.Session, i), round, i+6 >= len(ts)))
		}
	}
	return out
}

// sceneOf is a scene of turns, id id; open ones carry a draft.
func sceneOf(ts []engram.Turn, id string, round int, open bool) engram.SceneWrite {
	s := engram.Scene{ID: id, Namespace: ts[0].Namespace, Session: ts[0].Session, Start: ts[0].TS, End: ts[len(ts)-1].TS}
	var words []string
	for _, tu := range ts {
		s.Turns = append(s.Turns, tu.ID)
		if tu.Speaker != "" && !slices.Contains(s.Participants, tu.Speaker) {
			s.Participants = append(s.Participants, tu.Speaker)
		}
		f := strings.Fields(tu.Content)
		words = append(words, f[:min(4, len(f))]...)
	}
	s.Title = fmt.Sprintf("round %d: %s", round, strings.Join(words[:min(3, len(words))], " "))
	s.Summary = strings.Join(words, " ")
	w := engram.SceneWrite{Scene: s}
	if open {
		w.Draft = []byte(fmt.Sprintf(`{"summary":%q,"turns":%d}`, s.Summary, len(ts)))
	}
	return w
}

// TestScenes_AsSQLite checks that this palace keeps the scenes as package
// palace's SQLite file does: the same scenes, drafts, scene units, lists,
// searches and scores, through rewrites of scenes, a forget that makes
// scenes again of the turns left, and a redaction.
func TestScenes_AsSQLite(t *testing.T) {
	ctx := t.Context()
	turns := unitTurns(t)
	pg, lite := bothPalaces(t, turns, 60)
	type scenePalace interface {
		Stats(ctx context.Context) (engram.Stats, error)
		ListTurns(ctx context.Context, q engram.TurnQuery) ([]engram.Turn, error)
		engram.UnitIndex
		PutScenes(ctx context.Context, worker string, scenes []engram.SceneWrite, throughSeq int64) error
		OpenScenes(ctx context.Context, keys []engram.SessionKey) (map[engram.SessionKey][]byte, error)
		ScenesSince(ctx context.Context, after int64, limit int) ([]engram.Scene, error)
		GetScenes(ctx context.Context, ids []string) ([]engram.Scene, error)
		SearchScenes(ctx context.Context, q engram.TextQuery) ([]engram.SceneHit, error)
		Scenes(ctx context.Context, q engram.SceneQuery) ([]engram.Scene, error)
		ForgetTurns(ctx context.Context, turns []engram.ForgetTurn, at time.Time, remake engram.SceneRemaker) (engram.ForgetResult, error)
		RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error)
	}
	palaces := []scenePalace{pg, lite}
	writes := sceneWrites(turns, 1)
	for _, p := range palaces {
		for i := 0; i < len(writes); i += 25 {
			if err := p.PutScenes(ctx, "scenes", writes[i:min(i+25, len(writes))], int64(i)); err != nil {
				t.Fatal(err)
			}
		}
		// Some scenes written again (a title the summariser changed).
		if err := p.PutScenes(ctx, "scenes", sceneWrites(turns[:80], 2), 200); err != nil {
			t.Fatal(err)
		}
	}
	keys := map[engram.SessionKey]bool{{Namespace: "work", Session: "none"}: true}
	for _, tu := range turns {
		keys[engram.SessionKey{Namespace: tu.Namespace, Session: tu.Session}] = true
	}
	noTime := turns[slices.IndexFunc(turns, func(tu engram.Turn) bool { return tu.TS.IsZero() && tu.Seq > 100 })]
	compare := func(when string) {
		t.Helper()
		all, err := lite.ScenesSince(ctx, 0, 100_000)
		if err != nil || len(all) < 20 {
			t.Fatalf("%s: %d scenes, %v", when, len(all), err)
		}
		ids := []string{"unknown"}
		for _, s := range all {
			ids = append(ids, s.ID)
		}
		slices.Reverse(ids)
		from, to := turns[100].TS, turns[200].TS
		reads := []struct {
			what string
			read func(scenePalace) (any, error)
		}{
			{"ScenesSince", func(p scenePalace) (any, error) { return p.ScenesSince(ctx, 5, 100_000) }},
			{"Stats", func(p scenePalace) (any, error) { return p.Stats(ctx) }},
			{"ListTurns", func(p scenePalace) (any, error) { return p.ListTurns(ctx, engram.TurnQuery{Limit: 1000}) }},
			{"ListTurns of a namespace", func(p scenePalace) (any, error) {
				return p.ListTurns(ctx, engram.TurnQuery{Namespace: "home", Limit: 30})
			}},
			{"ListTurns before", func(p scenePalace) (any, error) {
				return p.ListTurns(ctx, engram.TurnQuery{Namespace: "work", Before: turns[150].Seq, Limit: 1000})
			}},
			{"ListTurns before a turn without a time", func(p scenePalace) (any, error) {
				return p.ListTurns(ctx, engram.TurnQuery{Before: noTime.Seq, Limit: 1000})
			}},
			{"ListTurns of a session", func(p scenePalace) (any, error) {
				return p.ListTurns(ctx, engram.TurnQuery{Session: "s3", After: turns[40].Seq, Limit: 1000})
			}},
			{"ListTurns of ids", func(p scenePalace) (any, error) {
				return p.ListTurns(ctx, engram.TurnQuery{Namespace: "work", IDs: []string{turns[7].ID, "unknown", turns[3].ID, turns[8].ID}})
			}},
			{"OpenScenes", func(p scenePalace) (any, error) { return p.OpenScenes(ctx, slices.Collect(maps.Keys(keys))) }},
			{"GetScenes", func(p scenePalace) (any, error) { return p.GetScenes(ctx, ids) }},
			{"UnitsSince", func(p scenePalace) (any, error) { return p.UnitsSince(ctx, 0, 100_000) }},
			{"Scenes", func(p scenePalace) (any, error) { return p.Scenes(ctx, engram.SceneQuery{Limit: 1000}) }},
			{"Scenes of a namespace", func(p scenePalace) (any, error) { return p.Scenes(ctx, engram.SceneQuery{Namespace: "home", Limit: 7}) }},
			{"Scenes of a session", func(p scenePalace) (any, error) {
				return p.Scenes(ctx, engram.SceneQuery{Namespace: "work", Session: "long", Limit: 1000})
			}},
			{"Scenes of a time", func(p scenePalace) (any, error) { return p.Scenes(ctx, engram.SceneQuery{From: from, To: to}) }},
		}
		for _, text := range []string{"plover quandle", "runbook", "会议", "Quill", "round"} {
			reads = append(reads, struct {
				what string
				read func(scenePalace) (any, error)
			}{"Scenes holding " + text, func(p scenePalace) (any, error) {
				got, err := p.Scenes(ctx, engram.SceneQuery{Namespace: "work", Text: text, From: from, Limit: 1000})
				slices.SortFunc(got, func(a, b engram.Scene) int { return strings.Compare(a.ID, b.ID) }) // FTS5 orders ties its own way
				return got, err
			}})
		}
		for _, c := range reads {
			sameRead(t, when, c.what, scenePalace(pg), scenePalace(lite), c.read)
		}
		for _, text := range []string{"plover quandle", "runbook replica", "会议", "Quill", "round 2", "nothing-here"} {
			for _, q := range []engram.TextQuery{{Text: text, Limit: 8}, {Text: text, Namespace: "home", From: from, To: to, Limit: 50}} {
				want, err := lite.SearchScenes(ctx, q)
				if err != nil {
					t.Fatal(err)
				}
				got, err := pg.SearchScenes(ctx, q)
				if err != nil || !sameSceneHits(got, want) {
					t.Errorf("%s: SearchScenes(%+v) = %v, %v\nwant %v", when, q, got, err, want)
				}
				wu, err := lite.SearchUnits(ctx, q, engram.UnitScene)
				if err != nil {
					t.Fatal(err)
				}
				gu, err := pg.SearchUnits(ctx, q, engram.UnitScene)
				if err != nil || !sameUnitHits(gu, wu) {
					t.Errorf("%s: SearchUnits(%+v, scene) = %v, %v\nwant %v", when, q, gu, err, wu)
				}
			}
		}
	}
	compare("written")

	// A forget of turns scattered over the scenes; the scenes holding
	// them are made again of the turns left, one scene each.
	remake := func(left []engram.Turn, open bool) ([]engram.SceneWrite, error) {
		return []engram.SceneWrite{sceneOf(left, "re-"+left[0].ID, 3, open)}, nil
	}
	var forget []engram.ForgetTurn
	for i, tu := range turns {
		if i%11 == 3 || tu.Session == "s5" {
			forget = append(forget, engram.ForgetTurn{ID: tu.ID, Seq: int64(len(turns) + i + 1)})
		}
	}
	var results []engram.ForgetResult
	for _, p := range palaces {
		res, err := p.ForgetTurns(ctx, forget, time.Now(), remake)
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, res)
	}
	if !reflect.DeepEqual(results[0], results[1]) || results[0].Scenes == 0 || results[0].ScenesRemade == 0 {
		t.Errorf("ForgetTurns = %+v; the SQLite palace's %+v", results[0], results[1])
	}
	compare("after a forget")

	// A redaction of a word the scenes' titles, summaries and drafts hold.
	var red []engram.Turn
	for i, tu := range turns {
		if i%11 != 3 && tu.Session != "s5" && strings.Contains(tu.Content, "plover") {
			tu.Content = strings.ReplaceAll(tu.Content, "plover", "[redacted]")
			red = append(red, tu)
		}
	}
	var reds []engram.RedactResult
	for _, p := range palaces {
		res, err := p.RedactTurns(ctx, red, []string{"plover"}, "[redacted]")
		if err != nil {
			t.Fatal(err)
		}
		reds = append(reds, res)
	}
	if reds[0].Turns != reds[1].Turns || reds[0].Scenes != reds[1].Scenes || reds[0].Units != reds[1].Units || reds[0].Scenes == 0 {
		t.Errorf("RedactTurns = %+v; the SQLite palace's %+v", reds[0], reds[1])
	}
	compare("after a redaction")
}

func sameSceneHits(a, b []engram.SceneHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !reflect.DeepEqual(a[i].Scene, b[i].Scene) || math.Abs(a[i].Score-b[i].Score) > 1e-12*math.Max(1, b[i].Score) {
			return false
		}
	}
	return true
}
