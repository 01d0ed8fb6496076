package palace

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	engram "github.com/engram-dev/engram"
)

// sessionTurn is testTurn in session s, by speaker.
func sessionTurn(seq int64, s, speaker, content string) engram.Turn {
	t := testTurn(seq, content)
	t.Session, t.Speaker = s, speaker
	return t
}

func unitHitIDs(hits []engram.UnitHit) []string {
	var out []string
	for _, h := range hits {
		out = append(out, h.Unit.ID)
	}
	return out
}

// TestSessionUnits: a session's turns make one document, found by words of
// any of its turns and by its speakers, extended by each new turn in the
// transaction that stores it.
func TestSessionUnits(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	mustPut(t, db,
		sessionTurn(1, "trip", "Ana", "We should plan the trip to Lisbon"),
		sessionTurn(2, "infra", "Bo", "The database migration is done"),
		sessionTurn(3, "trip", "Cy", "I booked the flights yesterday"),
	)
	hits, err := db.SearchUnits(ctx, engram.TextQuery{Text: "flights to Lisbon", Limit: 10}, engram.UnitSession)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Unit.Session != "trip" || hits[0].Unit.Turns != 2 || hits[0].Score <= 0 ||
		hits[0].Unit.Kind != engram.UnitSession {
		t.Fatalf("search for words of two turns of one session: %+v", hits)
	}
	trip := hits[0].Unit
	if !trip.Start.Equal(testTurn(1, "").TS) || !trip.End.Equal(testTurn(3, "").TS) {
		t.Errorf("trip spans %v to %v, want the times of turns 1 and 3", trip.Start, trip.End)
	}
	// Speakers are indexed with what they said.
	if hits, _ := db.SearchUnits(ctx, engram.TextQuery{Text: "Bo", Limit: 10}, ""); len(hits) != 1 || hits[0].Unit.Session != "infra" {
		t.Errorf("search by speaker: %+v", hits)
	}
	of, err := db.TurnUnits(ctx, []int64{1, 2, 3, 99})
	if err != nil {
		t.Fatal(err)
	}
	if len(of) != 3 || !slices.Equal(of[1], []string{trip.ID}) || !slices.Equal(of[3], []string{trip.ID}) || of[2][0] == trip.ID {
		t.Errorf("TurnUnits: %v", of)
	}
	members, err := db.UnitTurnIDs(ctx, []string{trip.ID, "ses-unknown"})
	if err != nil {
		t.Fatal(err)
	}
	if len(members) != 1 || !slices.Equal(members[trip.ID], []string{"t1", "t3"}) {
		t.Errorf("UnitTurnIDs: %v", members)
	}

	// A new turn extends the document at once and gives it a new change
	// number; a replayed turn changes nothing.
	before, err := db.UnitsSince(ctx, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, sessionTurn(4, "trip", "Ana", "Hotel near Alfama please"))
	mustPut(t, db, sessionTurn(3, "trip", "Cy", "I booked the flights yesterday"))
	if hits, _ := db.SearchUnits(ctx, engram.TextQuery{Text: "Alfama", Limit: 10}, ""); len(hits) != 1 || hits[0].Unit.ID != trip.ID || hits[0].Unit.Turns != 3 {
		t.Fatalf("the session grew: %+v", hits)
	}
	since, err := db.UnitsSince(ctx, maxUnitSeq(before), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(since) != 1 || since[0].ID != trip.ID {
		t.Fatalf("units changed since the first batch: %+v", since)
	}
	want := "Ana: We should plan the trip to Lisbon\nCy: I booked the flights yesterday\nAna: Hotel near Alfama please\n"
	if since[0].Text != want {
		t.Errorf("unit text %q, want %q", since[0].Text, want)
	}
}

func maxUnitSeq(us []engram.UnitDoc) int64 {
	var m int64
	for _, u := range us {
		m = max(m, u.Seq)
	}
	return m
}

// TestSessionUnits_Bounded: a long session is indexed as consecutive parts
// of at most UnitMaxTurns turns or UnitMaxBytes of text, and a long turn
// counts only its first UnitTurnBytes.
func TestSessionUnits_Bounded(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	var turns []engram.Turn
	for i := int64(1); i <= UnitMaxTurns+6; i++ {
		turns = append(turns, sessionTurn(i, "long", "Ana", fmt.Sprintf("note number %d", i)))
	}
	// Three batches, so the open part is found again across transactions.
	mustPut(t, db, turns[:10]...)
	mustPut(t, db, turns[10:UnitMaxTurns+2]...)
	mustPut(t, db, turns[UnitMaxTurns+2:]...)
	units, err := db.UnitsSince(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(units) != 2 || units[0].Turns+units[1].Turns != UnitMaxTurns+6 || max(units[0].Turns, units[1].Turns) != UnitMaxTurns {
		t.Fatalf("%d turns in parts: %+v", UnitMaxTurns+6, units)
	}

	// Bytes: turns of 2 KB (the most a turn gives a unit) fill a part at
	// UnitMaxBytes.
	big := strings.Repeat("word ", 3000) // 15 KB, clipped to UnitTurnBytes
	var bigs []engram.Turn
	for i := int64(0); i < 20; i++ {
		bigs = append(bigs, sessionTurn(1000+i, "big", "Bo", big))
	}
	mustPut(t, db, bigs...)
	var parts, most int
	err = db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*), max(turns) FROM units WHERE session = 'big'`).Scan(&parts, &most)
	})
	if err != nil {
		t.Fatal(err)
	}
	perPart := UnitMaxBytes / unitTurnSize("Bo", big)
	if most != perPart || parts != (20+perPart-1)/perPart {
		t.Fatalf("20 turns of 15 KB: %d parts, the largest of %d turns; want parts of %d", parts, most, perPart)
	}
	docs, err := db.UnitsSince(ctx, 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Session == "big" && len(d.Text) > UnitMaxBytes {
			t.Errorf("unit text of %d bytes, over %d", len(d.Text), UnitMaxBytes)
		}
	}
}

// TestSceneUnits: a scene written by the L2 worker is a unit of its own,
// of its stored turns, searched apart from the sessions.
func TestSceneUnits(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	mustPut(t, db,
		sessionTurn(1, "s1", "Ana", "Let us pick a database"),
		sessionTurn(2, "s1", "Bo", "PostgreSQL for the JSONB support"),
		sessionTurn(3, "s1", "Ana", "Now lunch: pizza or sushi?"),
	)
	sc := engram.Scene{ID: "scn-1", Namespace: engram.DefaultNamespace, Session: "s1", Title: "database",
		Turns: []string{"t1", "t2"}, Start: testTurn(1, "").TS, End: testTurn(2, "").TS}
	if err := db.PutScenes(ctx, "l2-scenes", []engram.SceneWrite{{Scene: sc}}, 2); err != nil {
		t.Fatal(err)
	}
	hits, err := db.SearchUnits(ctx, engram.TextQuery{Text: "JSONB database", Limit: 10}, engram.UnitScene)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Unit.Kind != engram.UnitScene || hits[0].Unit.Turns != 2 || !strings.HasPrefix(hits[0].Unit.ID, "scu-") {
		t.Fatalf("scene unit: %+v", hits)
	}
	if hits, _ := db.SearchUnits(ctx, engram.TextQuery{Text: "sushi", Limit: 10}, engram.UnitScene); len(hits) != 0 {
		t.Errorf("a turn outside the scene matched it: %+v", hits)
	}
	// The scene grows: the same unit, with the new turn.
	sc.Turns = append(sc.Turns, "t3")
	if err := db.PutScenes(ctx, "l2-scenes", []engram.SceneWrite{{Scene: sc}}, 3); err != nil {
		t.Fatal(err)
	}
	hits, _ = db.SearchUnits(ctx, engram.TextQuery{Text: "sushi", Limit: 10}, engram.UnitScene)
	if len(hits) != 1 || hits[0].Unit.Turns != 3 {
		t.Fatalf("grown scene: %+v", hits)
	}
	of, err := db.TurnUnits(ctx, []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	if len(of[3]) != 2 {
		t.Errorf("turn 3 is in its session and its scene: %v", of)
	}
	if _, err := db.SearchUnits(ctx, engram.TextQuery{Text: "x"}, "chapter"); engram.ErrorCode(err) != engram.EINVALID {
		t.Errorf("unknown kind: %v", err)
	}
}

// TestUnits_Backfill: a palace written before units existed (its units
// gone, as an older engram left it) gets them at Open.
func TestUnits_Backfill(t *testing.T) {
	path := t.TempDir() + "/palace.db"
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := db.PutTurns(ctx, []engram.Turn{
		sessionTurn(1, "a", "Ana", "first words"), sessionTurn(2, "b", "Bo", "other words"), sessionTurn(3, "a", "Ana", "last words"),
	}); err != nil {
		t.Fatal(err)
	}
	err = db.Update(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{`DELETE FROM unit_turns`, `DELETE FROM units`,
			`INSERT INTO unit_sessions_fts (unit_sessions_fts) VALUES ('delete-all')`, `DELETE FROM palace_meta WHERE key = 'units_seq'`} {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = MustOpenDBAt(t, path, Options{}) // its cleanup checks the invariants
	hits, err := db.SearchUnits(ctx, engram.TextQuery{Text: "first last", Limit: 10}, engram.UnitSession)
	if err != nil || len(hits) != 1 || hits[0].Unit.Session != "a" || hits[0].Unit.Turns != 2 {
		t.Fatalf("after the backfill: %+v %v", hits, err)
	}
}

// TestPutTurnsSearchable: after PutTurnsSearchable the turns are
// searchable by keyword, their session units and substring rows wait for
// IndexSecondary, which writes them in steps; a process that stops before
// leaves them to the next call or to Open; a forget or a redaction before
// them is what they index.
func TestPutTurnsSearchable(t *testing.T) {
	path := t.TempDir() + "/palace.db"
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	units := func(db *DB, seqs ...int64) int {
		m, err := db.TurnUnits(ctx, seqs)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, ids := range m {
			n += len(ids)
		}
		return n
	}
	substring := func(db *DB, q string) int { // a part of no word: the trigram index finds it
		hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: q, Limit: 5})
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	secondary := func(db *DB, seq int64, limit int) (steps int) {
		for done := false; !done; steps++ {
			if done, err = db.IndexSecondary(ctx, seq, limit, nil); err != nil {
				t.Fatal(err)
			}
		}
		return steps
	}

	var batch []engram.Turn
	for seq := int64(1); seq <= 5; seq++ {
		batch = append(batch, sessionTurn(seq, "a", "Ana", "kafkaconsumer lag "+itoa(seq)))
	}
	if err := db.PutTurnsSearchable(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if hits, err := db.SearchTurns(ctx, engram.TextQuery{Text: "kafkaconsumer", Limit: 10}); err != nil || len(hits) != 5 {
		t.Fatalf("searchable: %d hits, %v; want 5", len(hits), err)
	}
	if n, m := units(db, 1, 2, 3, 4, 5), substring(db, "afkaco"); n != 0 || m != 0 {
		t.Fatalf("before IndexSecondary: %d units, %d substring hits; want none", n, m)
	}
	if c, err := db.CountTurnIndexes(ctx); err != nil || c.Trigram != 0 || c.TrigramPending != 5 {
		t.Fatalf("counts before IndexSecondary: %+v, %v", c, err)
	}
	if steps := secondary(db, 5, 2); steps != 3 {
		t.Fatalf("IndexSecondary took %d steps of 2 turns for 5, want 3", steps)
	}
	if n, m := units(db, 1, 2, 3, 4, 5), substring(db, "afkaco"); n != 5 || m != 5 {
		t.Fatalf("after IndexSecondary: %d units, %d substring hits; want 5, 5", n, m)
	}

	// Stopped before IndexSecondary: PutTurns writes what was left, with
	// its own.
	if err := db.PutTurnsSearchable(ctx, []engram.Turn{sessionTurn(6, "a", "Bo", "kafka broker restart")}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutTurns(ctx, []engram.Turn{sessionTurn(7, "b", "Cy", "other words")}); err != nil {
		t.Fatal(err)
	}
	if n := units(db, 6, 7); n != 2 {
		t.Fatalf("after the next PutTurns: %d units of turns 6 and 7, want 2", n)
	}

	// Stopped again, then closed: Open writes them.
	if err := db.PutTurnsSearchable(ctx, []engram.Turn{sessionTurn(8, "b", "Cy", "more words")}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = MustOpenDBAt(t, path, Options{}) // its cleanup checks the invariants
	if n := units(db, 1, 2, 3, 4, 5, 6, 7, 8); n != 8 {
		t.Fatalf("after reopening: %d units of 8 turns, want 8", n)
	}
	if c, err := db.CountTurnIndexes(ctx); err != nil || c.Turns != 8 || c.Trigram != 8 || c.TrigramPending != 0 {
		t.Fatalf("after reopening: %+v, %v; want 8 turns, 8 substring rows, none pending", c, err)
	}

	// A redaction in between: the substring row is of the redacted content.
	secret := sessionTurn(9, "c", "Di", "the token is zorblewskiqx")
	if err := db.PutTurnsSearchable(ctx, []engram.Turn{secret}); err != nil {
		t.Fatal(err)
	}
	red, _ := secret.RedactSpans([]string{"zorblewskiqx"}, "[redacted]")
	if _, err := db.RedactTurns(ctx, []engram.Turn{red}, []string{"zorblewskiqx"}, "[redacted]"); err != nil {
		t.Fatal(err)
	}
	secondary(db, 9, 0)
	for _, q := range []string{"blewskiq", "zorblewskiqx"} {
		if n := substring(db, q); n != 0 {
			t.Fatalf("search %q after the redaction: %d hits, want none", q, n)
		}
	}
	if n := substring(db, "dacte"); n != 1 {
		t.Fatalf("the redacted turn's substring row: %d hits of \"dacte\", want 1", n)
	}

	// A forget in between: no row of the forgotten turn is left (the
	// cleanup checks the invariants).
	if err := db.PutTurnsSearchable(ctx, []engram.Turn{sessionTurn(10, "c", "Di", "forgotten words")}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "t10", Seq: 10}}, time.Now(), nil); err != nil {
		t.Fatal(err)
	}
	secondary(db, 10, 0)

	// A turn stored behind the watermarks gets its rows at once.
	if err := db.PutTurns(ctx, []engram.Turn{sessionTurn(12, "d", "Ed", "an early word")}); err != nil {
		t.Fatal(err)
	}
	if err := db.PutTurnsSearchable(ctx, []engram.Turn{sessionTurn(11, "d", "Ed", "a late arrivalqz")}); err != nil {
		t.Fatal(err)
	}
	if n, m := units(db, 11), substring(db, "ivalq"); n != 1 || m != 1 {
		t.Fatalf("a turn stored behind the watermarks: %d units, %d substring hits; want 1, 1", n, m)
	}
	if hits, err := db.SearchUnits(ctx, engram.TextQuery{Text: "arrivalqz", Limit: 5}, engram.UnitSession); err != nil || len(hits) != 1 {
		t.Fatalf("a turn stored behind the watermarks: its part's text found %d times, %v; want once", len(hits), err)
	}
}

// TestScoreUnits: the scores of given units equal those SearchUnits ranks.
func TestScoreUnits(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	var turns []engram.Turn
	for i := int64(1); i <= 60; i++ {
		turns = append(turns, sessionTurn(i, fmt.Sprintf("s%d", i%6), "Ana", fmt.Sprintf("words %d about lisbon flights %d", i, i%4)))
	}
	mustPut(t, db, turns...)
	q := engram.TextQuery{Text: "lisbon flights 3", Limit: 100}
	all, err := db.SearchUnits(ctx, q, engram.UnitSession)
	if err != nil || len(all) != 6 {
		t.Fatalf("search: %d hits, %v", len(all), err)
	}
	ids := []string{all[4].Unit.ID, all[1].Unit.ID, "ses-unknown"}
	got, err := db.ScoreUnits(ctx, q, ids, "")
	if err != nil || len(got) != 2 {
		t.Fatalf("score: %+v %v", got, err)
	}
	want := map[string]float64{all[4].Unit.ID: all[4].Score, all[1].Unit.ID: all[1].Score}
	for _, h := range got {
		if h.Score != want[h.ID] || h.Kind != engram.UnitSession {
			t.Errorf("%s (%s) scored %v, SearchUnits %v", h.ID, h.Kind, h.Score, want[h.ID])
		}
	}
}

// TestIndexSecondaryStops: a step that stop ends early commits whole
// turns' substring rows and leaves the rest, and the session parts'
// text, to the next steps; the parts the turns extended are re-indexed
// once, after the turns, whatever stop says, and then hold every turn's
// words.
func TestIndexSecondaryStops(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	var batch []engram.Turn
	for seq := int64(1); seq <= 40; seq++ {
		s := "alpha"
		if seq%2 == 0 {
			s = "beta"
		}
		batch = append(batch, sessionTurn(seq, s, "Ana", "rollout note "+itoa(seq)+" word"+s+itoa(seq)))
	}
	if err := db.PutTurnsSearchable(ctx, batch); err != nil {
		t.Fatal(err)
	}
	always := func() bool { return true }
	stale := func() (n int) {
		if err := db.View(ctx, func(tx *sql.Tx) error {
			return tx.QueryRowContext(ctx, `SELECT count(*) FROM unit_stale`).Scan(&n)
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	sessionHits := func(q string) int {
		hits, err := db.SearchUnits(ctx, engram.TextQuery{Text: q, Limit: 10}, engram.UnitSession)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}

	done, err := db.IndexSecondary(ctx, 40, 0, always)
	if err != nil || done {
		t.Fatalf("first stopped step: done %v, %v", done, err)
	}
	c, err := db.CountTurnIndexes(ctx)
	if err != nil || c.Trigram != stopEvery || c.TrigramPending != 40-stopEvery {
		t.Fatalf("after the first stopped step: %+v, %v; want %d substring rows", c, err, stopEvery)
	}
	if n := stale(); n != 2 {
		t.Fatalf("after the first stopped step: %d parts listed, want the 2 sessions'", n)
	}
	if n := sessionHits("wordalpha39"); n != 0 {
		t.Fatalf("a part's text indexed before the turns' rows: %d hits", n)
	}
	steps := 1
	for !done {
		if done, err = db.IndexSecondary(ctx, 40, 0, always); err != nil {
			t.Fatal(err)
		}
		steps++
	}
	// 40 turns' rows 8 at a time; the last step then re-indexes the 2
	// parts, which stop does not end.
	if steps != 40/stopEvery {
		t.Fatalf("%d stopped steps, want %d", steps, 40/stopEvery)
	}
	if c, err := db.CountTurnIndexes(ctx); err != nil || c.Trigram != 40 || c.TrigramPending != 0 {
		t.Fatalf("after the steps: %+v, %v", c, err)
	}
	if n := stale(); n != 0 {
		t.Fatalf("after the steps: %d parts still listed", n)
	}
	for _, q := range []string{"wordalpha1", "wordalpha39", "wordbeta2", "wordbeta40"} {
		if n := sessionHits(q); n != 1 {
			t.Fatalf("%s: %d session parts, want 1", q, n)
		}
	}
}

// TestIndexSecondaryForgetBetween: a session part listed for re-indexing
// and then forgotten whole is passed over; a part that lost turns is
// indexed as it then is.
func TestIndexSecondaryForgetBetween(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	var batch []engram.Turn
	var forget []engram.ForgetTurn
	for seq := int64(1); seq <= 12; seq++ {
		s := "alpha"
		if seq%2 == 0 {
			s = "beta"
			forget = append(forget, engram.ForgetTurn{ID: "t" + itoa(seq), Seq: seq})
		}
		batch = append(batch, sessionTurn(seq, s, "Ana", "rollout note word"+s+itoa(seq)))
	}
	forget = append(forget, engram.ForgetTurn{ID: "t11", Seq: 11}) // one of alpha's
	if err := db.PutTurnsSearchable(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if done, err := db.IndexSecondary(ctx, 12, 0, func() bool { return true }); err != nil || done {
		t.Fatalf("stopped step: done %v, %v", done, err)
	}
	if _, err := db.ForgetTurns(ctx, forget, time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC), nil); err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		var err error
		if done, err = db.IndexSecondary(ctx, 12, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	for q, want := range map[string]int{"wordalpha1": 1, "wordalpha9": 1, "wordalpha11": 0, "wordbeta2": 0, "wordbeta12": 0} {
		hits, err := db.SearchUnits(ctx, engram.TextQuery{Text: q, Limit: 10}, engram.UnitSession)
		if err != nil || len(hits) != want {
			t.Fatalf("%s: %d session parts, %v; want %d", q, len(hits), err, want)
		}
	}
	var stale int
	if err := db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM unit_stale`).Scan(&stale)
	}); err != nil || stale != 0 {
		t.Fatalf("%d parts still listed, %v", stale, err)
	}
}

