package pgpalace

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/engram-dev/engram/internal/kwindex"
)

// Each server keeps a keyword index of each searched table in memory
// (internal/kwindex, ranked as package palace's FTS5 tables rank): the
// turns, the units (one index a kind), the scenes. An index follows its
// table's change numbers: a search first brings it up to the table's
// highest one (Source.State), reading the rows changed since (Changes);
// a count of deletions that moved makes it build itself again. Writes
// take their change numbers under the palace's write lock, held to commit
// (lockWrites), so that no row commits with a change number below one a
// server has read past.

// tableSource reads a table for its keyword index: column holds the
// change numbers, deletedKey (a palace_meta key) counts the deletions,
// and changes reads up to limit rows changed after a change number, in
// change order, with their text, inside tx.
type tableSource struct {
	db                        *DB
	table, column, deletedKey string
	changes                   func(ctx context.Context, tx pgx.Tx, after int64, limit int) ([]kwindex.Row, error)
}

// stateQuery reads the table's change number and, with deletedKey as $1,
// its deletion count.
func (s tableSource) stateQuery() string {
	return `SELECT (SELECT coalesce(max(` + s.column + `), 0) FROM ` + s.table + `),
		coalesce((SELECT value FROM palace_meta WHERE key = $1), 0)`
}

// State implements kwindex.Source.
func (s tableSource) State(ctx context.Context) (seq, deleted int64, err error) {
	err = s.db.pool.QueryRow(ctx, s.stateQuery(), s.deletedKey).Scan(&seq, &deleted)
	return seq, deleted, err
}

// Changes implements kwindex.Source: the rows and the state are read in
// one snapshot.
func (s tableSource) Changes(ctx context.Context, after int64, limit int) (rows []kwindex.Row, seq, deleted int64, err error) {
	err = pgx.BeginTxFunc(ctx, s.db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if err := tx.QueryRow(ctx, s.stateQuery(), s.deletedKey).Scan(&seq, &deleted); err != nil {
			return err
		}
		var err error
		rows, err = s.changes(ctx, tx, after, limit)
		return err
	})
	return rows, seq, deleted, err
}

// spanDoc sets doc's span from a row's start and end (nil: none).
func spanDoc(doc *kwindex.Doc, start, end *int64) {
	if start != nil {
		doc.TS, doc.HasTS = *start, true
	}
	if end != nil {
		doc.End, doc.HasEnd = *end, true
	}
}

// countDeletion adds one to the deletion count of key, which makes every
// server's keyword index of its table build itself again.
func countDeletion(ctx context.Context, tx pgx.Tx, key string) error {
	_, err := tx.Exec(ctx, `INSERT INTO palace_meta (key, value) VALUES ($1, 1)
		ON CONFLICT (key) DO UPDATE SET value = palace_meta.value + 1`, key)
	return err
}
