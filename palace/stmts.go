package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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
	c := &db.stmts
	c.mu.Lock()
	st, ok := c.m[q]
	if !ok {
		var err error
		if st, err = db.r.PrepareContext(ctx, q); err != nil {
			c.mu.Unlock()
			return nil, err
		}
		if c.m == nil {
			c.m = make(map[string]*sql.Stmt)
		}
		c.m[q] = st
	}
	c.mu.Unlock()
	return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
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

// jsonList is keys as one JSON array, for json_each.
func jsonList[T any](keys []T) string {
	b, _ := json.Marshal(keys) // strings and integers always marshal
	return string(b)
}
