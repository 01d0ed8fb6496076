package pgpalace

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/palace"
)

// searchTurns are the turns the search tests store in both palaces: the
// SQLite palace's search fixtures (English, Chinese, Japanese, identifiers)
// and made-up chat, some of it in a second namespace and without a time.
func searchTurns(t *testing.T) []engram.Turn {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "palace", "testdata", "search.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var turns []engram.Turn
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var tu engram.Turn
		if err := json.Unmarshal(sc.Bytes(), &tu); err != nil {
			t.Fatal(err)
		}
		turns = append(turns, tu)
	}
	rng := rand.New(rand.NewPCG(7, 41))
	words := strings.Fields(`plover quandle tessel brimmock vantor ziggle morrow fennick dastle hobber
		quill orvane sprocket lumen tarrow keswick pelfry gantle oxbow marl 会议 东京 计划 旅行 猫`)
	base := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	for i := range 300 {
		seq := int64(len(turns) + 1)
		n := 3 + rng.IntN(9)
		var b strings.Builder
		for j := range n {
			if j > 0 {
				b.WriteByte(' ')
			}
			w := words[rng.IntN(len(words))]
			if rng.IntN(9) == 0 && w[0] < 0x80 {
				w = strings.ToUpper(w[:1]) + w[1:] + "Service" // a word inside a longer token
			}
			b.WriteString(w)
		}
		tu := engram.Turn{ID: fmt.Sprintf("g%d", i), Seq: seq, Namespace: []string{"work", "home"}[i%2],
			Session: fmt.Sprintf("s%d", i%7), Role: engram.RoleUser, Speaker: []string{"Ana", "Ben", "Quill"}[i%3],
			Content: b.String(), TS: base.Add(time.Duration(i) * time.Hour), ReceivedAt: base.Add(time.Duration(i) * time.Hour)}
		if i%37 == 0 {
			tu.TS = time.Time{}
		}
		turns = append(turns, tu)
	}
	return turns
}

// TestSearchTurns_AsSQLite checks that a search finds the same turns with
// the same scores, in the same order, in this palace and in package
// palace's SQLite file holding the same turns: the keyword ranking, the
// substring and CJK stages, the namespace and time filters and the
// limits.
func TestSearchTurns_AsSQLite(t *testing.T) {
	ctx := t.Context()
	turns := searchTurns(t)
	pg, lite := bothPalaces(t, turns, 50)
	april := time.Date(2026, 4, 1, 8, 0, 0, 0, time.UTC)
	var queries []engram.TextQuery
	for _, text := range []string{
		"plover", "quandle tessel", "Brimmock vantor ziggle", "morrow fennick dastle hobber quill",
		"kafka", "consumer", "service", "vantorservice", "lumenser", "quill", "Quill", "ana",
		"会议", "东京 会议", "会", "计划旅行", "猫", "端口", "決定", "会議", "日本語",
		"port 5432", "decision", "dark mode", "PR", "token", "the", "nothing matches this",
	} {
		for _, q := range []engram.TextQuery{
			{Text: text, Limit: 10},
			{Text: text, Limit: 3},
			{Text: text, Limit: 50, Namespace: "home"},
			{Text: text, Limit: 20, From: april.Add(40 * time.Hour), To: april.Add(200 * time.Hour)},
			{Text: text, Limit: 20, Namespace: "work", From: april.Add(100 * time.Hour)},
		} {
			queries = append(queries, q)
		}
	}
	compare := func(when string) {
		t.Helper()
		for _, q := range queries {
			want, err := lite.SearchTurns(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got, err := pg.SearchTurns(ctx, q)
			if err != nil {
				t.Fatalf("SearchTurns(%+v): %v", q, err)
			}
			if !sameHits(got, want) {
				t.Errorf("%s: SearchTurns(%q, ns %q, limit %d, %v..%v):\n got %s\nwant %s", when, q.Text, q.Namespace, q.Limit,
					q.From.Format(time.DateTime), q.To.Format(time.DateTime), hitList(got), hitList(want))
			}
		}
	}
	compare("stored")
	// A forget changes the statistics every score reads.
	var forget []engram.ForgetTurn
	for i := 3; i < len(turns); i += 9 {
		forget = append(forget, engram.ForgetTurn{ID: turns[i].ID, Seq: int64(len(turns) + i)})
	}
	for _, p := range []interface {
		ForgetTurns(context.Context, []engram.ForgetTurn, time.Time, engram.SceneRemaker) (engram.ForgetResult, error)
	}{pg, lite} {
		if _, err := p.ForgetTurns(ctx, forget, april, nil); err != nil {
			t.Fatal(err)
		}
	}
	compare("after a forget")
}

// bothPalaces stores turns in a new PostgreSQL palace and a new SQLite
// one, in batches of batch as the indexer writes them, and loads the
// SQLite palace's keyword indexes; both close when the test ends.
func bothPalaces(t *testing.T, turns []engram.Turn, batch int) (*DB, *palace.DB) {
	t.Helper()
	ctx := t.Context()
	// A database whose lower() lowers beyond ASCII, as a team's server's
	// does: SQLite's lowers ASCII only, which pgpalace must follow.
	pg := openAt(t, pgtest.NewUTF8Database(t))
	lite, err := palace.Open(filepath.Join(t.TempDir(), "palace.db"), palace.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	for i := 0; i < len(turns); i += batch {
		part := turns[i:min(i+batch, len(turns))]
		if err := pg.PutTurns(ctx, part); err != nil {
			t.Fatal(err)
		}
		if err := lite.PutTurns(ctx, part); err != nil {
			t.Fatal(err)
		}
	}
	if err := lite.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	return pg, lite
}

// sameHits compares two searches' hits: the same turns, in the same order,
// with scores equal to the last bits (both rank with internal/kwindex).
func sameHits(a, b []engram.TurnHit) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Turn.Seq != b[i].Turn.Seq || math.Abs(a[i].Score-b[i].Score) > 1e-12*math.Max(1, math.Abs(b[i].Score)) {
			return false
		}
	}
	return true
}

