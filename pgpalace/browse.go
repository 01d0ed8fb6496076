package pgpalace

import (
	"context"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
)

// noTime is how a turn without a time sorts in a timeline: first, as
// the oldest, as SQLite sorts a NULL.
const noTime = `coalesce(t.ts, -9223372036854775808)`

// ListTurns lists stored turns (see engram.TurnQuery), as package
// palace's does: the timeline of q.Namespace newest first (by time, then
// seq) from the turn before the one whose seq is q.Before, or the turns of
// q.Session in arrival order from the turn after q.After, or the turns of
// q.IDs. At most q.Limit (default 50, at most 1000). A Before naming no
// stored turn lists nothing.
func (db *DB) ListTurns(ctx context.Context, q engram.TurnQuery) ([]engram.Turn, error) {
	if len(q.IDs) > 0 {
		turns, err := db.GetTurns(ctx, q.IDs)
		if err != nil {
			return nil, err
		}
		return engram.InNamespace(turns, q.Namespace), nil
	}
	limit := engram.ListLimit(q.Limit)
	var (
		query string
		args  []any
	)
	switch {
	case q.Session != "":
		query = `SELECT ` + turnColumns + ` FROM palace_turns t WHERE t.session = $1 AND ($2 = '' OR t.namespace = $2) AND t.seq > $3
			ORDER BY t.seq LIMIT $4`
		args = []any{q.Session, q.Namespace, q.After, limit}
	case q.Before != 0:
		query = `SELECT ` + turnColumns + ` FROM palace_turns t,
				(SELECT coalesce(ts, -9223372036854775808) AS cts, seq AS cseq FROM palace_turns WHERE seq = $2) c
			WHERE ($1 = '' OR t.namespace = $1) AND (` + noTime + `, t.seq) < (c.cts, c.cseq)
			ORDER BY ` + noTime + ` DESC, t.seq DESC LIMIT $3`
		args = []any{q.Namespace, q.Before, limit}
	default:
		query = `SELECT ` + turnColumns + ` FROM palace_turns t WHERE ($1 = '' OR t.namespace = $1)
			ORDER BY ` + noTime + ` DESC, t.seq DESC LIMIT $2`
		args = []any{q.Namespace, limit}
	}
	out, err := queryTurns(ctx, db.pool, query, args...)
	if err != nil {
		return nil, wrap("list turns", err)
	}
	if out == nil {
		out = []engram.Turn{}
	}
	return out, nil
}

// Entities lists the knowledge graph's entities whose name or an alias
// starts with q.Prefix (case folded like entity names), those with the
// most triples first, at most q.Limit (default 50, at most 1000).
func (db *DB) Entities(ctx context.Context, q engram.EntityQuery) ([]engram.EntityCount, error) {
	rows, err := db.pool.Query(ctx, `SELECT e.namespace, e.name,
			coalesce((SELECT array_agg(a.alias ORDER BY a.alias COLLATE "C") FROM palace_kg_aliases a WHERE a.entity = e.n AND a.norm <> e.norm), '{}'),
			(SELECT count(*) FROM palace_kg_triples t WHERE t.subject = e.n) + (SELECT count(*) FROM palace_kg_triples t WHERE t.object = e.n) AS triples
		FROM palace_kg_entities e
		WHERE ($1 = '' OR e.namespace = $1)
		AND ($2 = '' OR starts_with(e.norm, $2) OR EXISTS (SELECT 1 FROM palace_kg_aliases a WHERE a.entity = e.n AND starts_with(a.norm, $2)))
		ORDER BY triples DESC, e.name COLLATE "C" LIMIT $3`, q.Namespace, kgchain.NormName(q.Prefix), engram.ListLimit(q.Limit))
	if err != nil {
		return nil, wrap("entities", err)
	}
	out, err := pgx.AppendRows([]engram.EntityCount{}, rows, func(r pgx.CollectableRow) (engram.EntityCount, error) {
		var e engram.EntityCount
		err := r.Scan(&e.Namespace, &e.Name, &e.Aliases, &e.Triples)
		if len(e.Aliases) == 0 {
			e.Aliases = nil
		}
		return e, err
	})
	return out, wrap("entities", err)
}

var _ engram.BrowseService = (*DB)(nil)
