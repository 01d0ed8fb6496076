package palace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/textutil"
	"github.com/engram-dev/engram/internal/vecrow"
)

// Checks for `engram doctor` and repairs for `engram reindex vectors`: they
// read (and, for the repairs, write) the palace the way the rest of the
// package does, so that a check never disagrees with what a query would see.

// IntegrityCheck runs SQLite's PRAGMA integrity_check, which since SQLite
// 3.44 also runs the FTS5 'integrity-check' of every full-text table, and
// returns up to max of the problems it lists; none means the database is
// sound. It reads every page of the database: seconds for a large palace.
// The error is for a failure to run the check, not for what it found.
//
// The check runs in a read transaction, beside the writer. FTS5's part of
// it reports corruption that is not there ("corruption found reading blob")
// when a write commits during the check (measured: a third of the checks
// of a palace taking single-turn writes), so a report naming an FTS5 table
// is confirmed by a second check under the write lock, whose answer
// stands: a false alarm is gone, real damage is there again.
func (db *DB) IntegrityCheck(ctx context.Context, max int) ([]string, error) {
	if max < 1 {
		max = 1
	}
	problems, err := db.integrityCheck(ctx, max, db.View)
	if err != nil || !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, "fts5:") }) {
		return problems, err
	}
	return db.integrityCheck(ctx, max, db.Update)
}

func (db *DB) integrityCheck(ctx context.Context, max int, run func(context.Context, func(*sql.Tx) error) error) ([]string, error) {
	var problems []string
	err := run(ctx, func(tx *sql.Tx) error {
		found, err := sqlrow.Strings(ctx, tx, fmt.Sprintf(`PRAGMA integrity_check(%d)`, max))
		for _, s := range found {
			if s != "ok" {
				problems = append(problems, s)
			}
		}
		return err
	})
	if err != nil {
		// A database too damaged to read reports here rather than in rows:
		// that is a finding too.
		var e *engram.Error
		if errors.As(err, &e) && e.Code == engram.EUNAVAILABLE {
			return nil, err
		}
		return []string{err.Error()}, nil
	}
	return problems, nil
}

// TurnCounts are the sizes of the turn table and of the full-text indexes
// every turn is written to, read in one snapshot. They match in a sound
// palace.
type TurnCounts struct {
	IndexedSeq int64 // the indexer's watermark
	Turns      int64 // rows of turns
	Keyword    int64 // rows of turns_fts
	Trigram    int64 // rows of turns_trigram
	// TrigramPending counts the turns past the substring index's
	// watermark, whose rows follow in a transaction after the one that
	// stored them (IndexSecondary): Trigram + TrigramPending = Turns.
	TrigramPending int64
}

