package palace

import (
	"context"
	"database/sql"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// mustSearchDB opens a palace holding testdata/search.jsonl.
func mustSearchDB(t *testing.T) *DB {
	t.Helper()
	db := MustOpenDB(t)
	mustPut(t, db, loadTurns(t, "search.jsonl")...)
	return db
}

func ids(hits []engram.TurnHit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.Turn.ID
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkHits verifies what every result list must satisfy: no duplicates,
// finite positive scores in descending order, at most limit hits.
func checkHits(t *testing.T, q engram.TextQuery, hits []engram.TurnHit) {
	t.Helper()
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	if len(hits) > limit {
		t.Errorf("%q: %d hits over the limit %d", q.Text, len(hits), limit)
	}
	seen := make(map[int64]bool)
	for i, h := range hits {
		if seen[h.Turn.Seq] {
			t.Errorf("%q: turn %s twice", q.Text, h.Turn.ID)
		}
		seen[h.Turn.Seq] = true
		if math.IsNaN(h.Score) || math.IsInf(h.Score, 0) || h.Score <= 0 {
			t.Errorf("%q: hit %s has score %v", q.Text, h.Turn.ID, h.Score)
		}
		if i > 0 && h.Score > hits[i-1].Score {
			t.Errorf("%q: scores not descending at %d: %v > %v", q.Text, i, h.Score, hits[i-1].Score)
		}
		if q.Namespace != "" && h.Turn.Namespace != q.Namespace {
			t.Errorf("%q: hit %s from namespace %q", q.Text, h.Turn.ID, h.Turn.Namespace)
		}
	}
}

func TestSearchTurns(t *testing.T) {
	db := mustSearchDB(t)
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		ns    string
		query string
		first string   // the expected best hit ("" for none expected)
		want  []string // also among the hits
		not   []string // never among the hits
	}{
		{"question", "work", "what did we decide about the database port?", "port", nil, []string{"home-port"}},
		{"stemming", "", "decided", "", []string{"port", "deciding"}, []string{"decision"}},
		{"stemming plural", "", "outages", "port", nil, nil},
		{"case", "", "POSTGRES", "deciding", nil, nil},
		{"zh word", "", "端口", "zh-port", nil, nil},
		{"zh verb", "", "决定", "zh-port", nil, nil},
		{"zh digits", "", "30001", "zh-port", nil, nil},
		{"zh question", "", "我们使用哪个端口？", "zh-port", nil, nil},
		{"zh part of word", "", "数据", "zh-migration", nil, nil},
		{"zh whole word", "", "数据库", "zh-migration", nil, nil},
		{"ja word", "", "会議", "ja-meeting", []string{"ja-room"}, nil},
		{"ja short", "", "日本", "ja-meeting", nil, nil},
		{"ja long", "", "日本語", "ja-meeting", nil, nil},
		{"ja katakana", "", "データベース", "ja-katakana", nil, nil},
		{"ja one char", "", "室", "ja-room", nil, nil},
		{"ja speaker", "", "佐藤", "ja-room", nil, nil},
		{"zh part of name", "", "王小", "zh-port", nil, nil},
		{"ja sentence", "", "東京の会議はどこですか", "ja-meeting", nil, nil},
		{"UI", "", "UI", "short", nil, nil},
		{"DB", "", "db", "short", nil, []string{"fullwidth"}}, // DB2 is another token
		{"PR", "", "PR", "short", nil, nil},
		{"trigram camel case", "", "Kafka", "kafka", nil, nil},
		{"trigram identifier", "", "7Rz9k", "token", nil, nil},
		{"trigram port", "", "9092", "kafka", nil, nil},
		{"speaker", "", "what did Carol say?", "short", nil, nil},
		{"speaker zh", "", "王小明", "zh-port", nil, nil},
		{"speaker and text", "", "Alice passport", "milk", []string{"port", "home-port"}, nil},
		{"NFKC query", "", "ＫＡＦＫＡ", "kafka", nil, nil},
		{"NFKC content", "", "NFKC db2 file", "fullwidth", nil, nil},
		{"diacritics", "", "creme brulee cafe", "accents", nil, nil},
		{"diacritics speaker", "", "jose", "accents", nil, nil},
		{"namespace personal", "personal", "database port", "home-port", nil, []string{"port"}},
		{"namespace work", "work", "database port", "port", nil, []string{"home-port"}},
		{"all namespaces", "", "database port", "", []string{"port", "home-port"}, nil},
		{"unknown namespace", "nope", "database port", "", nil, []string{"port", "home-port"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q := engram.TextQuery{Namespace: tt.ns, Text: tt.query, Limit: 10}
			hits, err := db.SearchTurns(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			checkHits(t, q, hits)
			got := ids(hits)
			if tt.first != "" && (len(got) == 0 || got[0] != tt.first) {
				t.Errorf("%q: hits %v, want %s first", tt.query, got, tt.first)
			}
			for _, id := range tt.want {
				if !contains(got, id) {
					t.Errorf("%q: hits %v, want %s among them", tt.query, got, id)
				}
			}
			for _, id := range tt.not {
				if contains(got, id) {
					t.Errorf("%q: hits %v, want no %s", tt.query, got, id)
				}
			}
		})
	}
}

func TestSearchTurns_NoTerms(t *testing.T) {
	db := mustSearchDB(t)
	for _, q := range []string{"", "   ", "what is the", "?!...", "的 了 是", "は が を", "AND OR NOT"} {
		hits, err := db.SearchTurns(context.Background(), engram.TextQuery{Text: q})
		if err != nil || len(hits) != 0 {
			t.Errorf("SearchTurns(%q) = %v, %v; want nothing", q, ids(hits), err)
		}
	}
}

// TestSearchTurns_Syntax feeds FTS5 syntax and SQL through the query: none
// of it may be an error, and the words in it are still searched for.
func TestSearchTurns_Syntax(t *testing.T) {
	db := mustSearchDB(t)
	for _, q := range []string{`"`, `""`, `*`, `()`, `:`, `-`, `^`, `NEAR()`, `NEAR(,)`, `""""`} {
		hits, err := db.SearchTurns(context.Background(), engram.TextQuery{Text: q})
		if err != nil || len(hits) != 0 {
			t.Errorf("SearchTurns(%q) = %v, %v; want nothing", q, ids(hits), err)
		}
	}
	for _, q := range []string{
		`"port`, `port"`, `"port" "`, `(port`, `port)`, `((port))`,
		`port AND`, `AND port`, `OR port`, `port OR`, `NOT port`, `port NOT database`,
		`NEAR(port database)`, `NEAR(port database, 2)`, `port*`, `*port`, `^port`, `port^`,
		`text:port`, `speaker:Alice port`, `{text speaker}: port`, `-port`, `port-`, `- port`,
		`port + database`, `a" OR "b port`, `'; DROP TABLE turns; -- port`, `port\`, `port%`, `port_`,
		`port:5432`, "port\x00", "\\\"port\\\"", `[port]`, `port;`, `port,database`, `@port #db $x`,
	} {
		hits, err := db.SearchTurns(context.Background(), engram.TextQuery{Text: q})
		if err != nil {
			t.Errorf("SearchTurns(%q): %v", q, err)
			continue
		}
		if !contains(ids(hits), "port") {
			t.Errorf("SearchTurns(%q) = %v, want the port turn", q, ids(hits))
		}
	}
}

// TestSearchTurns_Fallbacks checks the order of the stages: keyword hits,
// then substring (trigram) hits, then short CJK (LIKE) hits, without
// duplicates and within the limit.
func TestSearchTurns_Fallbacks(t *testing.T) {
	db := mustSearchDB(t)
	ctx := context.Background()
	for _, tt := range []struct {
		q    engram.TextQuery
		want []string
	}{
		// "kafka" is in no token, only inside KafkaConsumer; "outage" is a token.
		{engram.TextQuery{Text: "outage kafka", Limit: 10}, []string{"port", "kafka"}},
		// 会議 is a token of ja-meeting but inside 会議室 in ja-room: the LIKE
		// stage finds the second after the first.
		{engram.TextQuery{Text: "会議", Limit: 10}, []string{"ja-meeting", "ja-room"}},
		// A full first stage skips the fallbacks.
		{engram.TextQuery{Text: "outage kafka", Limit: 1}, []string{"port"}},
	} {
		hits, err := db.SearchTurns(ctx, tt.q)
		if err != nil {
			t.Fatal(err)
		}
		checkHits(t, tt.q, hits)
		if got := ids(hits); !slices.Equal(got, tt.want) {
			t.Fatalf("%q, limit %d: hits %v, want %v", tt.q.Text, tt.q.Limit, got, tt.want)
		}
	}
}

func TestSearchTurns_Limit(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	for i := int64(1); i <= 30; i++ {
		mustPut(t, db, testTurn(i, "the same words in every turn "+strings.Repeat("again ", int(i))))
	}
	for _, tt := range []struct{ limit, want int }{{0, DefaultSearchLimit}, {-1, DefaultSearchLimit}, {3, 3}, {100, 30}} {
		q := engram.TextQuery{Text: "same words", Limit: tt.limit}
		hits, err := db.SearchTurns(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		checkHits(t, q, hits)
		if len(hits) != tt.want {
			t.Errorf("Limit %d: %d hits, want %d", tt.limit, len(hits), tt.want)
		}
	}
}

// FuzzSearchTurns checks that no query text makes SearchTurns fail and that
// the results are well formed.
func FuzzSearchTurns(f *testing.F) {
	for _, s := range []string{"port", `"`, `NEAR(a b)`, "会議", "a*", "x:y", "-", "日本 UI", "\xff\xfe", "((", "'"} {
		f.Add(s)
	}
	db := MustOpenDB(f)
	mustPut(f, db, loadTurns(f, "search.jsonl")...)
	f.Fuzz(func(t *testing.T, text string) {
		q := engram.TextQuery{Text: text, Limit: 5}
		hits, err := db.SearchTurns(context.Background(), q)
		if err != nil {
			t.Fatalf("SearchTurns(%q): %v", text, err)
		}
		checkHits(t, q, hits)
	})
}

// TestSearchTurns_TextOutranksSpeaker checks the BM25 column weights: a name
// in what was said counts more than the same name as the speaker.
func TestSearchTurns_TextOutranksSpeaker(t *testing.T) {
	db := MustOpenDB(t)
	bySpeaker := testTurn(1, "we should refactor the scheduler soon")
	bySpeaker.Speaker = "Erin"
	aboutSpeaker := testTurn(2, "Erin wants to refactor the scheduler soon")
	aboutSpeaker.Speaker = "Frank"
	mustPut(t, db, bySpeaker, aboutSpeaker)
	hits, err := db.SearchTurns(context.Background(), engram.TextQuery{Text: "Erin"})
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); len(got) != 2 || got[0] != aboutSpeaker.ID {
		t.Fatalf("hits %v, want %s (named in the text) first", got, aboutSpeaker.ID)
	}
}

// TestSearchTurns_SubstringNoPositions: the trigram index keeps no
// positions, so a turn holding every trigram of a term apart (zzabcx ybcdy
// for abcd) is found by the index and left out by the check of its text;
// the term inside a longer token is found whatever its case or width, and
// one lookup reads the turns newest first up to the limit.
func TestSearchTurns_SubstringNoPositions(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	mustPut(t, db,
		testTurn(1, "zzabcx and ybcdy apart"),
		testTurn(2, "the log said ZZABCDZZ twice"),
		testTurn(3, "full width ｘａｂｃｄｙ too"),
		testTurn(4, "zzabcx ybcdy again, apart"),
	)
	for i := int64(5); i <= 30; i++ {
		mustPut(t, db, testTurn(i, "qqabcdqq number "+itoa(i)))
	}
	q := engram.TextQuery{Text: "abcd", Limit: 40}
	hits, err := db.SearchTurns(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	checkHits(t, q, hits)
	got := ids(hits)
	for _, apart := range []string{"t1", "t4"} {
		if slices.Contains(got, apart) {
			t.Errorf("%s holds the trigrams of abcd apart, not abcd: found in %v", apart, got)
		}
	}
	for _, in := range []string{"t2", "t3", "t5", "t30"} {
		if !slices.Contains(got, in) {
			t.Errorf("%s holds abcd: not found in %v", in, got)
		}
	}
	q.Limit = 3
	if hits, err = db.SearchTurns(ctx, q); err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); !slices.Equal(got, []string{"t30", "t29", "t28"}) {
		t.Errorf("limit 3: %v, want the newest three", got)
	}
}

// TestMigrateTrigramNoPositions: a palace written before migration 0015,
// its trigram index with positions, opens with the index rebuilt without
// them from the turns (in NFKC), one row a turn, and substring searches
// answering as before.
func TestMigrateTrigramNoPositions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	contents := []string{"the KafkaConsumer lagged", "ＫａｆｋａＰｒｏｄｕｃｅｒ in full width", "no match here", "port 30001x open"}
	palaceBefore(t, path, "trigram_no_positions", func(ctx context.Context, tx *sql.Tx) error {
		return insertOldTurns(ctx, tx, contents...)
	})

	db := MustOpenDBAt(t, path, Options{})
	var rows int
	var schema string
	if err := db.w.QueryRowContext(ctx, `SELECT count(*) FROM turns_trigram`).Scan(&rows); err != nil || rows != len(contents) {
		t.Fatalf("%d trigram rows (%v), want %d", rows, err, len(contents))
	}
	if err := db.w.QueryRowContext(ctx, `SELECT sql FROM sqlite_master WHERE name = 'turns_trigram'`).Scan(&schema); err != nil || !strings.Contains(schema, "detail = none") {
		t.Fatalf("turns_trigram is %q (%v)", schema, err)
	}
	for _, c := range []struct {
		q    string
		want []string
	}{{"kafka", []string{"t2", "t1"}}, {"0001x", []string{"t4"}}, {"consumer", []string{"t1"}}} {
		hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: c.q, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, want %v", c.q, got, c.want)
		}
	}
}

