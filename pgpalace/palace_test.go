package pgpalace

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/palacetest"
	"github.com/engram-dev/engram/internal/pgtest"
	"github.com/engram-dev/engram/postgres"
)

// open opens a palace in a database of the test's own on the test server.
func open(t *testing.T) *DB {
	t.Helper()
	return openAt(t, pgtest.NewDatabase(t))
}

// openAt opens the palace in the database at url, closed when the test
// ends.
func openAt(t *testing.T, url string) *DB {
	t.Helper()
	db, err := Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestConformance runs the palaces' conformance suite on PostgreSQL, as
// package palace runs it on its SQLite file.
func TestConformance(t *testing.T) {
	palacetest.Run(t, func(t *testing.T) palacetest.Palace { return open(t) })
}

// TestOpen_Migrates checks that the palace's migrations go beside the
// archive's in one database, and that a second Open applies none again.
func TestOpen_Migrates(t *testing.T) {
	url := pgtest.NewDatabase(t)
	a, err := postgres.Open(t.Context(), url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for range 2 {
		db, err := Open(t.Context(), url)
		if err != nil {
			t.Fatal(err)
		}
		versions := map[string]int{}
		rows, err := db.pool.Query(t.Context(), `SELECT component, count(*) FROM schema_migrations GROUP BY component`)
		if err != nil {
			t.Fatal(err)
		}
		var (
			c string
			n int
		)
		if _, err := pgx.ForEachRow(rows, []any{&c, &n}, func() error { versions[c] = n; return nil }); err != nil {
			t.Fatal(err)
		}
		if versions["palace"] != len(migrations) || versions["archive"] == 0 {
			t.Fatalf("schema_migrations holds %v; want %d palace versions beside the archive's", versions, len(migrations))
		}
		// The test server has pg_trgm: the substring search is indexed.
		var trigram bool
		if err := db.pool.QueryRow(t.Context(), `SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE indexname = 'palace_turn_text_folded')`).Scan(&trigram); err != nil || !trigram {
			t.Fatalf("no trigram index of the turns (%v)", err)
		}
		db.Close()
	}
}

// TestOpen_Errors checks that a URL that does not parse is EINVALID and a
// database that does not answer EUNAVAILABLE, naming neither password.
func TestOpen_Errors(t *testing.T) {
	for url, code := range map[string]string{
		"":                                     engram.EINVALID,
		"postgres://u:secret@[::1:5432/x":      engram.EINVALID,
		"postgres://u:secret@127.0.0.1:1/none": engram.EUNAVAILABLE,
	} {
		_, err := Open(t.Context(), url)
		if engram.ErrorCode(err) != code {
			t.Errorf("Open(%q) = %v; want %s", url, err, code)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q) quotes the password: %v", url, err)
		}
	}
}

// TestOptimize runs the compact job's work on a palace with turns: the
// GIN indexes' pending lists merged, the statistics refreshed.
func TestOptimize(t *testing.T) {
	db := open(t)
	if err := db.PutTurns(t.Context(), searchTurns(t)); err != nil {
		t.Fatal(err)
	}
	if err := db.Optimize(t.Context()); err != nil {
		t.Fatal(err)
	}
	// pageinspect reads the index's metapage (the test server runs as a
	// superuser, which may create it).
	if _, err := db.pool.Exec(t.Context(), `CREATE EXTENSION IF NOT EXISTS pageinspect`); err != nil {
		t.Fatal(err)
	}
	var pending int64
	if err := db.pool.QueryRow(t.Context(), `SELECT coalesce(sum(n_pending_tuples), 0) FROM pg_class c, gin_metapage_info(get_raw_page(c.relname, 0))
		WHERE c.relname = 'palace_turn_text_grams'`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Fatalf("%d entries still pending in the CJK index after Optimize", pending)
	}
}