// CountTurnIndexes returns the TurnCounts of the palace.
func (db *DB) CountTurnIndexes(ctx context.Context) (TurnCounts, error) {
	var c TurnCounts
	err := db.View(ctx, func(tx *sql.Tx) error {
		var err error
		if c.IndexedSeq, err = metaIn(ctx, tx, keyIndexedSeq); err != nil {
			return err
		}
		for _, q := range []struct {
			dst   *int64
			table string
		}{{&c.Turns, "turns"}, {&c.Keyword, "turns_fts"}, {&c.Trigram, "turns_trigram"}} {
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM `+q.table).Scan(q.dst); err != nil {
				return fmt.Errorf("%s: %w", q.table, err)
			}
		}
		err = tx.QueryRowContext(ctx, `SELECT count(*) FROM turns
			WHERE seq > coalesce((SELECT value FROM palace_meta WHERE key = ?), 0)`, keyTrigramSeq).Scan(&c.TrigramPending)
		if err != nil {
			return fmt.Errorf("turns past %s: %w", keyTrigramSeq, err)
		}
		return nil
	})
	if err != nil {
		return c, fmt.Errorf("palace: count turn indexes: %w", err)
	}
	return c, nil
}

// ResetWorkerSeqs deletes the watermark of every worker whose name starts
// with prefix, so that each starts over from the beginning of its source
// (WorkerSeq never moves back otherwise). It returns how many it deleted.
// The layer-vector workers ("vec:MODEL:") and the vault markers
// ("vault-model:MODEL:") are reset this way to embed their rows again.
func (db *DB) ResetWorkerSeqs(ctx context.Context, prefix string) (int64, error) {
	if prefix == "" {
		return 0, engram.Errorf(engram.EINVALID, "palace: reset worker watermarks: empty prefix")
	}
	key := workerKey(prefix)
	var n int64
	err := db.Update(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM palace_meta WHERE substr(key, 1, ?) = ?`, len(key), key)
		if err != nil {
			return err
		}
		n, err = res.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("palace: reset worker watermarks %s*: %w", prefix, err)
	}
	return n, nil
}

// Check reads every stored vector of the model and checks that it is
// usable, that the attached in-memory index (if loaded) holds exactly the
// stored rows with the same values, and that every turn of the palace up to
// throughSeq has a vector. Writers of the model wait while it runs (about a
// second per 100,000 vectors of 512 dimensions), so that the matrix and the
// SQLite snapshot it compares are of the same moment.
//
// Errors: EUNAVAILABLE once the palace is closed; ENOTFOUND once the model
// is dropped.
func (v *VectorStore) Check(ctx context.Context, throughSeq int64) (engram.VectorCheck, error) {
	c := engram.VectorCheck{Model: v.model, Dim: v.dim, ByKind: map[string]int{}}
	if err := v.Usable(); err != nil {
		return c, err
	}
	v.wmu.Lock()
	defer v.wmu.Unlock()
	tally := vecrow.NewTally(&c, v.follower)
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		err := v.modelRow(ctx, tx, `state, embedded_seq, last_seq, synced_seq`, &c.State, &c.EmbeddedSeq, &c.LastChange, &c.SyncedSeq)
		if err != nil {
			return err
		}
		if err := v.eachStored(ctx, tx, tally.Add); err != nil {
			return err
		}
		missing, err := tx.QueryContext(ctx, `SELECT t.id FROM turns t
			WHERE t.seq <= ? AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ? AND v.id = t.id)
			ORDER BY t.seq`, throughSeq, v.model)
		if err != nil {
			return err
		}
		err = sqlrow.Each(missing, func() error {
			var id string
			if err := missing.Scan(&id); err != nil {
				return err
			}
			tally.Missing(id)
			return nil
		})
		if err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT count(*) FROM vectors v
			WHERE v.model = ? AND v.kind = ? AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.id = v.id)`,
			v.model, engram.KindTurn).Scan(&c.Orphans)
	})
	if err != nil {
		return c, vecErr("check vectors of "+v.model, err)
	}
	tally.Done()
	return c, nil
}

// eachStored reads every stored vector of the model and calls fn with its
// id, kind and what makes it unusable (Reason "" when nothing does), and
// its stored bytes, valid until fn returns.
func (v *VectorStore) eachStored(ctx context.Context, tx *sql.Tx, fn func(b engram.BadVector, raw []byte)) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, kind, vec FROM vectors WHERE model = ?`, v.model)
	if err != nil {
		return err
	}
	unit := make([]float32, v.dim)
	return sqlrow.Each(rows, func() error {
		var (
			b   engram.BadVector
			raw sql.RawBytes
		)
		if err := rows.Scan(&b.ID, &b.Kind, &raw); err != nil {
			return err
		}
		b.Reason = vecrow.Bad(raw, unit)
		fn(b, raw)
		return nil
	})
}