// TestSearchTurns_SubstringInARange: with a time range, the substring and
// CJK stages find the turns of the range, its first and its last included,
// and none outside it, whatever their seq (a turn imported late holds an
// early time); a range no turn is in finds nothing.
func TestSearchTurns_SubstringInARange(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	at := func(seq int64, minute int, content string) engram.Turn {
		tt := testTurn(seq, content)
		tt.TS = time.Date(2026, 5, 1, 12, minute, 0, 0, time.UTC)
		return tt
	}
	mustPut(t, db,
		at(1, 1, "qqabcdqq before"), at(2, 10, "qqabcdqq first of the range 会議室"),
		at(3, 12, "qqabcdqq inside 会議室"), at(4, 20, "qqabcdqq last of the range"),
		at(5, 30, "qqabcdqq after 会議室"), at(6, 11, "qqabcdqq imported late, inside"),
	)
	from, to := time.Date(2026, 5, 1, 12, 10, 0, 0, time.UTC), time.Date(2026, 5, 1, 12, 21, 0, 0, time.UTC)
	for _, c := range []struct {
		text string
		want []string
	}{
		{"abcd", []string{"t6", "t4", "t3", "t2"}},
		{"会議", []string{"t3", "t2"}},
	} {
		q := engram.TextQuery{Text: c.text, Limit: 10, From: from, To: to}
		hits, err := db.SearchTurns(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); !slices.Equal(got, c.want) {
			t.Errorf("%q in the range: %v, want %v", c.text, got, c.want)
		}
	}
	q := engram.TextQuery{Text: "abcd", Limit: 10, From: to, To: to.Add(time.Minute)}
	if hits, err := db.SearchTurns(ctx, q); err != nil || len(hits) != 0 {
		t.Errorf("an empty range: %v %v", ids(hits), err)
	}
}
