package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/memrule"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// Corrections of memories and graph facts. The palace keeps each correction
// it was given (table corrections) and applies the last one of each memory
// or fact wherever extraction writes: a memory inserted again (a rebuild, a
// re-extraction) takes its correction in the same transaction, and a chain
// of graph statements rebuilt leaves out the wrong ones and replaces the
// corrected objects. So a correction wins over what extraction produces,
// whatever the order the two arrive in.

// FactToCorrect returns the triple with the given id as a correction must
// name it: the names and predicate of the statements it stands on (for a
// triple an earlier correction made, those of the statements it replaced),
// and the memories behind it. A fact marked wrong, which has no triple
// left, is named by its correction's id. ENOTFOUND for an unknown id.
func (db *DB) FactToCorrect(ctx context.Context, id string) (engram.Triple, string, []string, error) {
	var tr engram.Triple
	var key string
	var mems []string
	err := db.View(ctx, func(tx *sql.Tx) error {
		var corrected sql.NullString
		var c engram.Correction
		found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT t.namespace, t.predicate, t.corrected,
			(SELECT name FROM kg_entities WHERE n = t.subject), (SELECT name FROM kg_entities WHERE n = t.object)
			FROM kg_triples t WHERE t.id = ?`, id), &tr.Namespace, &tr.Predicate, &corrected, &tr.Subject, &tr.Object)
		if err != nil {
			return err
		}
		if !found {
			// A fact marked wrong has no triple left: it is named by the
			// id of its correction.
			found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT body FROM corrections WHERE id = ? AND target = ?`, id, engram.CorrectFact),
				sqlrow.JSON(&c))
			if err == nil && !found {
				err = memrule.ErrNoFact(id)
			}
			tr = memrule.WrongFact(id, c)
			key, mems = c.Key, c.Memories
			return err
		}
		tr.ID = id
		if corrected.Valid {
			// The fact as extracted: its correction holds the names.
			if err := tx.QueryRowContext(ctx, `SELECT body FROM corrections WHERE target = ? AND key = ? ORDER BY n DESC LIMIT 1`,
				engram.CorrectFact, corrected.String).Scan(sqlrow.JSON(&c)); err != nil {
				return err
			}
			tr.Subject, tr.Object, key = c.Subject, c.Original, corrected.String
		} else {
			key = kgchain.FactKey(tr.Namespace, tr.Subject, tr.Predicate, tr.Object)
		}
		mems, err = sqlrow.Strings(ctx, tx, `SELECT DISTINCT s.memory FROM kg_statements s
			JOIN kg_entities a ON a.n = s.subject JOIN kg_entities b ON b.n = s.object
			WHERE s.namespace = ? AND a.norm = ? AND s.predicate = ? AND b.norm = ? AND s.memory <> '' ORDER BY s.memory`,
			tr.Namespace, kgchain.NormName(tr.Subject), tr.Predicate, kgchain.NormName(tr.Object))
		return err
	})
	return tr, key, mems, err
}

// MemoryToCorrect returns the memory with the given id, with the text
// extraction gave it (Extracted, when a correction changed it) and whether
// it is marked wrong. ENOTFOUND for an unknown id.
func (db *DB) MemoryToCorrect(ctx context.Context, id string) (engram.Memory, error) {
	ms, err := db.GetMemories(ctx, []string{id})
	return memrule.Found(ms, id, err)
}

