package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/engram-dev/engram/internal/kwindex"
)

// Reading rows. Each helper closes the rows before it returns, so that a
// transaction that read them can go on to write.

// eachRow calls fn for each of rows (fn scans the row itself) and closes
// them. It returns fn's first error, or the one that ended the iteration.
func eachRow(rows *sql.Rows, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := fn(); err != nil {
			return err
		}
	}
	return rows.Err()
}

// scanOne scans row into dest; found is false, without error, when the
// query matched no row.
func scanOne(row *sql.Row, dest ...any) (found bool, err error) {
	err = row.Scan(dest...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// nanoTime scans a column of Unix nanoseconds into *T, in UTC; NULL is the
// zero time.
type nanoTime struct{ T *time.Time }

// Scan implements sql.Scanner.
func (n nanoTime) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*n.T = time.Time{}
	case int64:
		*n.T = time.Unix(0, x).UTC()
	default:
		return fmt.Errorf("want Unix nanoseconds, got %T", v)
	}
	return nil
}

// jsonCol scans a column of JSON text into the value Dst points to.
type jsonCol struct{ Dst any }

// Scan implements sql.Scanner.
func (j jsonCol) Scan(v any) error {
	switch x := v.(type) {
	case string:
		return json.Unmarshal([]byte(x), j.Dst)
	case []byte:
		return json.Unmarshal(x, j.Dst)
	}
	return fmt.Errorf("want JSON text, got %T", v)
}

// scanner returns a scan, for viewList, that scans each row into a new T
// through the destinations dest gives for it.
func scanner[T any](dest func(*T) []any) func(*sql.Rows, func(T)) error {
	return func(rows *sql.Rows, add func(T)) error {
		return eachRow(rows, func() error {
			var v T
			if err := rows.Scan(dest(&v)...); err != nil {
				return err
			}
			add(v)
			return nil
		})
	}
}

// scanAll scans each of rows into a new T, through the destinations dest
// gives for it, and returns them in order.
func scanAll[T any](rows *sql.Rows, dest func(*T) []any) ([]T, error) {
	var out []T
	if err := scanner(dest)(rows, func(v T) { out = append(out, v) }); err != nil {
		return nil, err
	}
	return out, nil
}

// scanGroups reads rows of (key, value) into out: each key's values, in
// the order of the rows.
func scanGroups[K comparable, V any](rows *sql.Rows, out map[K][]V) error {
	return eachRow(rows, func() error {
		var k K
		var v V
		if err := rows.Scan(&k, &v); err != nil {
			return err
		}
		out[k] = append(out[k], v)
		return nil
	})
}

// rankedRows are rows of a fixed list of columns followed, in a keyword
// search, by the FTS rank.
type rankedRows struct {
	rows *sql.Rows
	cols int             // the columns of a row, the rank's included
	rank sql.NullFloat64 // the current row's rank
	dest []any           // the destinations of a ranked row, reused
}

// scan scans the fixed columns of the current row into dest and returns
// the rank, 0 without one. A static call, so that dest stays on the
// caller's stack.
func (r *rankedRows) scan(dest ...any) (float64, error) {
	if r.cols <= len(dest) {
		return 0, r.rows.Scan(dest...)
	}
	r.rank = sql.NullFloat64{}
	r.dest = append(append(r.dest[:0], dest...), &r.rank)
	err := r.rows.Scan(r.dest...)
	return r.rank.Float64, err
}

// scanRanked calls row for each of rows, which scans it with r.scan, and
// closes them.
func scanRanked(rows *sql.Rows, row func(r *rankedRows) error) error {
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	r := &rankedRows{rows: rows, cols: len(cols)}
	return eachRow(rows, func() error { return row(r) })
}

// queryStrings runs a query of one text column in tx and returns its values
// in order.
func queryStrings(ctx context.Context, tx *sql.Tx, query string, args ...any) ([]string, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return scanAll(rows, func(s *string) []any { return []any{s} })
}

// queryRows runs query in tx and returns its rows in order, each scanned
// by scan into a new T, with the rows closed.
func queryRows[T any](ctx context.Context, tx *sql.Tx, query string, args []any, scan func(*sql.Rows, *T) error) ([]T, error) {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []T
	err = eachRow(rows, func() error {
		var v T
		if err := scan(rows, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// reindexText replaces row n's text in the full-text index table (a
// contentless one, whose rows are deleted by rowid).
func reindexText(ctx context.Context, tx *sql.Tx, table string, n int64, text string) error {
	if _, err := tx.ExecContext(ctx, qDeleteText(table), n); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, qInsertText(table), n, text)
	return err
}

// reindexTextStmt is reindexText with statements from st.
func reindexTextStmt(ctx context.Context, st stmtFunc, table string, n int64, text string) error {
	for _, x := range []struct {
		q    string
		args []any
	}{{qDeleteText(table), []any{n}}, {qInsertText(table), []any{n, text}}} {
		q, err := st(x.q)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, x.args...); err != nil {
			return err
		}
	}
	return nil
}

// qDeleteText and qInsertText delete and insert row n of the full-text
// table of one column, text.
func qDeleteText(table string) string { return `DELETE FROM ` + table + ` WHERE rowid = ?` }
func qInsertText(table string) string { return `INSERT INTO ` + table + ` (rowid, text) VALUES (?, ?)` }

// scanInts returns the values of rows of one integer column, in order.
func scanInts(rows *sql.Rows) ([]int64, error) {
	return scanAll(rows, func(n *int64) []any { return []any{n} })
}

// viewList runs query in a read transaction and returns the items scan
// reads from its rows, in order. An error names the list: "palace: what: ".
func viewList[T any](ctx context.Context, db *DB, what string, scan func(*sql.Rows, func(T)) error, query string, args ...any) ([]T, error) {
	var out []T
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		return scan(rows, func(v T) { out = append(out, v) })
	})
	if err != nil {
		return nil, fmt.Errorf("palace: %s: %w", what, err)
	}
	return out, nil
}

// hitRows reads the rows of hits by their key (a row number: query
// selects them with the key list as its argument, the rows read by scan)
// and passes each to add with its hit's score, in the order of hits. A row
// gone meanwhile is left out.
func hitRows[T any](ctx context.Context, db *DB, query string, hits []kwindex.Hit,
	scan func(*sql.Rows, func(int64, T)) error, add func(v T, score float64)) error {
	if len(hits) == 0 {
		return nil
	}
	byN := make(map[int64]T, len(hits))
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := db.readQuery(ctx, tx, query, jsonList(kwindex.Keys(hits)))
		if err != nil {
			return err
		}
		return scan(rows, func(n int64, v T) { byN[n] = v })
	})
	if err != nil {
		return err
	}
	for _, h := range hits {
		if v, found := byN[h.Key]; found {
			add(v, h.Score)
		}
	}
	return nil
}
