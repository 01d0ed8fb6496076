package pgpalace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/memrule"
	"github.com/engram-dev/engram/internal/redacttext"
)

// Corrections of memories and graph facts, as package palace keeps them
// (palace/corrections.go): each correction given is kept, and the last one
// of a memory or fact applies wherever extraction writes: a memory
// inserted takes it in the same transaction (memories.settle), and a
// chain of graph statements rebuilt leaves out the wrong ones and
// replaces the corrected objects (kgchain.Correct). So a correction wins
// over what extraction gives, whatever the order the two arrive in.

// ApplyCorrections records the corrections the palace does not hold yet
// (by id, in order) and applies each to the memories and graph facts it
// names. It returns how many were new. A correction whose memory or fact
// is not held (yet) is kept and applied when extraction writes it.
func (db *DB) ApplyCorrections(ctx context.Context, cs []engram.Correction) (int, error) {
	added := 0
	err := db.update(ctx, "apply corrections", func(tx pgx.Tx) error {
		added = 0
		if err := lock(ctx, tx, graphLockKey, memoryLockKey); err != nil {
			return err
		}
		w := &memories{ctx: ctx, tx: tx}
		if err := w.begin(); err != nil {
			return err
		}
		for _, c := range cs {
			ok, err := w.applyCorrection(c)
			if err != nil {
				return fmt.Errorf("correction %s: %w", c.ID, err)
			}
			if ok {
				added++
			}
		}
		return nil
	})
	return added, err
}

// applyCorrection records c, unless held already, and applies it.
func (w *memories) applyCorrection(c engram.Correction) (bool, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return false, err
	}
	key, alt, ok := memrule.CorrectionKeys(c)
	if !ok {
		return false, fmt.Errorf("target %q", c.Target)
	}
	tag, err := w.tx.Exec(w.ctx, `INSERT INTO palace_corrections (id, target, ns, key, alt, body) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO NOTHING`, c.ID, c.Target, c.Namespace, key, alt, string(body))
	if err != nil || tag.RowsAffected() == 0 {
		return false, err
	}
	if c.Target == engram.CorrectMemory {
		rows, err := w.tx.Query(w.ctx, `SELECT n FROM palace_memories WHERE id = $1
			UNION SELECT n FROM palace_memories WHERE $2 <> '' AND namespace = $3 AND type = $4 AND coalesce(extracted, text) = $5
			ORDER BY n`, c.Of, c.Original, c.Namespace, c.Type, []byte(c.Original))
		if err != nil {
			return false, err
		}
		ns, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			return false, err
		}
		for _, n := range ns {
			if _, err := w.settle(n); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	// A fact: rebuild every chain holding one of its statements.
	_, err = (graph{w.ctx, w.tx}).rebuildWhere(`namespace = $1 AND predicate = $2
		AND subject IN (SELECT n FROM palace_kg_entities WHERE norm = $3) AND object IN (SELECT n FROM palace_kg_entities WHERE norm = $4)`,
		c.Namespace, c.Predicate, kgchain.NormName(c.Subject), kgchain.NormName(c.Original))
	return err == nil, err
}

// lastCorrection returns the last correction of target matching key or
// alt; nil when there is none, or when the last one is a restore.
func lastCorrection(ctx context.Context, q pgxQuerier, target, key, alt string) (*engram.Correction, error) {
	var body string
	err := q.QueryRow(ctx, `SELECT body FROM palace_corrections WHERE target = $1 AND (key = $2 OR ($3 <> '' AND alt = $3))
		ORDER BY n DESC LIMIT 1`, target, key, alt).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var c engram.Correction
	if err := json.Unmarshal([]byte(body), &c); err != nil || c.Restore {
		return nil, err
	}
	return &c, nil
}

// hasCorrections reports whether the namespace ns has a correction.
func (g graph) hasCorrections(ns string) (bool, error) {
	var any bool
	err := g.tx.QueryRow(g.ctx, `SELECT EXISTS (SELECT 1 FROM palace_corrections WHERE ns = $1)`, ns).Scan(&any)
	return any, err
}

// correct applies the namespace's corrections to the statements of a
// chain being rebuilt (kgchain.Correct); the caller knows it has some.
func (g graph) correct(ns string, sts []kgchain.Statement) ([]kgchain.Statement, error) {
	return kgchain.Correct(ns, sts, kgchain.Corrector{
		Wrong: func(memory string) (bool, error) {
			var wrong bool
			err := g.tx.QueryRow(g.ctx, `SELECT wrong FROM palace_memories WHERE id = $1`, memory).Scan(&wrong)
			if errors.Is(err, pgx.ErrNoRows) {
				return false, nil
			}
			return wrong, err
		},
		Norm: func(n int64) (string, error) {
			var s string
			err := g.tx.QueryRow(g.ctx, `SELECT norm FROM palace_kg_entities WHERE n = $1`, n).Scan(&s)
			return s, err
		},
		Last: func(key string) (*engram.Correction, error) {
			return lastCorrection(g.ctx, g.tx, engram.CorrectFact, key, "")
		},
		Resolve: func(name string) (int64, error) { return g.resolve(ns, name, true) },
	})
}

// CorrectionIDs returns the ids of the corrections the palace holds, in
// the order it was given them.
func (db *DB) CorrectionIDs(ctx context.Context) ([]string, error) {
	rows, err := db.pool.Query(ctx, `SELECT id FROM palace_corrections ORDER BY n`)
	if err != nil {
		return nil, wrap("correction ids", err)
	}
	ids, err := pgx.AppendRows([]string(nil), rows, pgx.RowTo[string])
	return ids, wrap("correction ids", err)
}

