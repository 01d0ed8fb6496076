package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/engram-dev/engram"
)

// RedactResult says what RedactTurns changed.
type RedactResult struct {
	Turns, Memories, Scenes, Facets, Units int
	// Removed are the ids of the vectors deleted (of every model): the
	// turns' own, to be embedded again from the redacted text, and those
	// of the units holding them, which the unit-vector job makes again.
	Removed []string
}

// RedactTurns stores the redacted versions of turns (same id and seq, new
// content) and replaces every span of spans by marker wherever the palace
// copied their text: the turn row and its keyword indexes, the session and
// scene units holding it (re-indexed, their vectors dropped to be made
// again), the memories and scenes citing it (text, rationale, entities,
// title, summary; re-indexed with a new change number, so that their
// vectors are made again) and the persona facets it is evidence for. The
// turns' vectors of every model are deleted. Then the full-text indexes
// are merged and the WAL truncated, as for a forget.
func (db *DB) RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (RedactResult, error) {
	var res RedactResult
	if len(turns) == 0 {
		return res, nil
	}
	red := func(s string) string {
		for _, sp := range spans {
			s = strings.ReplaceAll(s, sp, marker)
		}
		return s
	}
	// In JSON text (history, drafts) a span appears escaped.
	var jsonPairs []string
	for _, sp := range spans {
		a, _ := json.Marshal(sp)
		b, _ := json.Marshal(marker)
		jsonPairs = append(jsonPairs, string(a[1:len(a)-1]), string(b[1:len(b)-1]))
	}
	redJSON := strings.NewReplacer(jsonPairs...)
	kw := db.beginChange()
	err := db.Update(ctx, func(tx *sql.Tx) error {
		res = RedactResult{}
		kw.reset()
		f := &forgetter{ctx: ctx, tx: tx, res: &ForgetResult{}, gone: map[string]bool{}, kw: kw}
		units := map[int64]bool{}
		for _, t := range turns {
			raw := nfkc(t.Content)
			text, err := segmentText(raw)
			if err != nil {
				return err
			}
			var (
				speaker, namespace string
				ts                 sql.NullInt64
			)
			if err := tx.QueryRowContext(ctx, `SELECT speaker, namespace, ts FROM turns WHERE seq = ? AND id = ?`, t.Seq, t.ID).Scan(&speaker, &namespace, &ts); err == sql.ErrNoRows {
				continue // not indexed (skipped, or not yet: the indexer stores the new version)
			} else if err != nil {
				return err
			}
			sp, err := segmentText(nfkc(speaker))
			if err != nil {
				return err
			}
			grams := strings.TrimSpace(cjkGrams(raw) + " " + cjkGrams(nfkc(speaker)))
			for _, q := range []string{
				`UPDATE turns SET content = ?2 WHERE seq = ?1`,
				`DELETE FROM turns_fts WHERE rowid = ?1`,
				`DELETE FROM turns_trigram WHERE rowid = ?1`,
				`DELETE FROM turns_cjk WHERE rowid = ?1`,
			} {
				if _, err := tx.ExecContext(ctx, q, t.Seq, t.Content); err != nil {
					return err
				}
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO turns_fts (rowid, text, speaker) VALUES (?, ?, ?)`, t.Seq, text, sp); err != nil {
				return err
			}
			var tsv any
			if ts.Valid {
				tsv = ts.Int64
			}
			kw.del(t.Seq)
			kw.add(t.Seq, namespace, tsv, text, sp)
			if _, err := tx.ExecContext(ctx, `INSERT INTO turns_trigram (rowid, content) VALUES (?, ?)`, t.Seq, raw); err != nil {
				return err
			}
			if grams != "" {
				if _, err := tx.ExecContext(ctx, `INSERT INTO turns_cjk (rowid, grams) VALUES (?, ?)`, t.Seq, grams); err != nil {
					return err
				}
			}
			res.Turns++
			f.gone[t.ID] = true
			if err := f.vectors([]string{t.ID}); err != nil {
				return err
			}
			res.Removed = append(res.Removed, t.ID)
			rows, err := tx.QueryContext(ctx, `SELECT unit_n FROM unit_turns WHERE turn_seq = ?`, t.Seq)
			if err != nil {
				return err
			}
			ns, err := scanInts(rows)
			if err != nil {
				return err
			}
			for _, n := range ns {
				units[n] = true
			}
			if err := redactMemories(ctx, tx, t.ID, red, &res); err != nil {
				return err
			}
			if err := redactScenes(ctx, tx, t.ID, red, redJSON, &res); err != nil {
				return err
			}
			if err := redactFacets(ctx, tx, t.ID, red, redJSON, &res); err != nil {
				return err
			}
		}
		// The graph statements of the turns go; the graph job makes them
		// again from the redacted memories (their change numbers moved).
		if len(f.gone) > 0 {
			if err := f.statements(); err != nil {
				return err
			}
		}
		ns := make([]int64, 0, len(units))
		for n := range units {
			ns = append(ns, n)
		}
		slices.Sort(ns)
		if err := f.fixUnits(ns); err != nil {
			return err
		}
		res.Units = f.res.Units
		res.Removed = append(res.Removed, f.res.Removed...)
		if err := redactCorrections(ctx, tx, spans, marker); err != nil {
			return err
		}
		return kw.count(ctx, tx)
	})
	db.endChange(kw, err)
	if err != nil {
		return RedactResult{}, fmt.Errorf("palace: redact turns: %w", err)
	}
	if err := db.scrub(ctx); err != nil {
		return res, fmt.Errorf("palace: redact turns: %w", err)
	}
	return res, nil
}

// redactCorrections replaces the spans wherever the palace keeps a
// correction's words (a user may have typed the secret into one): the
// corrected text of memories and facts, and the corrections' records (JSON,
// where a span appears escaped) and keys. The engine rewrites the journal.
func redactCorrections(ctx context.Context, tx *sql.Tx, spans []string, marker string) error {
	jm, _ := json.Marshal(marker)
	for _, sp := range spans {
		js, _ := json.Marshal(sp)
		for _, q := range []struct {
			sql      string
			from, to string
		}{
			{`UPDATE memories SET corrected = replace(corrected, ?1, ?2) WHERE instr(corrected, ?1) > 0`, sp, marker},
			{`UPDATE kg_triples SET corrected = replace(corrected, ?1, ?2) WHERE instr(corrected, ?1) > 0`, sp, marker},
			{`UPDATE corrections SET body = replace(body, ?1, ?2) WHERE instr(body, ?1) > 0`, string(js[1 : len(js)-1]), string(jm[1 : len(jm)-1])},
			{`UPDATE corrections SET key = replace(key, ?1, ?2), alt = replace(alt, ?1, ?2) WHERE instr(key, ?1) > 0 OR instr(alt, ?1) > 0`, sp, marker},
		} {
			if _, err := tx.ExecContext(ctx, q.sql, q.from, q.to); err != nil {
				return fmt.Errorf("redact corrections: %w", err)
			}
		}
	}
	return nil
}

func redactMemories(ctx context.Context, tx *sql.Tx, turnID string, red func(string) string, res *RedactResult) error {
	rows, err := tx.QueryContext(ctx, `SELECT n FROM memories WHERE EXISTS (SELECT 1 FROM json_each(memories.sources) WHERE value = ?)`, turnID)
	if err != nil {
		return err
	}
	ns, err := scanInts(rows)
	if err != nil {
		return err
	}
	seq, err := nextSeq(ctx, tx, "memories")
	if err != nil {
		return err
	}
	for _, n := range ns {
		var m engram.Memory
		var ents string
		var ext, rs, ro sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT text, rationale, subject, entities, extracted, rel_subject, rel_object FROM memories WHERE n = ?`, n).
			Scan(&m.Text, &m.Rationale, &m.Subject, &ents, &ext, &rs, &ro); err != nil {
			return err
		}
		// Every memory of the turn gets a new change number, so that the
		// graph and persona jobs read it again.
		seq++
		if rs.Valid && ro.Valid {
			nrs, nro := red(rs.String), red(ro.String)
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET rel_subject = ?, rel_object = ?, rel_subj_norm = ?, rel_obj_norm = ?, seq = ? WHERE n = ?`,
				nrs, nro, normName(nrs), normName(nro), seq, n); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `UPDATE memories SET seq = ? WHERE n = ?`, seq, n); err != nil {
			return err
		}
		if err := json.Unmarshal([]byte(ents), &m.Entities); err != nil {
			return err
		}
		old := m.Text + m.Rationale + m.Subject + strings.Join(m.Entities, "\x00") + ext.String
		m.Text, m.Rationale, m.Subject = red(m.Text), red(m.Rationale), red(m.Subject)
		for i := range m.Entities {
			m.Entities[i] = red(m.Entities[i])
		}
		var newExt any
		if ext.Valid {
			newExt = red(ext.String)
		}
		if old == m.Text+m.Rationale+m.Subject+strings.Join(m.Entities, "\x00")+red(ext.String) {
			continue
		}
		raw, _ := json.Marshal(nonNil(m.Entities))
		// The near-duplicate key is made of the text's words: redacted too.
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET text = ?, rationale = ?, subject = ?, entities = ?, extracted = ?,
			dedup_key = ?, seq = ? WHERE n = ?`,
			m.Text, m.Rationale, m.Subject, string(raw), newExt, dedupKey(m, contentWords(m.Text)), seq, n); err != nil {
			return err
		}
		text, err := indexText(memoryIndexText(m))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM memories_fts WHERE rowid = ?`, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO memories_fts (rowid, text) VALUES (?, ?)`, n, text); err != nil {
			return err
		}
		res.Memories++
	}
	return nil
}

func redactScenes(ctx context.Context, tx *sql.Tx, turnID string, red func(string) string, redJSON *strings.Replacer, res *RedactResult) error {
	rows, err := tx.QueryContext(ctx, `SELECT n FROM scenes WHERE EXISTS (SELECT 1 FROM json_each(scenes.turns) WHERE value = ?)`, turnID)
	if err != nil {
		return err
	}
	ns, err := scanInts(rows)
	if err != nil {
		return err
	}
	seq, err := nextSeq(ctx, tx, "scenes")
	if err != nil {
		return err
	}
	for _, n := range ns {
		var title, summary, parts string
		var draft sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT title, summary, participants, draft FROM scenes WHERE n = ?`, n).
			Scan(&title, &summary, &parts, &draft); err != nil {
			return err
		}
		nt, nsum, np := red(title), red(summary), redJSON.Replace(parts)
		var nd any
		if draft.Valid {
			nd = redJSON.Replace(draft.String)
		}
		if nt == title && nsum == summary && np == parts && (!draft.Valid || nd == draft.String) {
			continue
		}
		seq++
		if _, err := tx.ExecContext(ctx, `UPDATE scenes SET title = ?, summary = ?, participants = ?, draft = ?, seq = ? WHERE n = ?`,
			nt, nsum, np, nd, seq, n); err != nil {
			return err
		}
		var ps []string
		json.Unmarshal([]byte(np), &ps)
		text, err := indexText(nt + "\n" + nsum + "\n" + strings.Join(ps, " "))
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM scenes_fts WHERE rowid = ?`, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO scenes_fts (rowid, text) VALUES (?, ?)`, n, text); err != nil {
			return err
		}
		res.Scenes++
	}
	return nil
}

func redactFacets(ctx context.Context, tx *sql.Tx, turnID string, red func(string) string, redJSON *strings.Replacer, res *RedactResult) error {
	rows, err := tx.QueryContext(ctx, `SELECT rowid, value, history FROM persona_facets
		WHERE EXISTS (SELECT 1 FROM json_each(persona_facets.evidence) WHERE value = ?)
		   OR instr(history, ?) > 0`, turnID, turnID)
	if err != nil {
		return err
	}
	type facet struct {
		rowid          int64
		value, history string
	}
	var fs []facet
	for rows.Next() {
		var f facet
		if err := rows.Scan(&f.rowid, &f.value, &f.history); err != nil {
			rows.Close()
			return err
		}
		fs = append(fs, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, f := range fs {
		v, h := red(f.value), redJSON.Replace(f.history)
		if v == f.value && h == f.history {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE persona_facets SET value = ?, history = ? WHERE rowid = ?`, v, h, f.rowid); err != nil {
			return err
		}
		res.Facets++
	}
	return nil
}

// TurnIDsHolding returns the ids of the stored turns of namespace (every
// namespace when "") and session (every session when "") whose content
// holds one of texts, in seq order.
func (db *DB) TurnIDsHolding(ctx context.Context, namespace, session string, texts []string) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	err := db.View(ctx, func(tx *sql.Tx) error {
		for _, text := range texts {
			found, err := queryStrings(ctx, tx, `SELECT id FROM turns WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR session = ?2)
				AND instr(content, ?3) > 0 ORDER BY seq`, namespace, session, text)
			if err != nil {
				return err
			}
			for _, id := range found {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("palace: turn ids: %w", err)
	}
	return ids, nil
}
