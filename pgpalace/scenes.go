package pgpalace

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/redacttext"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// The L2 scenes, as package palace keeps them (palace/scenes.go): a write
// replaces a scene by id under the next change number, with its scene
// unit (the turns it holds, as far as they are stored); each server's
// keyword index of the scenes follows the change numbers.

// keyScenesDeleted is the palace_meta key counting the deletions of
// scenes.
const keyScenesDeleted = "scenes_deleted"

// sceneColumns are the columns scanScene reads, in order.
const sceneColumns = `s.id, s.namespace, s.session, s.title, s.summary, s.start_ts, s.end_ts, s.participants, s.turns, s.seq`

// OpenScenes returns the drafts of the open scenes of the given sessions;
// sessions without one are absent from the map.
func (db *DB) OpenScenes(ctx context.Context, keys []engram.SessionKey) (map[engram.SessionKey][]byte, error) {
	out := make(map[engram.SessionKey][]byte)
	if len(keys) == 0 {
		return out, nil
	}
	nss, sessions := make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		nss[i], sessions[i] = k.Namespace, k.Session
	}
	rows, err := db.pool.Query(ctx, `SELECT k.namespace, k.session, d.draft FROM unnest($1::text[], $2::text[]) AS k(namespace, session),
		LATERAL (SELECT draft FROM palace_scenes s WHERE s.namespace = k.namespace AND s.session = k.session AND s.draft IS NOT NULL
			ORDER BY s.n DESC LIMIT 1) d`, nss, sessions)
	if err != nil {
		return nil, wrap("open scenes", err)
	}
	var (
		k     engram.SessionKey
		draft []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&k.Namespace, &k.Session, &draft}, func() error {
		out[k] = slices.Clone(draft)
		return nil
	})
	return out, wrap("open scenes", err)
}

// PutScenes upserts scenes by ID (each write replaces the scene's row and
// takes the next change number, its unit too) and advances the worker's
// watermark to throughSeq, in one transaction.
//
// Errors: EINVALID naming the field for a scene without id, namespace or
// turns, or with a time outside the palace's.
func (db *DB) PutScenes(ctx context.Context, worker string, scenes []engram.SceneWrite, throughSeq int64) error {
	rows, err := prepareScenes(scenes)
	if err != nil {
		return err
	}
	return db.update(ctx, "put scenes", func(tx pgx.Tx) error {
		if err := lockWrites(ctx, tx); err != nil {
			return err
		}
		if err := insertScenes(ctx, tx, rows); err != nil {
			return err
		}
		return setMeta(ctx, tx, workerKey(worker), throughSeq)
	})
}

// preparedScene is a scene write checked, with its times.
type preparedScene struct {
	w          engram.SceneWrite
	start, end *int64
}

// prepareScenes checks scenes for insertScenes.
func prepareScenes(scenes []engram.SceneWrite) ([]preparedScene, error) {
	rows := make([]preparedScene, len(scenes))
	for i, w := range scenes {
		field := "scenes[" + strconv.Itoa(i) + "]."
		if err := w.Scene.Check(field); err != nil {
			return nil, err
		}
		p := preparedScene{w: w}
		var err error
		if p.start, err = nanos(w.Scene.Start); err != nil {
			return nil, engram.FieldError(field+"start", "%v", err)
		}
		if p.end, err = nanos(w.Scene.End); err != nil {
			return nil, engram.FieldError(field+"end", "%v", err)
		}
		rows[i] = p
	}
	return rows, nil
}

