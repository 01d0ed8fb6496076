package postgres_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/postgres"
)

// full gives the PostgreSQL archive the form of archivetest.Full.
type full struct{ *postgres.Archive }

func (f full) Counts(ctx context.Context) (int64, int64, int64, error) {
	s, err := f.Archive.Stats(ctx)
	return s.Turns, s.Forgotten, s.Redacted, err
}

// TestConformanceExtended runs the cases of forget, redaction, Verify and
// Notify the file archive passes too.
func TestConformanceExtended(t *testing.T) {
	pgtest.URL(t)
	archivetest.RunExtended(t, func(t *testing.T) archivetest.Extended {
		url := pgtest.NewDatabase(t)
		return archivetest.Extended{
			Open: func() (archivetest.Full, error) {
				a, err := open(url, postgres.Options{})
				if err != nil {
					return nil, err
				}
				return full{a}, nil
			},
			Damage: func(t *testing.T, seq int64) {
				// A byte of the content changed, the row's crc and the
				// line's left as they were.
				mustExec(t, connect(t, url), `UPDATE archive_turns SET line =
					overlay(line PLACING '\x21'::bytea FROM position('"content":"'::bytea IN line) + 11 FOR 1) WHERE seq = $1`, seq)
			},
		}
	})
}

// TestNotifyOtherServer checks that a commit of another Archive on the
// database (another server) wakes Notify and raises LastSeq, with no read
// in between.
func TestNotifyOtherServer(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	b := mustOpen(t, url, postgres.Options{})
	for i := range 3 {
		ch := b.Notify()
		res := archivetest.MustAppend(t, a, archivetest.Turn("s", "from a"))
		for b.LastSeq() < res[0].Seq {
			<-ch // the test hangs if the commit never reaches b
			ch = b.Notify()
		}
		if got := b.LastSeq(); got != int64(i+1) {
			t.Fatalf("b's LastSeq %d after a's commit %d", got, res[0].Seq)
		}
	}
	// A forget on a is seen by b's readers at once.
	if _, err := a.Forget(context.Background(), []string{archivetest.StreamAll(t, a, 0)[0].ID}, engram.Forgotten{Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	if ts, err := b.Tombstones(context.Background()); err != nil || len(ts) != 1 {
		t.Fatalf("b's tombstones %v (%v)", ts, err)
	}
}

// TestUpgradeFromVersion1 opens a database a version 1 archive wrote: the
// redacted rows are counted, and a row can be forgotten.
func TestUpgradeFromVersion1(t *testing.T) {
	url := pgtest.NewDatabase(t)
	db := connect(t, url)
	mustExec(t, db, `CREATE TABLE schema_migrations (component text NOT NULL, version integer NOT NULL,
		applied_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (component, version))`)
	mustExec(t, db, postgres.Migrations[0])
	mustExec(t, db, `INSERT INTO schema_migrations (component, version) VALUES ('archive', 1)`)
	for i, content := range []string{"plain", "a [REDACTED] key", `meta says "redacted": no`} {
		tn := archivetest.Turn("s", content)
		tn.ID, tn.Seq, tn.ReceivedAt = string(rune('a'+i)), int64(i+1), tn.TS
		if i == 1 {
			tn.Redacted = &engram.Redaction{At: tn.TS, Spans: 1}
		}
		line, err := archive.EncodeLine(tn)
		if err != nil {
			t.Fatal(err)
		}
		line = line[:len(line)-1]
		crc, err := strconv.ParseUint(string(line[len(line)-10:len(line)-2]), 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		mustExec(t, db, `INSERT INTO archive_turns (seq, id, ts, received_at, crc, line) VALUES ($1, $2, $3, $3, $4, $5)`,
			tn.Seq, tn.ID, tn.TS, int64(crc), line)
	}
	a := mustOpen(t, url, postgres.Options{})
	st, err := a.Stats(context.Background())
	if err != nil || st.Turns != 3 || st.Redacted != 1 || st.LastSeq != 3 {
		t.Fatalf("stats after the upgrade: %+v (%v)", st, err)
	}
	if _, err := a.Forget(context.Background(), []string{"a"}, engram.Forgotten{}); err != nil {
		t.Fatal(err)
	}
	if st, _ := a.Stats(context.Background()); st.Turns != 2 || st.Forgotten != 1 {
		t.Fatalf("stats after a forget: %+v", st)
	}
}

// TestRewritesOtherServer checks that a forget and a redaction committed
// by another Archive on the database wake Rewrites, with no read in
// between, and that an append does not.
func TestRewritesOtherServer(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	b := mustOpen(t, url, postgres.Options{})
	ctx := context.Background()
	res := archivetest.MustAppend(t, a, archivetest.Turn("s", "one secret"), archivetest.Turn("s", "two"))
	for b.LastSeq() < res[1].Seq {
		<-b.Notify()
	}
	ch := b.Rewrites()
	select {
	case <-ch:
		t.Fatal("Rewrites woke for appends")
	default:
	}
	if _, err := a.Forget(ctx, []string{res[0].ID}, engram.Forgotten{Reason: "x"}); err != nil {
		t.Fatal(err)
	}
	<-ch // the test hangs if the forget never reaches b
	ch = b.Rewrites()
	redact := func(t engram.Turn) (engram.Turn, bool) {
		t.Content, t.Redacted = "[REDACTED]", &engram.Redaction{At: t.TS, Spans: 1}
		return t, true
	}
	if _, err := a.Rewrite(ctx, []string{res[1].ID}, redact); err != nil {
		t.Fatal(err)
	}
	<-ch
}