func hitList(hits []engram.TurnHit) string {
	parts := make([]string, len(hits))
	for i, h := range hits {
		parts[i] = fmt.Sprintf("%d:%.6g", h.Turn.Seq, h.Score)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestSearchTurns_FollowsOtherServer checks that a server's keyword index,
// loaded already, finds the turns another server wrote since, at its next
// search: it follows the rows' change numbers.
func TestSearchTurns_FollowsOtherServer(t *testing.T) {
	ctx := t.Context()
	url := pgtest.NewDatabase(t)
	a, b := openAt(t, url), openAt(t, url)
	put := func(seq int64, content string) {
		t.Helper()
		tu := engram.Turn{ID: fmt.Sprintf("t%d", seq), Seq: seq, Namespace: "ns", Session: "s", Role: engram.RoleUser,
			Content: content, TS: time.Date(2026, 5, 1, 9, int(seq), 0, 0, time.UTC)}
		if err := a.PutTurns(ctx, []engram.Turn{tu}); err != nil {
			t.Fatal(err)
		}
	}
	put(1, "the first note about the gazebo")
	if err := b.LoadKeywordIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if st := b.KeywordIndexStates()["turns"]; st != "ready" {
		t.Fatalf("the keyword index is %q after LoadKeywordIndex; want ready", st)
	}
	for seq := int64(2); seq <= 4; seq++ {
		put(seq, fmt.Sprintf("note %d: the gazebo roof again", seq))
		hits, err := b.SearchTurns(ctx, engram.TextQuery{Text: "gazebo roof", Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(hits) != int(seq) || hits[0].Turn.Seq == 1 {
			t.Fatalf("server B finds %s after A wrote turn %d; want every turn, the roof notes first", hitList(hits), seq)
		}
	}
	// A forget on A: B's index builds itself again before it answers.
	if _, err := a.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "t3", Seq: 5}}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	hits, err := b.SearchTurns(ctx, engram.TextQuery{Text: "gazebo roof", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		if h.Turn.ID == "t3" {
			t.Fatalf("server B still finds the turn A forgot: %s", hitList(hits))
		}
	}
	if len(hits) != 3 {
		t.Fatalf("server B finds %s after A's forget; want the other three", hitList(hits))
	}
}

// sameRead runs read on this palace (pg) and on package palace's (lite)
// and reports where their answers differ; an error of lite's fails the
// test.
func sameRead[P any](t *testing.T, when, what string, pg, lite P, read func(P) (any, error)) {
	t.Helper()
	want, err := read(lite)
	if err != nil {
		t.Fatal(err)
	}
	got, err := read(pg)
	if err != nil {
		t.Fatalf("%s: %s: %v", when, what, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s: %s differ:\n got %+v\nwant %+v", when, what, got, want)
	}
}
