package sqlrow_test

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/engram-dev/engram/internal/sqlrow"
)

func mustDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestTimeAndJSONColumns(t *testing.T) {
	db := mustDB(t)
	when := time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC)
	var at, none time.Time
	var list []string
	var obj struct{ A int }
	err := db.QueryRow(`SELECT ?, NULL, '["a","b"]', '{"A":3}'`, when.UnixNano()).
		Scan(sqlrow.Time(&at), sqlrow.Time(&none), sqlrow.JSON(&list), sqlrow.JSON(&obj))
	if err != nil {
		t.Fatal(err)
	}
	if !at.Equal(when) || at.Location() != time.UTC || !none.IsZero() || !slices.Equal(list, []string{"a", "b"}) || obj.A != 3 {
		t.Fatalf("scanned %v, %v, %v, %+v", at, none, list, obj)
	}
	if err := db.QueryRow(`SELECT 'not json'`).Scan(sqlrow.JSON(&list)); err == nil {
		t.Error("a column that is no JSON scanned without error")
	}
	if err := db.QueryRow(`SELECT 'text'`).Scan(sqlrow.Time(&at)); err == nil {
		t.Error("a text column scanned as a time without error")
	}
}

func TestNanos(t *testing.T) {
	for _, c := range []struct {
		t    time.Time
		want any
		ok   bool
	}{
		{time.Time{}, nil, true},
		{time.Unix(0, 42), int64(42), true},
		{time.Unix(0, math.MaxInt64), int64(math.MaxInt64), true},
		{time.Unix(0, math.MaxInt64).Add(time.Nanosecond), nil, false},
		{time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC), nil, false},
	} {
		if v, ok := sqlrow.Nanos(c.t); v != c.want || ok != c.ok {
			t.Errorf("Nanos(%v) = %v, %v; want %v, %v", c.t, v, ok, c.want, c.ok)
		}
	}
}

func TestOneAndByIDs(t *testing.T) {
	db := mustDB(t)
	ctx := context.Background()
	if _, err := db.Exec(`CREATE TABLE x (id TEXT PRIMARY KEY, n INTEGER); INSERT INTO x VALUES ('a', 1), ('b', 2), ('c', 3)`); err != nil {
		t.Fatal(err)
	}
	var n int64
	if found, err := sqlrow.One(db.QueryRow(`SELECT n FROM x WHERE id = 'b'`), &n); !found || err != nil || n != 2 {
		t.Fatalf("One of b: %v %v %d", found, err, n)
	}
	if found, err := sqlrow.One(db.QueryRow(`SELECT n FROM x WHERE id = 'z'`), &n); found || err != nil {
		t.Fatalf("One of no row: %v %v", found, err)
	}
	type row struct {
		id string
		n  int64
	}
	got, err := sqlrow.ByIDs(ctx, viewer{db}, `SELECT id, n FROM x WHERE id IN `, []string{"c", "z", "a", "c"},
		sqlrow.Scanner(func(r *row) []any { return []any{&r.id, &r.n} }), func(r row) string { return r.id })
	if err != nil || !slices.Equal(got, []row{{"c", 3}, {"a", 1}}) {
		t.Fatalf("ByIDs: %v %v", got, err)
	}
}

func TestMatchQuotes(t *testing.T) {
	if got, want := sqlrow.Match(`say "hi"`, "OR", "x*"), `"say ""hi""" OR "OR" OR "x*"`; got != want {
		t.Fatalf("Match = %s, want %s", got, want)
	}
}

// viewer runs View on a plain pool.
type viewer struct{ db *sql.DB }

func (v viewer) View(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := v.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer tx.Rollback()
	return fn(tx)
}
