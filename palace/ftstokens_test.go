package palace

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/engram-dev/engram/embedder"
	"github.com/engram-dev/engram/internal/kwindex"
)

// TestFTSTokens checks kwindex.Tokens against SQLite's own tokenizer, as
// turns_fts is declared, on every word of the builtin embedder's
// vocabulary (English, inflected), on the forms the Porter rules turn on,
// and on text in other scripts.
func TestFTSTokens(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE VIRTUAL TABLE f USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2')`,
		`CREATE VIRTUAL TABLE v USING fts5vocab(f, instance)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	texts := []string{
		"caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky",
		"relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti",
		"triplicate formative formalize electriciti electrical hopeful goodness revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize",
		"probate rate cease controll roll generalizations oscillators logical biology archaeology",
		"Crème brûlée, naïve café at the Zürich Straße; ÉCOLE Ærø øre İstanbul ıi",
		"Привет мир, Москва; Ελληνικά γράμματα; עברית; العربية",
		"数据库 迁移 東京 会議 カタカナ ひらがな 한국어",
		"e\u0301te\u0301 co\u0308operate", // combining marks inside words
		"don't we'll KafkaConsumer port:30001x v2.3.1 a_b x-y 100% #tag @user",
		"🎉 party ① ½ ⅷ \ue000private",
		strings.Repeat("a", 70) + "ing " + strings.Repeat("b", 63) + "ed",
	}
	var words []string
	for i := 0; ; i++ {
		w, ok := embedder.Word(i)
		if !ok {
			break
		}
		words = append(words, w)
	}
	if len(words) < 1000 {
		t.Fatalf("the embedder's vocabulary has %d words", len(words))
	}
	for i := 0; i < len(words); i += 200 {
		texts = append(texts, strings.Join(words[i:min(i+200, len(words))], " "))
	}
	for i, s := range texts {
		if _, err := db.ExecContext(ctx, `INSERT INTO f (rowid, text) VALUES (?, ?)`, i+1, s); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT doc, term FROM v ORDER BY doc, offset`)
	if err != nil {
		t.Fatal(err)
	}
	got := make([][]string, len(texts))
	for rows.Next() {
		var doc int
		var term string
		if err := rows.Scan(&doc, &term); err != nil {
			t.Fatal(err)
		}
		got[doc-1] = append(got[doc-1], term)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, s := range texts {
		var mine []string
		kwindex.Tokens(s, func(tok string) { mine = append(mine, tok) })
		if slices.Equal(mine, got[i]) {
			continue
		}
		for j := range max(len(mine), len(got[i])) {
			var a, b string
			if j < len(mine) {
				a = mine[j]
			}
			if j < len(got[i]) {
				b = got[i][j]
			}
			if a != b {
				bad++
				if bad <= 40 {
					t.Errorf("text %d token %d: kwindex.Tokens %q, FTS5 %q", i, j, a, b)
				}
				if len(mine) != len(got[i]) {
					t.Errorf("text %d: %d tokens, FTS5 %d", i, len(mine), len(got[i]))
					break
				}
			}
		}
	}
	t.Logf("%d texts, %d words of the vocabulary", len(texts), len(words))
}
