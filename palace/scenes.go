package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// OpenScenes returns the drafts of the open scenes of the given sessions;
// sessions without one are absent from the map.
func (db *DB) OpenScenes(ctx context.Context, keys []engram.SessionKey) (map[engram.SessionKey][]byte, error) {
	out := make(map[engram.SessionKey][]byte)
	err := db.View(ctx, func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `SELECT draft FROM scenes WHERE namespace = ? AND session = ? AND draft IS NOT NULL ORDER BY n DESC LIMIT 1`)
		if err != nil {
			return err
		}
		defer st.Close()
		for _, k := range keys {
			var d string
			if found, err := sqlrow.One(st.QueryRowContext(ctx, k.Namespace, k.Session), &d); err != nil {
				return err
			} else if found {
				out[k] = []byte(d)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("palace: open scenes: %w", err)
	}
	return out, nil
}

// PutScenes upserts scenes by ID (each write replaces the scene's row and
// its keyword entry and takes the next change number) and advances the
// worker's watermark to throughSeq, in one transaction.
//
// Errors: EINVALID naming the field for a scene without id, namespace or
// turns.
func (db *DB) PutScenes(ctx context.Context, worker string, scenes []engram.SceneWrite, throughSeq int64) error {
	rows, err := prepareScenes(scenes)
	if err != nil {
		return err
	}
	err = db.Update(ctx, func(tx *sql.Tx) error {
		texts, err := insertScenes(ctx, tx, rows)
		if err != nil {
			return err
		}
		if err := setWorkerSeq(ctx, tx, worker, throughSeq); err != nil {
			return err
		}
		return texts.index(ctx, tx)
	})
	if err != nil {
		return fmt.Errorf("palace: put scenes: %w", err)
	}
	return nil
}

// preparedScene is a scene write checked and encoded for its rows.
type preparedScene struct {
	w                  engram.SceneWrite
	text, parts, turns string
	start, end         any
}

// prepareScenes checks scenes and encodes them for insertScenes.
func prepareScenes(scenes []engram.SceneWrite) ([]preparedScene, error) {
	rows := make([]preparedScene, len(scenes))
	for i, w := range scenes {
		field := "scenes[" + strconv.Itoa(i) + "]."
		s := w.Scene
		if err := s.Check(field); err != nil {
			return nil, err
		}
		p := preparedScene{w: w}
		var err error
		if p.start, err = nanos(s.Start); err != nil {
			return nil, engram.FieldError(field+"start", "%v", err)
		}
		if p.end, err = nanos(s.End); err != nil {
			return nil, engram.FieldError(field+"end", "%v", err)
		}
		if p.text, err = kwindex.IndexText(s.SearchText()); err != nil {
			return nil, err
		}
		parts, _ := json.Marshal(nonNil(s.Participants))
		turns, _ := json.Marshal(s.Turns)
		p.parts, p.turns = string(parts), string(turns)
		rows[i] = p
	}
	return rows, nil
}

// sceneTexts are the full-text rows of scenes inserted, to write after
// every other statement of the transaction, as in PutTurns.
type sceneTexts []sceneText

type sceneText struct {
	scene, unit int64 // the rowids of the scene and of its unit
	text        string
}

func (ts sceneTexts) index(ctx context.Context, tx *sql.Tx) error {
	st := txStmts(ctx, tx)
	for _, t := range ts {
		if err := reindexText(ctx, tx, "scenes_fts", t.scene, t.text); err != nil {
			return err
		}
		if err := indexUnit(ctx, st, engram.UnitScene, t.unit); err != nil {
			return err
		}
	}
	return nil
}

// insertScenes inserts or replaces the scenes of rows, each with its
// retrieval unit, under new change numbers, and returns their full-text
// rows to index.
func insertScenes(ctx context.Context, tx *sql.Tx, rows []preparedScene) (sceneTexts, error) {
	seq, err := nextSeq(ctx, tx, "scenes")
	if err != nil {
		return nil, err
	}
	// Units take change numbers of their own table; the offset keeps
	// them increasing with the scenes' in this transaction.
	useq, err := nextSeq(ctx, tx, "units")
	if err != nil {
		return nil, err
	}
	unitSeq := useq - seq
	texts := make(sceneTexts, 0, len(rows))
	for _, p := range rows {
		s := p.w.Scene
		var draft any
		if p.w.Draft != nil {
			draft = string(p.w.Draft)
		}
		seq++
		var n int64
		err := tx.QueryRowContext(ctx, `INSERT INTO scenes
			(id, namespace, session, title, summary, start_ts, end_ts, participants, turns, draft, seq)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (id) DO UPDATE SET title = excluded.title, summary = excluded.summary,
				start_ts = excluded.start_ts, end_ts = excluded.end_ts, participants = excluded.participants,
				turns = excluded.turns, draft = excluded.draft, seq = excluded.seq
			RETURNING n`,
			s.ID, s.Namespace, s.Session, s.Title, s.Summary, p.start, p.end, p.parts, p.turns, draft, seq).Scan(&n)
		if err != nil {
			return nil, fmt.Errorf("scene %s: %w", s.ID, err)
		}
		u, err := putSceneUnit(ctx, tx, s, seq+unitSeq)
		if err != nil {
			return nil, err
		}
		texts = append(texts, sceneText{n, u, p.text})
	}
	return texts, nil
}

const sceneColumns = `s.id, s.namespace, s.session, s.title, s.summary, s.start_ts, s.end_ts, s.participants, s.turns, s.seq`

func scanScenes(rows *sql.Rows, fn func(engram.Scene, float64)) error {
	return sqlrow.EachRanked(rows, func(r *sqlrow.Ranked) error {
		var s engram.Scene
		rank, err := r.Scan(&s.ID, &s.Namespace, &s.Session, &s.Title, &s.Summary, sqlrow.Time(&s.Start), sqlrow.Time(&s.End),
			sqlrow.JSON(&s.Participants), sqlrow.JSON(&s.Turns), &s.Seq)
		if err != nil {
			return err
		}
		fn(s, rank)
		return nil
	})
}

// readScenes passes each scene of rows to add.
func readScenes(rows *sql.Rows, add func(engram.Scene)) error {
	return scanScenes(rows, func(s engram.Scene, _ float64) { add(s) })
}

// Scenes lists the scenes matching q: newest first, or best first for a
// keyword search (q.Text).
func (db *DB) Scenes(ctx context.Context, q engram.SceneQuery) ([]engram.Scene, error) {
	var l listQuery
	l.addText("s.namespace = ?", q.Namespace)
	l.addText("s.session = ?", q.Session)
	l.addTime("s.end_ts >= ?", q.From)
	l.addTime("s.start_ts < ?", q.To)
	query, args, ok, err := l.build(sceneColumns, "scenes", "s", q.Text, "s.start_ts DESC, s.n DESC", searchLimit(q.Limit))
	if err != nil || !ok {
		return nil, err
	}
	return viewList(ctx, db, "scenes", readScenes, query, args...)
}

// SearchScenes ranks the scenes whose title or summary hold a word of q.Text
// by BM25 (higher is better).
func (db *DB) SearchScenes(ctx context.Context, q engram.TextQuery) ([]engram.SceneHit, error) {
	return searchLayer(q, "search scenes", func(terms []term, limit int) ([]engram.SceneHit, bool, error) {
		return db.searchScenesFromMemory(ctx, q, terms, limit)
	}, func(terms []term, limit int) ([]engram.SceneHit, error) {
		return viewList(ctx, db, "search scenes", func(rows *sql.Rows, add func(engram.SceneHit)) error {
			return scanScenes(rows, func(s engram.Scene, rank float64) { add(engram.SceneHit{Scene: s, Score: -rank}) })
		}, `SELECT `+sceneColumns+`, f.rank FROM scenes_fts f JOIN scenes s ON s.n = f.rowid
			WHERE scenes_fts MATCH ?1 AND (?2 = '' OR s.namespace = ?2)
			AND (?4 = 0 OR s.end_ts >= ?4) AND (?5 = 0 OR s.start_ts < ?5)
			ORDER BY f.rank LIMIT ?3`, matchExpr(terms), q.Namespace, limit, nanosOrZero(q.From), nanosOrZero(q.To))
	})
}

// ScenesSince returns up to limit scenes whose change number is above
// after, in change-number order.
func (db *DB) ScenesSince(ctx context.Context, after int64, limit int) ([]engram.Scene, error) {
	return viewList(ctx, db, fmt.Sprintf("scenes since %d", after), readScenes,
		`SELECT `+sceneColumns+` FROM scenes s WHERE s.seq > ? ORDER BY s.seq LIMIT ?`, after, limit)
}

// GetScenes returns the scenes with the given ids, in the order of ids;
// unknown ids are skipped.
func (db *DB) GetScenes(ctx context.Context, ids []string) ([]engram.Scene, error) {
	return getByIDs(ctx, db, "scenes", `SELECT `+sceneColumns+` FROM scenes s WHERE s.id IN `, ids,
		readScenes, func(s engram.Scene) string { return s.ID })
}
