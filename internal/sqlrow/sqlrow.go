// Package sqlrow reads rows of database/sql in the few shapes engram's
// SQLite tables take (each row, one, all, grouped, ranked by FTS5), scans
// the columns it stores in its own encodings (Unix nanoseconds, JSON), and
// writes the FTS5 query of some words, and opens pools of connections to a
// SQLite file (FileDSN, OpenPool): what the packages that keep tables in
// the palace's SQLite file (palace, vault, scheduler) share.
//
// Each helper that reads rows closes them before it returns, so that a
// transaction that read them can go on to write.
package sqlrow

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
)

// Each calls fn for each of rows (fn scans the row itself) and closes
// them. It returns fn's first error, or the one that ended the iteration.
func Each(rows *sql.Rows, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// One scans row into dest; found is false, without error, when the query
// matched no row.
func One(row *sql.Row, dest ...any) (found bool, err error) {
	err = row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Scanner returns a scan that scans each row into a new T through the
// destinations dest gives for it, and passes it to add.
func Scanner[T any](dest func(*T) []any) func(*sql.Rows, func(T)) error {
	return func(rows *sql.Rows, add func(T)) error {
		return Each(rows, func() error {
			var v T
			if err := rows.Scan(dest(&v)...); err != nil {
				return err
			}
			add(v)
			return nil
		})
	}
}

// All scans each of rows into a new T, through the destinations dest
// gives for it, and returns them in order.
func All[T any](rows *sql.Rows, dest func(*T) []any) ([]T, error) {
	var out []T
	if err := Scanner(dest)(rows, func(v T) { out = append(out, v) }); err != nil {
		return nil, err
	}
	return out, nil
}

// Ints returns the values of rows of one integer column, in order.
func Ints(rows *sql.Rows) ([]int64, error) {
	return All(rows, func(n *int64) []any { return []any{n} })
}

// Groups reads rows of (key, value) into out: each key's values, in the
// order of the rows.
func Groups[K comparable, V any](rows *sql.Rows, out map[K][]V) error {
	return Each(rows, func() error {
		var k K
		var v V
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = append(out[k], v)
		return nil
	})
}

// Strings runs a query of one text column in tx and returns its values in
// order.
func Strings(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return All(rows, func(s *string) []any { return []any{s} })
}

// Query runs query in tx and returns its rows in order, each scanned by
// scan into a new T.
func Query[T any](ctx context.Context, tx *sql.Tx, query string, args []any, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []T
	err = Each(rows, func() error {
		var v T
		if err := scan(rows, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// Ranked are rows of a fixed list of columns followed, in a keyword
// search, by the FTS5 rank.
type Ranked struct {
	rows *sql.Rows
	cols int             // the columns of a row, the rank's included
	rank sql.NullFloat64 // the current row's rank
	dest []any           // the destinations of a ranked row, reused
}

// Scan scans the fixed columns of the current row into dest and returns
// the rank, 0 without one. A static call, so that dest stays on the
// caller's stack.
func (r *Ranked) Scan(dest ...any) (float64, error) {
	if r.cols <= len(dest) {
		return 0, r.rows.Scan(dest...)
	}
	r.rank = sql.NullFloat64{}
	r.dest = append(append(r.dest[:0], dest...), &r.rank)
	err := r.rows.Scan(r.dest...)
	return r.rank.Float64, err
}

// EachRanked calls row for each of rows, which scans it with r.Scan, and
// closes them.
func EachRanked(rows *sql.Rows, row func(r *Ranked) error) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	r := &Ranked{rows: rows, cols: len(cols)}
	return Each(rows, func() error { return row(r) })
}

// Time is a destination of Scan that reads a column of Unix nanoseconds
// into *t, in UTC; NULL is the zero time.
func Time(t *time.Time) sql.Scanner { return nanoTime{t} }

type nanoTime struct{ t *time.Time }

func (n nanoTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.t = time.Time{}
	case int64:
		*n.t = time.Unix(0, x).UTC()
	default:
		return fmt.Errorf("want Unix nanoseconds, got %T", v)
	}
	return nil
}

// The range of times a column of Unix nanoseconds holds.
var (
	minTime = time.Unix(0, math.MinInt64).UTC()
	maxTime = time.Unix(0, math.MaxInt64).UTC()
)

// Nanos is t as a column of Unix nanoseconds holds it: nil for the zero
// time (NULL). ok is false for a time outside the column's range, about
// 1677-09-21 to 2262-04-11.
func Nanos(t time.Time) (v any, ok bool) {
	switch {
	case t.IsZero():
		return nil, true
	case t.Before(minTime) || t.After(maxTime):
		return nil, false
	}
	return t.UnixNano(), true
}

// JSON is a destination of Scan that reads a column of JSON text into the
// value dst points to.
func JSON(dst any) sql.Scanner { return jsonText{dst} }

type jsonText struct{ dst any }

func (j jsonText) Scan(v any) error {
	switch x := v.(type) {
	case string:
		return json.Unmarshal([]byte(x), j.dst)
	case []byte:
		return json.Unmarshal(x, j.dst)
	}
	return fmt.Errorf("want JSON text, got %T", v)
}

// JSONList is v as JSON: a list of keys, which a query reads with
// json_each (so that its text, and its plan, is the same for any number
// of keys), or a JSON column's value.
func JSONList[T any](v T) string {
	b, _ := json.Marshal(v) // strings, integers and the palace's records always marshal
	return string(b)
}

// Match returns an FTS5 query that matches any of words. Each word is a
// quoted string, so nothing a user types is read as FTS5 syntax: quotes
// are doubled, and AND, OR, NOT, NEAR, *, ^, :, -, ( and ) inside quotes
// are text.
func Match(words ...string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteString(" OR ")
		}
		b.WriteByte('"')
		b.WriteString(strings.ReplaceAll(w, `"`, `""`))
		b.WriteByte('"')
	}
	return b.String()
}

// Viewer runs read-only transactions; *palace.DB implements it.
type Viewer interface {
	View(ctx context.Context, fn func(*sql.Tx) error) error
}

// List runs query in a read transaction of db and returns the items scan
// reads from its rows, in order.
func List[T any](ctx context.Context, db Viewer, scan func(*sql.Rows, func(T)) error, query string, args ...any) ([]T, error) {
	var out []T
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		return scan(rows, func(v T) { out = append(out, v) })
	})
	return out, err
}

