package postgres_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/archive"
	"github.com/engram-dev/engram/internal/archivetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/postgres"
)

// quietLogger drops the warnings tests provoke on purpose.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// open opens the archive in the database at url.
func open(url string, opts postgres.Options) (*postgres.Archive, error) {
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	return postgres.Open(context.Background(), url, opts)
}

// mustOpen opens the archive in the database at url and closes it when
// the test ends.
func mustOpen(tb testing.TB, url string, opts postgres.Options) *postgres.Archive {
	tb.Helper()
	a, err := open(url, opts)
	if err != nil {
		tb.Fatalf("open: %v", err)
	}
	tb.Cleanup(func() {
		if err := a.Close(); err != nil {
			tb.Errorf("close: %v", err)
		}
	})
	return a
}

// TestConformance runs the suite the file archive passes too.
func TestConformance(t *testing.T) {
	pgtest.URL(t)
	archivetest.Run(t, func(t *testing.T) archivetest.Opener {
		url := pgtest.NewDatabase(t)
		return func() (engram.Archive, error) { return open(url, postgres.Options{}) }
	})
}

// TestOpenErrors checks what Open says about a URL that cannot work, and
// that it never repeats the password.
func TestOpenErrors(t *testing.T) {
	base := pgtest.URL(t)
	_, err := open("", postgres.Options{})
	archivetest.WantCode(t, err, engram.EINVALID)
	if !strings.Contains(err.Error(), postgres.EnvURL) {
		t.Fatalf("%v does not name %s", err, postgres.EnvURL)
	}
	_, err = open("postgres://engram:sekrit@127.0.0.1:notaport/db", postgres.Options{})
	archivetest.WantCode(t, err, engram.EINVALID)
	if strings.Contains(err.Error(), "sekrit") {
		t.Fatalf("the error repeats the password: %v", err)
	}
	// A port nothing listens on.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	_, err = open(fmt.Sprintf("postgres://engram:sekrit@127.0.0.1:%d/db?sslmode=disable", port), postgres.Options{})
	archivetest.WantCode(t, err, engram.EUNAVAILABLE)
	if strings.Contains(err.Error(), "sekrit") || !strings.Contains(err.Error(), fmt.Sprintf("127.0.0.1:%d/db", port)) {
		t.Fatalf("the error repeats the password or does not say where: %v", err)
	}
	// A database that does not exist.
	missing, err := pgtest.WithDatabase(base, "engram_no_such_database")
	if err != nil {
		t.Fatal(err)
	}
	_, err = open(missing, postgres.Options{})
	archivetest.WantCode(t, err, engram.EUNAVAILABLE)
}

// TestMigrations checks that servers starting together migrate once, and
// that a database a newer engram migrated is refused.
func TestMigrations(t *testing.T) {
	url := pgtest.NewDatabase(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			a, err := open(url, postgres.Options{})
			if err != nil {
				t.Error(err)
				return
			}
			a.Close()
		})
	}
	wg.Wait()
	db := connect(t, url)
	var versions []int
	rows, err := db.Query(context.Background(), `SELECT version FROM schema_migrations WHERE component = 'archive' ORDER BY version`)
	if err != nil {
		t.Fatal(err)
	}
	if versions, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil || len(versions) != len(postgres.Migrations) || versions[0] != 1 || versions[len(versions)-1] != len(postgres.Migrations) {
		t.Fatalf("versions %v (%v)", versions, err)
	}
	a := mustOpen(t, url, postgres.Options{})
	archivetest.MustAppend(t, a, archivetest.Turn("s", "kept"))
	a.Close()

	next := len(postgres.Migrations) + 1
	mustExec(t, db, `INSERT INTO schema_migrations (component, version) VALUES ('archive', $1)`, next)
	_, err = open(url, postgres.Options{})
	if !errors.Is(err, postgres.ErrSchemaTooNew) {
		t.Fatalf("open of a newer schema: %v", err)
	}
	// Another component's versions are not the archive's.
	mustExec(t, db, `DELETE FROM schema_migrations WHERE component = 'archive' AND version = $1`, next)
	mustExec(t, db, `INSERT INTO schema_migrations (component, version) VALUES ('palace', 7)`)
	b := mustOpen(t, url, postgres.Options{})
	if got := archivetest.StreamAll(t, b, 0); len(got) != 1 || got[0].Content != "kept" {
		t.Fatalf("after the migrations: %+v", got)
	}
}