// ApplyCorrections records the corrections the palace does not hold yet
// (by id, in order) and applies each to the memories and graph facts it
// names. It returns how many were new. A correction whose memory or fact
// the palace does not hold (yet) is kept and applied when extraction
// writes it.
func (db *DB) ApplyCorrections(ctx context.Context, cs []engram.Correction) (int, error) {
	added := 0
	err := db.Update(ctx, func(tx *sql.Tx) error {
		added = 0
		for _, c := range cs {
			ok, err := applyCorrection(ctx, tx, c)
			if err != nil {
				return fmt.Errorf("correction %s: %w", c.ID, err)
			}
			if ok {
				added++
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("palace: apply corrections: %w", err)
	}
	return added, nil
}

func applyCorrection(ctx context.Context, tx *sql.Tx, c engram.Correction) (bool, error) {
	body, err := json.Marshal(c)
	if err != nil {
		return false, err
	}
	key, alt, ok := memrule.CorrectionKeys(c)
	if !ok {
		return false, fmt.Errorf("target %q", c.Target)
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO corrections (id, target, ns, key, alt, body) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`, c.ID, c.Target, c.Namespace, key, alt, string(body))
	if err != nil {
		return false, err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return false, err
	}
	if c.Target == engram.CorrectMemory {
		rows, err := tx.QueryContext(ctx, `SELECT n FROM memories WHERE id = ?
			UNION SELECT n FROM memories WHERE ? <> '' AND namespace = ? AND type = ? AND coalesce(extracted, text) = ?`,
			c.Of, c.Original, c.Namespace, c.Type, c.Original)
		if err != nil {
			return false, err
		}
		ns, err := sqlrow.Ints(rows)
		if err != nil {
			return false, err
		}
		seq, err := nextSeq(ctx, tx, "memories")
		if err != nil {
			return false, err
		}
		for _, n := range ns {
			if _, err := settleMemory(ctx, tx, n, &seq); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	// A fact: rebuild every chain holding one of its statements.
	_, err = rebuildChainsWhere(ctx, tx, `namespace = ? AND predicate = ?
		AND subject IN (SELECT n FROM kg_entities WHERE norm = ?) AND object IN (SELECT n FROM kg_entities WHERE norm = ?)`,
		c.Namespace, c.Predicate, kgchain.NormName(c.Subject), kgchain.NormName(c.Original))
	return err == nil, err
}

// lastCorrection returns the last correction of target matching key or
// alt; nil when there is none, or when the last one is a restore.
func lastCorrection(ctx context.Context, tx *sql.Tx, target, key, alt string) (*engram.Correction, error) {
	var c engram.Correction
	found, err := sqlrow.One(tx.QueryRowContext(ctx, `SELECT body FROM corrections WHERE target = ?1 AND (key = ?2 OR (?3 <> '' AND alt = ?3))
		ORDER BY n DESC LIMIT 1`, target, key, alt), sqlrow.JSON(&c))
	if err != nil || !found || c.Restore {
		return nil, err
	}
	return &c, nil
}

// settleMemory gives memory row n the state its last correction says
// (none: as extracted), re-indexing its text and rebuilding the graph
// chains of its statements when that changes. It reports whether the row
// changed.
func settleMemory(ctx context.Context, tx *sql.Tx, n int64, seq *int64) (bool, error) {
	var (
		m                    engram.Memory
		wrong                bool
		corrected, extracted sql.NullString
	)
	if err := tx.QueryRowContext(ctx, `SELECT id, namespace, type, text, rationale, entities, wrong, corrected, extracted
		FROM memories WHERE n = ?`, n).Scan(&m.ID, &m.Namespace, &m.Type, &m.Text, &m.Rationale, sqlrow.JSON(&m.Entities), &wrong, &corrected, &extracted); err != nil {
		return false, err
	}
	orig := m.Text
	if extracted.Valid {
		orig = extracted.String
	}
	c, err := lastCorrection(ctx, tx, engram.CorrectMemory, m.ID, memrule.Alt(m.Namespace, m.Type, orig))
	if err != nil {
		return false, err
	}
	want := memrule.Settle(orig, c)
	if want.Text == m.Text && want.Wrong == wrong && corrected.String == want.Corrected {
		return false, nil
	}
	var wantCorrected, wantExtracted any
	if want.Corrected != "" {
		wantCorrected, wantExtracted = want.Corrected, want.Extracted
	}
	wantText, wantWrong := want.Text, want.Wrong
	*seq++
	if _, err := tx.ExecContext(ctx, `UPDATE memories SET text = ?, wrong = ?, corrected = ?, extracted = ?, seq = ? WHERE n = ?`,
		wantText, wantWrong, wantCorrected, wantExtracted, *seq, n); err != nil {
		return false, err
	}
	if wantText != m.Text {
		m.Text = wantText
		if err := reindexMemory(ctx, tx, n, m); err != nil {
			return false, err
		}
	}
	if wantWrong != wrong {
		if _, err := rebuildChainsWhere(ctx, tx, `memory = ?`, m.ID); err != nil {
			return false, err
		}
	}
	return true, nil
}

// hasCorrections reports whether the namespace ns has a correction.
func hasCorrections(ctx context.Context, tx *sql.Tx, ns string) (bool, error) {
	var any bool
	err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM corrections WHERE ns = ?)`, ns).Scan(&any)
	return any, err
}

// correctStatements applies the namespace's corrections to the statements
// of a chain being rebuilt: statements of a memory marked wrong, or of a
// fact marked wrong, are left out; a replaced object replaces theirs. The
// caller knows the namespace has corrections (hasCorrections).
func correctStatements(ctx context.Context, tx *sql.Tx, ns string, sts []kgchain.Statement) ([]kgchain.Statement, error) {
	return kgchain.Correct(ns, sts, kgchain.Corrector{
		Wrong: func(memory string) (bool, error) {
			var wrong bool
			err := tx.QueryRowContext(ctx, `SELECT wrong FROM memories WHERE id = ?`, memory).Scan(&wrong)
			if errors.Is(err, sql.ErrNoRows) {
				return false, nil
			}
			return wrong, err
		},
		Norm: func(n int64) (string, error) {
			var s string
			err := tx.QueryRowContext(ctx, `SELECT norm FROM kg_entities WHERE n = ?`, n).Scan(&s)
			return s, err
		},
		Last: func(key string) (*engram.Correction, error) {
			return lastCorrection(ctx, tx, engram.CorrectFact, key, "")
		},
		Resolve: func(name string) (int64, error) { return resolveEntity(ctx, tx, ns, name, true) },
	})
}

// CorrectionIDs returns the ids of the corrections the palace holds, in
// the order it was given them.
func (db *DB) CorrectionIDs(ctx context.Context) ([]string, error) {
	var ids []string
	err := db.View(ctx, func(tx *sql.Tx) error {
		var err error
		ids, err = sqlrow.Strings(ctx, tx, `SELECT id FROM corrections ORDER BY n`)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("palace: correction ids: %w", err)
	}
	return ids, nil
}

// DropCorrections deletes the corrections with the given ids (the journal
// dropped them: what they corrected was forgotten), then leaves no trace
// of their text in the files, as a forget does. Unknown ids cost nothing.
func (db *DB) DropCorrections(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	err := db.Update(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM corrections WHERE id IN (SELECT value FROM json_each(?))`, sqlrow.JSONList(ids))
		return err
	})
	if err == nil {
		err = db.scrub(ctx)
	}
	if err != nil {
		return fmt.Errorf("palace: drop corrections: %w", err)
	}
	return nil
}