// ByIDs runs query, which ends with "IN ", for ids, and returns the items
// scan reads in the order of ids, each once (id gives an item's);
// unknown ids are skipped.
func ByIDs[T any](ctx context.Context, db Viewer, query string, ids []string,
	scan func(*sql.Rows, func(T)) error, id func(T) string) ([]T, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	got, err := List(ctx, db, scan, query+`(SELECT value FROM json_each(?))`, JSONList(ids))
	if err != nil {
		return nil, err
	}
	return InOrder(ids, got, id), nil
}

// InOrder returns items in the order of ids, each once; ids without an
// item are skipped.
func InOrder[T any](ids []string, items []T, id func(T) string) []T {
	byID := make(map[string]T, len(items))
	for _, it := range items {
		byID[id(it)] = it
	}
	out := make([]T, 0, len(byID))
	for _, i := range ids {
		if it, ok := byID[i]; ok {
			out = append(out, it)
			delete(byID, i)
		}
	}
	return out
}

// FileDSN returns the data source name of the SQLite file at abs with the
// query q (the driver's parameters: _pragma, mode, ...). The path is
// escaped: '?', '#' and '%' in it are the file's name.
func FileDSN(abs string, q url.Values) string {
	u := url.URL{Scheme: "file", Path: abs}
	return u.String() + "?" + q.Encode()
}

// OpenPool opens a pool of at most conns connections of the SQLite driver
// to dsn, each kept open until the pool closes.
func OpenPool(dsn string, conns int) (*sql.DB, error) {
	pool, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	pool.SetMaxOpenConns(conns)
	pool.SetMaxIdleConns(conns)
	pool.SetConnMaxLifetime(0)
	pool.SetConnMaxIdleTime(0)
	return pool, nil
}