// TestSessionUnits_ArchivedAgain checks that a turn archived again after
// its forget that starts a new session part, while the part it began
// before keeps other turns, gets a part of its own (the second id of
// engram.SessionPartIDs): the first id is taken, and the secondary step
// failed on it for good.
func TestSessionUnits_ArchivedAgain(t *testing.T) {
	db := MustOpenDB(t)
	ctx := t.Context()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(seq int64, id string) engram.Turn {
		return engram.Turn{ID: id, Seq: seq, Namespace: "ns", Session: "s", Role: engram.RoleUser, Content: "x", TS: at.Add(time.Duration(seq) * time.Second)}
	}
	var turns []engram.Turn
	for i := int64(1); i <= UnitMaxTurns; i++ {
		turns = append(turns, mk(i, "t"+itoa(i)))
	}
	mustPut(t, db, turns...)
	if _, err := db.ForgetTurns(ctx, []engram.ForgetTurn{{ID: "t1", Seq: 100}}, at, nil); err != nil {
		t.Fatal(err)
	}
	mustPut(t, db, mk(101, "t65")) // the part is full again
	if err := db.PutTurns(ctx, []engram.Turn{mk(102, "t1")}); err != nil {
		t.Fatalf("PutTurns of a turn archived again: %v", err)
	}
	units, err := db.TurnUnits(ctx, []int64{102})
	ids := engram.SessionPartIDs("ns", "s", "t1", 102)
	if err != nil || len(units[102]) != 1 || units[102][0] != ids[1] {
		t.Fatalf("TurnUnits(102) = %v, %v; want the part %s", units, err, ids[1])
	}
}
