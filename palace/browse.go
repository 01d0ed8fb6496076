package palace

import (
	"context"
	"database/sql"
	"fmt"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/sqlrow"
)

var _ engram.BrowseService = (*DB)(nil)

// ListTurns lists stored turns (see engram.TurnQuery): the timeline of
// q.Namespace newest first (by time, then seq) from the turn before the one
// whose seq is q.Before, or the turns of q.Session in arrival order from the
// turn after q.After, or the turns of q.IDs. At most q.Limit (default 50,
// at most 1000). A Before naming no stored turn lists nothing.
func (db *DB) ListTurns(ctx context.Context, q engram.TurnQuery) ([]engram.Turn, error) {
	if len(q.IDs) > 0 {
		turns, err := db.GetTurns(ctx, q.IDs)
		if err != nil {
			return nil, err
		}
		return engram.InNamespace(turns, q.Namespace), nil
	}
	limit := engram.ListLimit(q.Limit)
	var query string
	var args []any
	switch {
	case q.Session != "":
		query = `SELECT ` + turnColumns + ` FROM turns t WHERE t.session = ?1 AND (?2 = '' OR t.namespace = ?2) AND t.seq > ?3
			ORDER BY t.seq LIMIT ?4`
		args = []any{q.Session, q.Namespace, q.After, limit}
	case q.Before != 0:
		// Time, then seq, below the cursor turn's: a turn without a time
		// (NULL) sorts first, as oldest.
		query = `SELECT ` + turnColumns + ` FROM turns t, (SELECT coalesce(ts, -9223372036854775808) AS cts, seq AS cseq FROM turns WHERE seq = ?2) c
			WHERE (?1 = '' OR t.namespace = ?1)
			AND (coalesce(t.ts, -9223372036854775808) < c.cts OR (coalesce(t.ts, -9223372036854775808) = c.cts AND t.seq < c.cseq))
			ORDER BY t.ts DESC, t.seq DESC LIMIT ?3`
		args = []any{q.Namespace, q.Before, limit}
	default:
		query = `SELECT ` + turnColumns + ` FROM turns t WHERE (?1 = '' OR t.namespace = ?1)
			ORDER BY t.ts DESC, t.seq DESC LIMIT ?2`
		args = []any{q.Namespace, limit}
	}
	out := []engram.Turn{}
	err := db.View(ctx, func(tx *sql.Tx) error {
		return queryTurns(ctx, tx, query, args, func(t engram.Turn, _ float64) { out = append(out, t) })
	})
	if err != nil {
		return nil, fmt.Errorf("palace: list turns: %w", err)
	}
	return out, nil
}

// Entities lists the knowledge graph's entities whose name or an alias
// starts with q.Prefix (case folded like entity names), those with the most
// triples first, at most q.Limit (default 50, at most 1000).
func (db *DB) Entities(ctx context.Context, q engram.EntityQuery) ([]engram.EntityCount, error) {
	limit := engram.ListLimit(q.Limit)
	prefix := kgchain.NormName(q.Prefix)
	out := []engram.EntityCount{}
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT e.namespace, e.name,
				(SELECT json_group_array(a.alias) FROM kg_aliases a WHERE a.entity = e.n AND a.norm != e.norm),
				(SELECT count(*) FROM kg_triples t WHERE t.subject = e.n) + (SELECT count(*) FROM kg_triples t WHERE t.object = e.n) AS triples
			FROM kg_entities e
			WHERE (?1 = '' OR e.namespace = ?1)
			AND (?2 = '' OR e.norm >= ?2 AND e.norm < ?2 || x'f48fbfbf'
				OR EXISTS (SELECT 1 FROM kg_aliases a WHERE a.entity = e.n AND a.norm >= ?2 AND a.norm < ?2 || x'f48fbfbf'))
			ORDER BY triples DESC, e.name LIMIT ?3`, q.Namespace, prefix, limit)
		if err != nil {
			return err
		}
		return sqlrow.Scanner(func(e *engram.EntityCount) []any {
			return []any{&e.Namespace, &e.Name, sqlrow.JSON(&e.Aliases), &e.Triples}
		})(rows, func(e engram.EntityCount) {
			if len(e.Aliases) == 0 {
				e.Aliases = nil
			}
			out = append(out, e)
		})
	})
	if err != nil {
		return nil, fmt.Errorf("palace: entities: %w", err)
	}
	return out, nil
}
