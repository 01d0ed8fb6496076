package palace

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

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

// viewList runs query in a read transaction and returns the items scan
// reads from its rows, in order. An error names the list: "palace: what: ".
func viewList[T any](ctx context.Context, db *DB, what string, scan func(*sql.Rows, func(T)) error, query string, args ...any) ([]T, error) {
	out, err := sqlrow.List(ctx, db, scan, query, args...)
	if err != nil {
		return nil, fmt.Errorf("palace: %s: %w", what, err)
	}
	return out, nil
}

// readStrings reads rows of one text column.
var readStrings = sqlrow.Scanner(func(s *string) []any { return []any{s} })

// getByIDs is sqlrow.ByIDs with an error that names the items: "palace:
// get what: ".
func getByIDs[T any](ctx context.Context, db *DB, what, query string, ids []string,
	scan func(*sql.Rows, func(T)) error, id func(T) string) ([]T, error) {
	out, err := sqlrow.ByIDs(ctx, db, query, ids, scan, id)
	if err != nil {
		return nil, fmt.Errorf("palace: get %s: %w", what, err)
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
		rows, err := db.readQuery(ctx, tx, query, sqlrow.JSONList(kwindex.Keys(hits)))
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