// DropBad deletes the model's unusable vectors (see engram.BadVector) and returns
// them; their texts need embedding again. The rows are read and deleted in
// one transaction, and removed from the attached index, if any.
//
// Errors: EUNAVAILABLE once the palace is closed; ENOTFOUND once the model
// is dropped.
func (v *VectorStore) DropBad(ctx context.Context) ([]engram.BadVector, error) {
	if err := v.Usable(); err != nil {
		return nil, err
	}
	v.wmu.Lock()
	defer v.wmu.Unlock()
	var bad []engram.BadVector
	err := v.db.Update(ctx, func(tx *sql.Tx) error {
		bad = bad[:0]
		err := v.eachStored(ctx, tx, func(b engram.BadVector, _ []byte) {
			if b.Reason != "" {
				bad = append(bad, b)
			}
		})
		if err != nil {
			return err
		}
		for _, b := range bad {
			if _, err := tx.ExecContext(ctx, `DELETE FROM vectors WHERE model = ? AND id = ?`, v.model, b.ID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, vecErr("drop bad vectors of "+v.model, err)
	}
	if len(bad) > 0 {
		ids := make([]string, len(bad))
		for i, b := range bad {
			ids[i] = b.ID
		}
		v.tell(nil, ids)
	}
	return bad, nil
}

// TurnsWithoutVector returns up to limit turns of the palace, with seq up
// to throughSeq and above afterSeq, in seq order, that have no vector of the
// model: what a lost or dropped row leaves behind the watermark, where the
// pipeline never looks again. Errors: EINVALID for limit < 1.
func (v *VectorStore) TurnsWithoutVector(ctx context.Context, afterSeq, throughSeq int64, limit int) ([]engram.Turn, error) {
	if err := v.Usable(); err != nil {
		return nil, err
	}
	if limit < 1 {
		return nil, engram.Errorf(engram.EINVALID, "palace: limit must be at least 1, got %d", limit)
	}
	var out []engram.Turn
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		q := `SELECT ` + turnColumns + ` FROM turns t
			WHERE t.seq > ? AND t.seq <= ? AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ? AND v.id = t.id)
			ORDER BY t.seq LIMIT ?`
		return queryTurns(ctx, tx, q, []any{afterSeq, throughSeq, v.model, limit}, func(t engram.Turn, _ float64) {
			out = append(out, t)
		})
	})
	if err != nil {
		return nil, vecErr("turns without a vector of "+v.model, err)
	}
	return out, nil
}

// CountByKind returns how many vectors the model holds of each kind, from
// SQLite.
func (v *VectorStore) CountByKind(ctx context.Context) (map[string]int, error) {
	if err := v.Usable(); err != nil {
		return nil, err
	}
	out := map[string]int{}
	err := v.db.View(ctx, func(tx *sql.Tx) error {
		return countBy(ctx, tx, `SELECT kind, count(*) FROM vectors WHERE model = ? GROUP BY kind`,
			func(kind string, n int64) { out[kind] = int(n) }, v.model)
	})
	if err != nil {
		return nil, vecErr("count vectors of "+v.model, err)
	}
	return out, nil
}

// The names of engram doctor's checks of the palace file, and the fix of
// what they find.
const (
	CheckSQLite   = "sqlite"
	CheckNearKeys = "near-keys"
	fixRebuild    = "engram rebuild"
	// maxProblems bounds the lines of integrity_check kept.
	maxProblems = 10
)

// FileCheck runs IntegrityCheck, which covers the FTS5 indexes too, and
// says what it found as engram doctor's check of the file.
func (db *DB) FileCheck(ctx context.Context) engram.DoctorCheck {
	c := engram.DoctorCheck{Name: CheckSQLite, Status: engram.CheckFail}
	name := filepath.Base(db.path)
	problems, err := db.IntegrityCheck(ctx, maxProblems)
	switch {
	case err != nil:
		c.Finding = "integrity_check could not run: " + engram.ErrorText(err)
	case len(problems) > 0:
		c.Finding, c.Fix = fmt.Sprintf("%s is damaged: %s", name, strings.Join(problems[:min(3, len(problems))], "; ")), fixRebuild
	default:
		size := ""
		if fi, err := os.Stat(db.path); err == nil {
			size = fmt.Sprintf(" (%.1f MB)", float64(fi.Size())/1e6)
		}
		c.Status, c.Finding = engram.CheckOK, name+size+" passes integrity_check, full-text indexes included"
	}
	return c
}

// NearKeysCheck checks that the memories' near-duplicate keys are the ones
// their rows make (NearKeysDrift). A drifted key only costs a merge that
// does not happen, so it warns; a rebuild makes the keys again.
func (db *DB) NearKeysCheck(ctx context.Context) engram.DoctorCheck {
	c := engram.DoctorCheck{Name: CheckNearKeys, Status: engram.CheckFail, Fix: fixRebuild}
	drift, err := db.NearKeysDrift(ctx)
	switch {
	case err != nil:
		c.Finding = "the memories' near-duplicate keys could not be read: " + engram.ErrorText(err)
	case drift > 0:
		c.Status, c.Finding = engram.CheckWarn, fmt.Sprintf("%d %s of the memories' near-duplicate keys differ from the memories "+
			"(a near-duplicate memory may be stored beside the one it repeats)", drift, textutil.Noun(drift, "row", "rows"))
	default:
		c.Status, c.Finding, c.Fix = engram.CheckOK, "the memories' near-duplicate keys match the memories", ""
	}
	return c
}

// NearKeysDrift returns how many rows of memory_nearkeys differ from the
// keys the memories' rows make (package neardup, through the SQL functions
// of package migrations): rows of memories deleted or changed behind the
// palace's back, or keys missing. A drifted key costs a near-duplicate
// merge that does not happen, nothing else; `engram rebuild` makes them
// again. It reads every memory: a doctor's check, not a request's.
func (db *DB) NearKeysDrift(ctx context.Context) (int, error) {
	const want = `SELECT engram_near_group(m.namespace, m.type, m.subject), k.value, engram_near_size(m.dedup_key), m.n
		FROM memories m, json_each(engram_near_keys(m.dedup_key)) k`
	var drift int
	err := db.View(ctx, func(tx *sql.Tx) error {
		return tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM (SELECT grp, tok, size, n FROM memory_nearkeys EXCEPT `+want+`))
			+ (SELECT count(*) FROM (`+want+` EXCEPT SELECT grp, tok, size, n FROM memory_nearkeys))`).Scan(&drift)
	})
	if err != nil {
		return 0, fmt.Errorf("palace: near-duplicate keys: %w", err)
	}
	return drift, nil
}