// connect opens a plain connection to url for the test to look at the
// tables with, closed when the test ends.
func connect(tb testing.TB, url string) *pgx.Conn {
	tb.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func mustExec(tb testing.TB, db *pgx.Conn, sql string, args ...any) {
	tb.Helper()
	if _, err := db.Exec(context.Background(), sql, args...); err != nil {
		tb.Fatalf("%s: %v", sql, err)
	}
}

// TestRowsAreLines checks that each row holds the file archive's line of
// its turn, and that the row's columns agree with it.
func TestRowsAreLines(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	in := archivetest.Turn("s", "héllo <b> \"x\"")
	in.Meta = json.RawMessage(`{ "k": [1, 2] }`)
	in.TS = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	archivetest.MustAppend(t, a, in, archivetest.Turn("s", "second"))
	streamed := archivetest.StreamAll(t, a, 0)

	rows, err := connect(t, url).Query(context.Background(), `SELECT seq, id, ts, received_at, crc, line FROM archive_turns ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Seq        int64
		ID         string
		TS         time.Time
		ReceivedAt time.Time
		CRC        int64
		Line       []byte
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[row])
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d rows", len(got))
	}
	for i, r := range got {
		want, err := archive.EncodeLine(streamed[i])
		if err != nil {
			t.Fatal(err)
		}
		if string(r.Line)+"\n" != string(want) {
			t.Fatalf("row %d line:\n%s\nthe file archive's:\n%s", i, r.Line, want)
		}
		crc, err := strconv.ParseUint(string(r.Line[len(r.Line)-10:len(r.Line)-2]), 16, 32)
		if err != nil || int64(crc) != r.CRC || r.Seq != streamed[i].Seq || r.ID != streamed[i].ID ||
			!r.ReceivedAt.Equal(streamed[i].ReceivedAt) || !r.TS.Equal(streamed[i].TS.Truncate(time.Microsecond)) {
			t.Fatalf("row %d: %+v does not agree with its line %s", i, r, r.Line)
		}
	}
	if !bytes.Contains(got[0].Line, []byte(`"meta":{"k":[1,2]}`)) || !bytes.Contains(got[0].Line, []byte(`"ts":"2026-01-02T03:04:05.000000006Z"`)) {
		t.Fatalf("line %s", got[0].Line)
	}
}

// TestDamagedRows edits rows behind the archive's back: readers skip them
// with a warning, count them, and go on.
func TestDamagedRows(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a := mustOpen(t, url, postgres.Options{})
	for i := range 5 {
		archivetest.MustAppend(t, a, archivetest.Turn("s", fmt.Sprintf("turn %d", i)))
	}
	db := connect(t, url)
	// A changed byte (the crc no longer matches), a line moved to another
	// row (the line's seq is not the row's), a crc column that lies.
	mustExec(t, db, `UPDATE archive_turns SET line = overlay(line placing 'X'::bytea from 60 for 1) WHERE seq = 2`)
	mustExec(t, db, `UPDATE archive_turns SET line = (SELECT line FROM archive_turns WHERE seq = 3) WHERE seq = 4`)
	mustExec(t, db, `UPDATE archive_turns SET crc = crc + 1 WHERE seq = 5`)
	var seqs []int64
	for _, tn := range archivetest.StreamAll(t, a, 0) {
		seqs = append(seqs, tn.Seq)
	}
	if !slices.Equal(seqs, []int64{1, 3}) {
		t.Fatalf("streamed seqs %v, want [1 3]", seqs)
	}
	s, err := a.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s.CorruptRows != 3 || s.Turns != 5 || s.LastSeq != 5 {
		t.Fatalf("stats %+v", s)
	}
	if n := a.CorruptRows(); n != 3 {
		t.Fatalf("CorruptRows %d, Stats %d", n, s.CorruptRows)
	}
}
