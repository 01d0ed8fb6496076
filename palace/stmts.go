package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// stmtCache holds statements prepared once on the reader pool. SQLite
// compiles a statement each time database/sql runs query text, some tens
// of microseconds for a join and more for a long IN list: on the recall
// paths, which run a handful of lookups a query, that was a sixth of the
// CPU. A cached statement is compiled once per reader connection
// (tx.StmtContext reuses the copy of the transaction's connection). The
// lookups of a list of keys pass them as one JSON array (json_each), so
// that their text, and their plan, is the same for any number of keys.
type stmtCache struct {
	mu sync.Mutex
	m  map[string]*sql.Stmt
}

// readQuery runs q, with args, inside tx, a transaction of View, through
// the statement cache.
func (db *DB) readQuery(ctx context.Context, tx *sql.Tx, q string, args ...any) (*sql.Rows, error) {
	st, err := db.stmts.get(ctx, db.r, q)
	if err != nil {
		return nil, err
	}
	return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
}

// writeStmt is q prepared for tx, a transaction of Update: one of
// writeStatements, prepared when the palace opened (the writer is one
// connection, busy with tx, so nothing can be prepared on it meanwhile), or
// any other statement, prepared for tx alone.
func (db *DB) writeStmt(ctx context.Context, tx *sql.Tx, q string) (*sql.Stmt, error) {
	db.wstmts.mu.Lock()
	st, ok := db.wstmts.m[q]
	db.wstmts.mu.Unlock()
	if !ok {
		return tx.PrepareContext(ctx, q)
	}
	return tx.StmtContext(ctx, st), nil
}

// stmtFunc returns q prepared for the transaction at hand; the statement
// closes with the transaction.
type stmtFunc func(q string) (*sql.Stmt, error)

// txStmts prepares statements for tx alone, each once: a statement stays
// open until tx ends, so one stmtFunc serves a whole loop.
func txStmts(ctx context.Context, tx *sql.Tx) stmtFunc {
	prepared := map[string]*sql.Stmt{}
	return func(q string) (*sql.Stmt, error) {
		if st, ok := prepared[q]; ok {
			return st, nil
		}
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return nil, err
		}
		prepared[q] = st
		return st, nil
	}
}

// writerStmts takes the statements of writeStatements from the writer's
// cache (see writeStmt); tx is a transaction of Update.
func (db *DB) writerStmts(ctx context.Context, tx *sql.Tx) stmtFunc {
	return func(q string) (*sql.Stmt, error) { return db.writeStmt(ctx, tx, q) }
}

// prepareWrites prepares writeStatements on the writer; Open calls it.
func (db *DB) prepareWrites(ctx context.Context) error {
	for _, q := range writeStatements {
		if _, err := db.wstmts.get(ctx, db.w, q); err != nil {
			return fmt.Errorf("palace: prepare %q: %w", q, err)
		}
	}
	return nil
}

// get returns q prepared on pool, preparing it the first time.
func (c *stmtCache) get(ctx context.Context, pool *sql.DB, q string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[q]; ok {
		return st, nil
	}
	st, err := pool.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if c.m == nil {
		c.m = make(map[string]*sql.Stmt)
	}
	c.m[q] = st
	return st, nil
}

// close closes the cached statements.
func (c *stmtCache) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, st := range c.m {
		errs = append(errs, st.Close())
	}
	c.m = nil
	return errors.Join(errs...)
}
