package palace

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/memrule"
	"github.com/engram-dev/engram/internal/neardup"
	"github.com/engram-dev/engram/internal/testutil"
)

// TestNearDuplicateLookup checks the near-duplicate lookup (its keys,
// package neardup) against reading every memory of the group: for
// memories of a small vocabulary, some superseded, in two groups sharing
// the words, the lookup finds the memory of the best overlap of at least
// 4/5 (the newest of equals), or none when none overlaps so much.
func TestNearDuplicateLookup(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	db := MustOpenDB(t)
	words := strings.Fields(`ana moved lisbon works acme loves sea hiking guitar plans trip japan april decided postgres
		billing team friday dinner family sister daughter painting garden`)
	rng := rand.New(rand.NewPCG(5, 6))
	sentence := sentenceOf(words, rng)
	var mems []engram.Memory
	for i := range 400 {
		m := engram.Memory{ID: fmt.Sprintf("m%d", i), Namespace: "default", Type: engram.MemoryFact, Subject: []string{"Ana", "Ben"}[i%2],
			Text: sentence(3 + rng.IntN(7)), Sources: []string{fmt.Sprintf("t%d", i)}, TS: time.Date(2026, 5, 1, 0, 0, i, 0, time.UTC)}
		if i%3 == 0 {
			m.Rationale = sentence(2)
		}
		mems = append(mems, m)
	}
	// Stored one at a time, so that a memory does not merge into one of
	// its own batch before the lookups below see both.
	for i := range mems {
		if _, err := db.PutMemories(ctx, "test", mems[i:i+1], 0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.w.ExecContext(ctx, `UPDATE memories SET superseded_by = n WHERE n % 7 = 0`); err != nil {
		t.Fatal(err)
	}
	found := 0
	for i := range 300 {
		probe := engram.Memory{Namespace: "default", Type: engram.MemoryFact, Subject: "Ana", Text: mems[rng.IntN(len(mems))].Text}
		if i%2 == 1 {
			probe.Text = sentence(3 + rng.IntN(8))
		}
		pw := memrule.ContentWords(probe.Text)
		err := db.Update(ctx, func(tx *sql.Tx) error {
			got, err := db.nearDuplicateIn(ctx, tx, probe, pw)
			if err != nil {
				return err
			}
			want, err := nearDuplicateByReading(ctx, tx, probe, pw)
			if err != nil {
				return err
			}
			switch {
			case (got == nil) != (want == 0):
				t.Errorf("%q: the lookup found %v, reading the group %d", probe.Text, got, want)
			case got != nil && got.n != want:
				t.Errorf("%q: the lookup found %d, reading the group %d", probe.Text, got.n, want)
			case got != nil:
				found++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if found < 50 {
		t.Errorf("only %d of 300 lookups found a near duplicate: the test shows little", found)
	}
}

// nearDuplicateByReading is what nearDuplicate finds, by reading every
// active memory of the group: the row of the best overlap of 4/5 or more,
// the newest of equals; 0 for none.
func nearDuplicateByReading(ctx context.Context, tx *sql.Tx, m engram.Memory, words []string) (int64, error) {
	rows, err := tx.QueryContext(ctx, `SELECT n, text FROM memories
		WHERE namespace = ? AND type = ? AND subject = ? AND superseded_by IS NULL ORDER BY n DESC`, m.Namespace, m.Type, m.Subject)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	var best int64
	bestScore := 0.0
	for rows.Next() {
		var (
			n    int64
			text string
		)
		if err := rows.Scan(&n, &text); err != nil {
			return 0, err
		}
		if s := neardup.Jaccard(words, memrule.ContentWords(text)); s >= nearDupJaccard && s > bestScore {
			best, bestScore = n, s
		}
	}
	return best, rows.Err()
}

// nearKeysDrift is NearKeysDrift, failing t on an error.
func nearKeysDrift(t *testing.T, db *DB) int {
	t.Helper()
	drift, err := db.NearKeysDrift(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return drift
}

// TestNearKeysFollowTheRows checks that a memory's near-duplicate keys
// follow its row: a redaction that changes its words and subject moves
// them (the redacted memory is found by its new words), and a forget that
// deletes the memory deletes them.
func TestNearKeysFollowTheRows(t *testing.T) {
	ctx := context.Background()
	db := MustOpenDB(t)
	a := engram.Turn{ID: "a", Seq: 1, Namespace: "default", Session: "s", Role: engram.RoleUser, Speaker: "Ana",
		Content: "Ana keeps bees behind the Vostrikov mill with Tomas", TS: day(0), ReceivedAt: day(0)}
	b := engram.Turn{ID: "b", Seq: 2, Namespace: "default", Session: "s", Role: engram.RoleUser, Speaker: "Ana",
		Content: "Ana sells honey at the market on Saturdays", TS: day(1), ReceivedAt: day(1)}
	mustPut(t, db, a, b)
	_, err := db.PutMemories(ctx, "l1", []engram.Memory{
		mem("m-a", engram.MemoryFact, "Vostrikov", "keeps bees behind the Vostrikov mill with Tomas", day(0), "a", nil),
		mem("m-b", engram.MemoryFact, "Ana", "Ana sells honey at the market on Saturdays", day(1), "b", nil),
	}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if d := nearKeysDrift(t, db); d != 0 {
		t.Fatalf("after storing: %d rows of keys differ from the memories'", d)
	}
	red, _ := a.RedactSpans([]string{"Vostrikov"}, "[redacted]")
	if _, err := db.RedactTurns(ctx, []engram.Turn{red}, []string{"Vostrikov"}, "[redacted]"); err != nil {
		t.Fatal(err)
	}
	if d := nearKeysDrift(t, db); d != 0 {
		t.Fatalf("after the redaction: %d rows of keys differ from the memories'", d)
	}
	probe := engram.Memory{Namespace: "default", Type: engram.MemoryFact, Subject: "[redacted]", Text: "keeps bees behind the [redacted] mill with Tomas"}
	err = db.Update(ctx, func(tx *sql.Tx) error {
		got, err := db.nearDuplicateIn(ctx, tx, probe, memrule.ContentWords(probe.Text))
		if err == nil && (got == nil || got.id != "m-a") {
			t.Errorf("the redacted memory is not found by its words: %+v", got)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "b", Seq: 2}}, day(3), nil); err != nil {
		t.Fatal(err)
	}
	if d := nearKeysDrift(t, db); d != 0 {
		t.Fatalf("after the forget: %d rows of keys differ from the memories'", d)
	}
	var left int
	if err := db.w.QueryRow(`SELECT count(*) FROM memory_nearkeys`).Scan(&left); err != nil || left == 0 {
		t.Fatalf("%d rows of keys left (%v): the forget deleted the other memory's", left, err)
	}
}

// TestNearKeysMigration checks that migration 0021 gives the memories of
// an older palace their keys, so that a memory stored after the upgrade
// merges into one stored before it.
func TestNearKeysMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "palace.db")
	palaceBefore(t, path, "memory_nearkeys", func(ctx context.Context, tx *sql.Tx) error {
		m := engram.Memory{Type: engram.MemoryFact, Subject: "Ana"}
		for i, text := range []string{"Ana keeps bees behind the old mill", "Ana sells honey at the market"} {
			_, err := tx.ExecContext(ctx, `INSERT INTO memories (id, namespace, type, subject, text, entities, importance, ts, sources, dedup_key, seq)
				VALUES (?, 'default', ?, ?, ?, '[]', 0.5, ?, '["t"]', ?, ?)`, fmt.Sprintf("old-%d", i), m.Type, m.Subject, text, i, memrule.DedupKey(m, memrule.ContentWords(text)), i+1)
			if err != nil {
				return err
			}
		}
		return nil
	})
	db := MustOpenDBAt(t, path, Options{})
	if d := nearKeysDrift(t, db); d != 0 {
		t.Fatalf("after the migration: %d rows of keys differ from the memories'", d)
	}
	res, err := db.PutMemories(ctx, "l1", []engram.Memory{mem("new", engram.MemoryFact, "Ana", "Ana keeps bees behind the old stone mill", day(1), "u", nil)}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if res.Merged != 1 {
		t.Errorf("the new memory was not merged into the old one: %+v", res)
	}
}

// TestPutMemoriesSplit checks that a batch of memories stored in several
// transactions (PutMemories commits early when the turn index waits for
// the writer; splitWrites makes it commit after every memory) stores what
// one transaction stores: the same memories inserted, merged into the same
// ones and superseded alike, for batches whose memories are near
// duplicates of each other, of older ones, and contradict older ones; and
// that a batch stored again (after a crash between its transactions) adds
// nothing.
func TestPutMemoriesSplit(t *testing.T) {
	testutil.LongRun(t)
	ctx := context.Background()
	split, whole := MustOpenDB(t), MustOpenDB(t)
	split.splitWrites = true
	words := strings.Fields(`ana moved lisbon works acme loves sea hiking guitar plans trip japan april decided postgres
		billing team friday dinner family`)
	places := []string{"Lisbon", "Porto", "Berlin", "Tokyo"}
	rng := rand.New(rand.NewPCG(7, 8))
	sentence := sentenceOf(words, rng)
	var texts []string
	var last []engram.Memory
	id := 0
	for batch := range 60 {
		var mems []engram.Memory
		for range 1 + rng.IntN(8) {
			id++
			text := sentence(4 + rng.IntN(5))
			if len(texts) > 0 && rng.IntN(2) == 0 {
				// A near duplicate of an earlier memory, of this batch or older.
				old := strings.Fields(texts[rng.IntN(len(texts))])
				old[rng.IntN(len(old))] = words[rng.IntN(len(words))]
				text = strings.Join(old, " ")
			}
			texts = append(texts, text)
			m := engram.Memory{ID: fmt.Sprintf("m%d", id), Namespace: "default", Type: engram.MemoryFact,
				Subject: []string{"Ana", "Ben"}[rng.IntN(2)], Text: text, Sources: []string{fmt.Sprintf("t%d", id)},
				TS: time.Date(2026, 5, 1, 0, 0, id, 0, time.UTC)}
			if rng.IntN(4) == 0 {
				p := places[rng.IntN(len(places))]
				m.Text = m.Subject + " lives in " + p
				m.Relation = &engram.Relation{Subject: m.Subject, Predicate: "lives_in", Object: p}
			}
			mems = append(mems, m)
		}
		a, err := split.PutMemories(ctx, "test", mems, int64(batch))
		if err != nil {
			t.Fatal(err)
		}
		b, err := whole.PutMemories(ctx, "test", mems, int64(batch))
		if err != nil {
			t.Fatal(err)
		}
		if a != b {
			t.Fatalf("batch %d: split %+v, whole %+v", batch, a, b)
		}
		last = mems
	}
	got, want := storedMemories(t, split), storedMemories(t, whole)
	if got != want {
		t.Errorf("the palaces differ:\nsplit:\n%s\nwhole:\n%s", got, want)
	}
	if !strings.Contains(want, "merged") || !strings.Contains(want, "superseded") {
		t.Errorf("no memory was merged or superseded; the test shows little:\n%s", want)
	}
	if _, err := split.PutMemories(ctx, "test", last, 59); err != nil {
		t.Fatal(err)
	}
	if again := storedMemories(t, split); again != got {
		t.Errorf("the last batch stored again changed the palace:\n%s\nwas:\n%s", again, got)
	}
}

// storedMemories lists db's memories and merges, a line each.
func storedMemories(t *testing.T, db *DB) string {
	t.Helper()
	var b strings.Builder
	rows, err := db.r.Query(`SELECT id, text, sources, importance, coalesce(superseded_by, '') FROM memories ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, text, srcs, sup string
		var imp float64
		if err := rows.Scan(&id, &text, &srcs, &imp, &sup); err != nil {
			t.Fatal(err)
		}
		if sup != "" {
			sup = " superseded by " + sup
		}
		fmt.Fprintf(&b, "%s %q %s %.2f%s\n", id, text, srcs, imp, sup)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = db.r.Query(`SELECT id, memory FROM memory_merges ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, into string
		if err := rows.Scan(&id, &into); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s merged into %s\n", id, into)
	}
	return b.String()
}

// sentenceOf returns a maker of sentences of n words drawn from words.
func sentenceOf(words []string, rng *rand.Rand) func(n int) string {
	return func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = words[rng.IntN(len(words))]
		}
		return strings.Join(w, " ")
	}
}

// TestNearKeysDrift: NearKeysDrift counts a key row whose memory is gone
// and a memory's key that is missing, each one row, and nothing once they
// are put right.
func TestNearKeysDrift(t *testing.T) {
	db := MustOpenDB(t)
	mustPut(t, db, engram.Turn{ID: "a", Seq: 1, Namespace: "default", Session: "s", Role: engram.RoleUser, Speaker: "Ana",
		Content: "Ana repairs old clocks in a shed by the canal", TS: day(0), ReceivedAt: day(0)})
	if _, err := db.PutMemories(t.Context(), "l1", []engram.Memory{
		mem("m-a", engram.MemoryFact, "Ana", "Ana repairs old clocks in a shed by the canal", day(0), "a", nil),
	}, 1); err != nil {
		t.Fatal(err)
	}
	if d := nearKeysDrift(t, db); d != 0 {
		t.Fatalf("stored: drift %d", d)
	}
	var grp string
	var tok, size, n int64
	if err := db.w.QueryRow(`SELECT grp, tok, size, n FROM memory_nearkeys LIMIT 1`).Scan(&grp, &tok, &size, &n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.w.Exec(`DELETE FROM memory_nearkeys WHERE grp = ? AND tok = ? AND n = ?`, grp, tok, n); err != nil {
		t.Fatal(err)
	}
	if d := nearKeysDrift(t, db); d != 1 {
		t.Fatalf("a key deleted: drift %d, want 1", d)
	}
	if _, err := db.w.Exec(`INSERT INTO memory_nearkeys (grp, tok, size, n) VALUES (?, ?, ?, ?), (?, ?, ?, ?)`,
		grp, tok, size, n, grp, tok, size, n+1000); err != nil {
		t.Fatal(err)
	}
	if d := nearKeysDrift(t, db); d != 1 {
		t.Fatalf("the key back and one of no memory: drift %d, want 1", d)
	}
}