// insertScenes inserts or replaces the scenes of rows in tx, under the
// write lock, each with its unit, under new change numbers.
func insertScenes(ctx context.Context, tx pgx.Tx, rows []preparedScene) error {
	var seq, useq int64
	if err := tx.QueryRow(ctx, `SELECT (SELECT coalesce(max(seq), 0) FROM palace_scenes), (SELECT coalesce(max(seq), 0) FROM palace_units)`).
		Scan(&seq, &useq); err != nil {
		return err
	}
	for _, p := range rows {
		s := p.w.Scene
		seq++
		// An update, or else an insert (under the write lock): an upsert
		// would take a row number even where it updates, and the keyword
		// index breaks ties by row number, as package palace's rowids do.
		tag, err := tx.Exec(ctx, `UPDATE palace_scenes SET title = $2, summary = $3, start_ts = $4, end_ts = $5, participants = $6,
			turns = $7, draft = $8, seq = $9 WHERE id = $1`,
			s.ID, []byte(s.Title), []byte(s.Summary), p.start, p.end, nonNil(s.Participants), s.Turns, p.w.Draft, seq)
		if err == nil && tag.RowsAffected() == 0 {
			_, err = tx.Exec(ctx, `INSERT INTO palace_scenes (id, namespace, session, title, summary, start_ts, end_ts, participants, turns, draft, seq)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
				s.ID, s.Namespace, s.Session, []byte(s.Title), []byte(s.Summary), p.start, p.end, nonNil(s.Participants), s.Turns, p.w.Draft, seq)
		}
		if err != nil {
			return errors.Join(errors.New("scene "+s.ID), err)
		}
		useq++
		if err := putSceneUnit(ctx, tx, s, p.start, p.end, useq); err != nil {
			return err
		}
	}
	return nil
}

// putSceneUnit writes the unit of scene s: its times, and the turns it
// holds as far as they are stored, counted.
func putSceneUnit(ctx context.Context, tx pgx.Tx, s engram.Scene, start, end *int64, seq int64) error {
	var n int64
	id := engram.UnitID(engram.UnitScene, s.Namespace, s.Session, s.ID)
	err := tx.QueryRow(ctx, `UPDATE palace_units SET start_ts = $2, end_ts = $3, seq = $4 WHERE id = $1 RETURNING n`, id, start, end, seq).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) { // not an upsert: see insertScenes
		err = tx.QueryRow(ctx, `INSERT INTO palace_units (id, kind, namespace, session, start_ts, end_ts, turns, bytes, seq)
			VALUES ($1, 'scene', $2, $3, $4, $5, 0, 0, $6) RETURNING n`, id, s.Namespace, s.Session, start, end, seq).Scan(&n)
	}
	if err != nil {
		return errors.Join(errors.New("unit of scene "+s.ID), err)
	}
	if _, err := tx.Exec(ctx, `DELETE FROM palace_unit_turns WHERE unit_n = $1`, n); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO palace_unit_turns (unit_n, turn_seq)
		SELECT $1, seq FROM palace_turns WHERE id = ANY($2) ON CONFLICT DO NOTHING`, n, s.Turns); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE palace_units SET `+unitCounts+` WHERE n = $1`, n, engram.UnitTurnBytes)
	return err
}

// nonNil is s, or an empty list for nil (a column that is never NULL).
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// scanScene reads a row of sceneColumns, then extra.
func scanScene(r pgx.CollectableRow, extra ...any) (engram.Scene, error) {
	var (
		s              engram.Scene
		title, summary []byte
	)
	err := r.Scan(append([]any{&s.ID, &s.Namespace, &s.Session, &title, &summary, sqlrow.Time(&s.Start), sqlrow.Time(&s.End),
		&s.Participants, &s.Turns, &s.Seq}, extra...)...)
	s.Title, s.Summary = string(title), string(summary)
	return s, err
}

// scenes runs q, whose columns are sceneColumns, and returns its scenes.
func (db *DB) scenes(ctx context.Context, what, q string, args ...any) ([]engram.Scene, error) {
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, wrap(what, err)
	}
	out, err := pgx.AppendRows([]engram.Scene(nil), rows, func(r pgx.CollectableRow) (engram.Scene, error) { return scanScene(r) })
	return out, wrap(what, err)
}

// sceneChanges reads the scenes written after a change number for the
// scenes' keyword index, with their text (Scene.SearchText).
func sceneChanges(ctx context.Context, tx pgx.Tx, after int64, limit int) ([]kwindex.Row, error) {
	q, err := tx.Query(ctx, `SELECT `+sceneColumns+`, s.n FROM palace_scenes s WHERE s.seq > $1 ORDER BY s.seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(q, func(r pgx.CollectableRow) (kwindex.Row, error) {
		var row kwindex.Row
		s, err := scanScene(r, &row.Doc.Key)
		if err != nil {
			return row, err
		}
		row.Change, row.ID, row.Doc.Namespace = s.Seq, s.ID, s.Namespace
		row.Doc.TS, row.Doc.HasTS = s.Start.UnixNano(), !s.Start.IsZero()
		row.Doc.End, row.Doc.HasEnd = s.End.UnixNano(), !s.End.IsZero()
		row.Doc.Text, err = kwindex.IndexText(s.SearchText())
		return row, err
	})
}

// Scenes lists the scenes matching q: newest first, or best first for a
// keyword search (q.Text: BM25 over the scenes' text, as SearchScenes
// ranks them).
func (db *DB) Scenes(ctx context.Context, q engram.SceneQuery) ([]engram.Scene, error) {
	limit := searchLimit(q.Limit)
	const filter = `($1 = '' OR s.namespace = $1) AND ($2 = '' OR s.session = $2)
		AND ($3::bigint = 0 OR s.end_ts >= $3) AND ($4::bigint = 0 OR s.start_ts < $4)`
	args := []any{q.Namespace, q.Session, nanosOrZero(q.From), nanosOrZero(q.To)}
	if q.Text == "" {
		return db.scenes(ctx, "scenes", `SELECT `+sceneColumns+` FROM palace_scenes s WHERE `+filter+`
			ORDER BY s.start_ts DESC NULLS LAST, s.n DESC LIMIT $5`, append(args, limit)...)
	}
	words, err := textWords(q.Text)
	if err != nil || len(words) == 0 {
		return nil, err
	}
	rows, err := db.pool.Query(ctx, `SELECT s.id FROM palace_scenes s WHERE `+filter, args...)
	if err != nil {
		return nil, wrap("scenes", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(ids) == 0 {
		return nil, wrap("scenes", err)
	}
	var hits []kwindex.IDHit
	err = fromIndex(ctx, db.skw, func() (ok bool, err error) {
		hits, ok, err = db.skw.Score(ctx, nil, words, ids)
		return ok, err
	})
	if err != nil {
		return nil, wrap("scenes", err)
	}
	slices.SortStableFunc(hits, func(a, b kwindex.IDHit) int { return cmp.Compare(b.Score, a.Score) })
	ids = ids[:0]
	for _, h := range hits[:min(len(hits), limit)] {
		ids = append(ids, h.ID)
	}
	return db.GetScenes(ctx, ids)
}

// SearchScenes ranks the scenes of q.Namespace overlapping [q.From, q.To)
// whose text holds a word of q.Text by BM25 (higher is better), as
// package palace's does.
func (db *DB) SearchScenes(ctx context.Context, q engram.TextQuery) ([]engram.SceneHit, error) {
	words, err := textWords(q.Text)
	if err != nil || len(words) == 0 {
		return nil, err
	}
	f := kwindex.Filter{Namespace: q.Namespace, From: nanosOrZero(q.From), To: nanosOrZero(q.To), Spans: true}
	var hits []kwindex.Hit
	err = fromIndex(ctx, db.skw, func() (ok bool, err error) {
		hits, ok, err = db.skw.Best(ctx, nil, words, f, min(max(q.Limit, 1), maxSearchLimit))
		return ok, err
	})
	if err != nil || len(hits) == 0 {
		return nil, wrap("search scenes", err)
	}
	rows, err := db.pool.Query(ctx, `SELECT `+sceneColumns+`, s.n FROM palace_scenes s WHERE s.n = ANY($1)`, kwindex.Keys(hits))
	if err != nil {
		return nil, wrap("search scenes", err)
	}
	byN := map[int64]engram.Scene{}
	_, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (struct{}, error) {
		var n int64
		s, err := scanScene(r, &n)
		byN[n] = s
		return struct{}{}, err
	})
	if err != nil {
		return nil, wrap("search scenes", err)
	}
	var out []engram.SceneHit
	for _, h := range hits {
		if s, ok := byN[h.Key]; ok { // a scene gone meanwhile is left out
			out = append(out, engram.SceneHit{Scene: s, Score: h.Score})
		}
	}
	return out, nil
}

// ScenesSince returns up to limit scenes whose change number is above
// after, in change-number order.
func (db *DB) ScenesSince(ctx context.Context, after int64, limit int) ([]engram.Scene, error) {
	return db.scenes(ctx, "scenes since", `SELECT `+sceneColumns+` FROM palace_scenes s WHERE s.seq > $1 ORDER BY s.seq LIMIT $2`,
		after, max(limit, 0))
}

// GetScenes returns the scenes with the given ids, in the order of ids;
// unknown ids are skipped.
func (db *DB) GetScenes(ctx context.Context, ids []string) ([]engram.Scene, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	got, err := db.scenes(ctx, "get scenes", `SELECT `+sceneColumns+` FROM palace_scenes s WHERE s.id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	return sqlrow.InOrder(ids, got, func(s engram.Scene) string { return s.ID }), nil
}

// forgetScenes deletes every scene holding one of the turns gone (ids),
// with its unit: its title and summary were made from the turn's words.
// With remake, the scenes' other turns (the turns gone are deleted
// already) are grouped into scenes again.
func forgetScenes(ctx context.Context, tx pgx.Tx, gone []string, remake engram.SceneRemaker, res *engram.ForgetResult) error {
	type scene struct {
		n               int64
		id, ns, session string
		turns           []string
		open            bool
	}
	rows, err := tx.Query(ctx, `SELECT n, id, namespace, session, turns, draft IS NOT NULL FROM palace_scenes
		WHERE turns && $1::text[] ORDER BY n`, gone)
	if err != nil {
		return err
	}
	hits, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scene, error) {
		var s scene
		return s, r.Scan(&s.n, &s.id, &s.ns, &s.session, &s.turns, &s.open)
	})
	if err != nil {
		return err
	}
	for _, s := range hits {
		if _, err := tx.Exec(ctx, `DELETE FROM palace_scenes WHERE n = $1`, s.n); err != nil {
			return err
		}
		if err := countDeletion(ctx, tx, keyScenesDeleted); err != nil {
			return err
		}
		res.Scenes++
		res.Removed = append(res.Removed, s.id)
		uid := engram.UnitID(engram.UnitScene, s.ns, s.session, s.id)
		var n int64
		err := tx.QueryRow(ctx, `DELETE FROM palace_units WHERE id = $1 RETURNING n`, uid).Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // left without a turn, fixUnits deleted it
		}
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM palace_unit_turns WHERE unit_n = $1`, n); err != nil {
			return err
		}
		if err := countDeletion(ctx, tx, keyUnitsDeleted); err != nil {
			return err
		}
		res.Units++
		res.Removed = append(res.Removed, uid)
	}
	if remake == nil || len(hits) == 0 {
		return nil
	}
	var writes []engram.SceneWrite
	for _, s := range hits {
		left, err := queryTurns(ctx, tx, `SELECT `+turnColumns+` FROM palace_turns t WHERE t.id = ANY($1) ORDER BY t.seq`, s.turns)
		if err != nil {
			return err
		}
		if len(left) == 0 {
			continue
		}
		w, err := remake(left, s.open)
		if err != nil {
			return errors.Join(errors.New("make scene "+s.id+" again"), err)
		}
		writes = append(writes, w...)
	}
	prepared, err := prepareScenes(writes)
	if err != nil {
		return err
	}
	res.ScenesRemade = len(writes)
	return insertScenes(ctx, tx, prepared)
}

// redactScenes redacts the title, summary, participants and draft of the
// scenes holding the turn turnID, each rewritten under a new change
// number; it returns how many changed.
func redactScenes(ctx context.Context, tx pgx.Tx, turnID string, txt *redacttext.Text) (int, error) {
	rows, err := tx.Query(ctx, `SELECT n, title, summary, participants, draft FROM palace_scenes WHERE turns @> ARRAY[$1::text] ORDER BY n`, turnID)
	if err != nil {
		return 0, err
	}
	type scene struct {
		n              int64
		title, summary []byte
		parts          []string
		draft          []byte
	}
	found, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (scene, error) {
		var s scene
		return s, r.Scan(&s.n, &s.title, &s.summary, &s.parts, &s.draft)
	})
	if err != nil {
		return 0, err
	}
	changed := 0
	for _, s := range found {
		title, summary := txt.Words(string(s.title)), txt.Words(string(s.summary))
		partsJSON, _ := json.Marshal(s.parts)
		var parts []string
		if err := json.Unmarshal([]byte(txt.JSON(string(partsJSON))), &parts); err != nil {
			return 0, err
		}
		draft := s.draft
		if draft != nil {
			draft = []byte(txt.SceneDraft(string(draft)))
		}
		if title == string(s.title) && summary == string(s.summary) && slices.Equal(parts, s.parts) && string(draft) == string(s.draft) {
			continue
		}
		if _, err := tx.Exec(ctx, `UPDATE palace_scenes SET title = $2, summary = $3, participants = $4, draft = $5,
			seq = (SELECT max(seq) + 1 FROM palace_scenes) WHERE n = $1`, s.n, []byte(title), []byte(summary), parts, draft); err != nil {
			return 0, err
		}
		changed++
	}
	return changed, nil
}