// DropCorrections deletes the corrections with the given ids (the journal
// dropped them: what they corrected was forgotten). Unknown ids cost
// nothing. As for every row a forget deletes, the bytes stay in the
// database's pages until PostgreSQL vacuums them.
func (db *DB) DropCorrections(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	return db.update(ctx, "drop corrections", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM palace_corrections WHERE id = ANY($1)`, ids)
		return err
	})
}

// MemoryToCorrect returns the memory with the given id, with the text
// extraction gave it (Extracted, when a correction changed it) and whether
// it is marked wrong. ENOTFOUND for an unknown id.
func (db *DB) MemoryToCorrect(ctx context.Context, id string) (engram.Memory, error) {
	ms, err := db.GetMemories(ctx, []string{id})
	return memrule.Found(ms, id, err)
}

// FactToCorrect returns the triple with the given id as a correction must
// name it, its key and the memories behind it, as package palace's does;
// a fact marked wrong, which has no triple left, is named by its
// correction's id. ENOTFOUND for an unknown id.
func (db *DB) FactToCorrect(ctx context.Context, id string) (engram.Triple, string, []string, error) {
	var (
		tr   engram.Triple
		key  string
		mems []string
	)
	err := pgx.BeginTxFunc(ctx, db.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var corrected *string
		err := tx.QueryRow(ctx, `SELECT t.namespace, t.predicate, t.corrected,
			(SELECT name FROM palace_kg_entities WHERE n = t.subject), (SELECT name FROM palace_kg_entities WHERE n = t.object)
			FROM palace_kg_triples t WHERE t.id = $1`, id).Scan(&tr.Namespace, &tr.Predicate, &corrected, &tr.Subject, &tr.Object)
		if errors.Is(err, pgx.ErrNoRows) {
			var body string
			err := tx.QueryRow(ctx, `SELECT body FROM palace_corrections WHERE id = $1 AND target = $2`, id, engram.CorrectFact).Scan(&body)
			var c engram.Correction
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				err = memrule.ErrNoFact(id)
			case err == nil:
				err = json.Unmarshal([]byte(body), &c)
			}
			tr = memrule.WrongFact(id, c)
			key, mems = c.Key, c.Memories
			return err
		}
		if err != nil {
			return err
		}
		tr.ID = id
		if corrected != nil {
			// The fact as extracted: its correction holds the names.
			var body string
			if err := tx.QueryRow(ctx, `SELECT body FROM palace_corrections WHERE target = $1 AND key = $2 ORDER BY n DESC LIMIT 1`,
				engram.CorrectFact, *corrected).Scan(&body); err != nil {
				return err
			}
			var c engram.Correction
			if err := json.Unmarshal([]byte(body), &c); err != nil {
				return err
			}
			tr.Subject, tr.Object, key = c.Subject, c.Original, *corrected
		} else {
			key = kgchain.FactKey(tr.Namespace, tr.Subject, tr.Predicate, tr.Object)
		}
		rows, err := tx.Query(ctx, `SELECT DISTINCT s.memory FROM palace_kg_statements s
			JOIN palace_kg_entities a ON a.n = s.subject JOIN palace_kg_entities b ON b.n = s.object
			WHERE s.namespace = $1 AND a.norm = $2 AND s.predicate = $3 AND b.norm = $4 AND s.memory <> ''`,
			tr.Namespace, kgchain.NormName(tr.Subject), tr.Predicate, kgchain.NormName(tr.Object))
		if err != nil {
			return err
		}
		mems, err = pgx.CollectRows(rows, pgx.RowTo[string])
		slices.Sort(mems) // bytewise, as SQLite orders them
		return err
	})
	if _, ok := errors.AsType[*engram.Error](err); ok {
		return tr, key, mems, err // what the id names, as package palace's
	}
	if err != nil {
		return engram.Triple{}, "", nil, wrap("fact to correct", err)
	}
	return tr, key, mems, nil
}

// redactCorrections replaces the spans wherever the palace keeps a
// correction's words, as package palace's redaction does: the records
// and keys (a fact's key made again from its redacted names), the fact
// keys of the triples they made, and the text of the memories they
// corrected (settled again).
func (w *memories) redactCorrections(txt *redacttext.Text) error {
	type row struct {
		n                    int64
		id, target, key, alt string
		body                 string
	}
	rows, err := w.tx.Query(w.ctx, `SELECT n, id, target, key, alt, body FROM palace_corrections ORDER BY n`)
	if err != nil {
		return err
	}
	cs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var c row
		return c, r.Scan(&c.n, &c.id, &c.target, &c.key, &c.alt, &c.body)
	})
	if err != nil {
		return err
	}
	for _, c := range cs {
		key, alt, body, err := memrule.RedactRecord(c.target, c.key, c.alt, c.body, txt)
		if err != nil {
			return fmt.Errorf("redact correction %s: %w", c.id, err)
		}
		if key == c.key && alt == c.alt && body == c.body {
			continue
		}
		if _, err := w.tx.Exec(w.ctx, `UPDATE palace_corrections SET key = $1, alt = $2, body = $3 WHERE n = $4`, key, alt, body, c.n); err != nil {
			return err
		}
		if key != c.key && c.target == engram.CorrectFact {
			if _, err := w.tx.Exec(w.ctx, `UPDATE palace_kg_triples SET corrected = $1 WHERE corrected = $2`, key, c.key); err != nil {
				return err
			}
		}
		if c.target == engram.CorrectMemory {
			// A memory that holds the correction's text takes it again.
			rows, err := w.tx.Query(w.ctx, `SELECT n FROM palace_memories WHERE corrected = $1 ORDER BY n`, c.id)
			if err != nil {
				return err
			}
			ns, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return err
			}
			for _, n := range ns {
				if _, err := w.settle(n); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
