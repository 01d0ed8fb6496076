package palace

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kgchain"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/memrule"
	"github.com/engram-dev/engram/internal/redacttext"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// RedactTurns stores the redacted versions of turns (same id and seq; new
// content, speaker and meta, see engram.Turn.RedactSpans) and replaces
// every span of spans by marker wherever the palace copied their text, in
// one transaction:
//
//   - the turn row and its keyword indexes (content and speaker), and the
//     session and scene units holding it (re-indexed, their vectors
//     dropped to be made again);
//   - the memories and scenes citing it (text, rationale, subject,
//     entities, relation, title, summary, participants; re-indexed with a
//     new change number, so that their vectors, graph statements and
//     persona facets are made again); a scene's title, summary and
//     draft, made of the turns' words, lose a span's words too
//     (engram.Pieces: "Grimblethorp" of "Grimblethorp-11");
//   - the persona facets it is evidence for: their value and history, or,
//     for a facet whose speaker or key holds a span, its evidence of the
//     turn, which the persona job gives back under the redacted name;
//   - its graph statements, which the graph job makes again from the
//     redacted memories, and the entities of the turns' namespaces whose
//     name or alias holds a span: renamed, or deleted when nothing names
//     them (the triples naming them re-indexed and their vectors dropped);
//   - the corrections' words (corrected texts, records, fact keys).
//
// The turns' vectors of every model are deleted (TurnVectors says which,
// and Watermarks how to put them back). Then the full-text indexes are
// merged and the WAL truncated, as for a forget.
func (db *DB) RedactTurns(ctx context.Context, turns []engram.Turn, spans []string, marker string) (engram.RedactResult, error) {
	var res engram.RedactResult
	if len(turns) == 0 {
		return res, nil
	}
	committed, err := db.erase(ctx, "redact turns", func(f *forgetter) error {
		res = engram.RedactResult{TurnVectors: map[string][]string{}, Watermarks: map[string]int64{}}
		r := &redactor{forgetter: f, spans: spans, txt: redacttext.New(spans, marker), out: &res, first: map[string]int64{}}
		return r.run(turns)
	})
	if !committed {
		return engram.RedactResult{}, err
	}
	return res, err
}

// redactor is one RedactTurns transaction: a forgetter whose gone turns
// are the redacted ones.
type redactor struct {
	*forgetter
	spans []string
	txt   *redacttext.Text // the spans' text work
	out   *engram.RedactResult
	first map[string]int64 // by vector model, the first turn that lost its vector of it
}

// red replaces the spans in s, in one pass, as engram.Turn.RedactSpans
// does.
func (r *redactor) red(s string) string { return r.txt.Red(s) }

func (r *redactor) run(turns []engram.Turn) error {
	units := map[int64]bool{}
	namespaces := map[string]bool{}
	for _, t := range turns {
		ns, ok, err := r.turn(t)
		if err != nil {
			return fmt.Errorf("turn %s: %w", t.ID, err)
		}
		if !ok {
			continue // not indexed (skipped, or not yet: the indexer stores the new version)
		}
		namespaces[ns] = true
		if err := r.unitsOf(t.Seq, units); err != nil {
			return err
		}
		if err := r.redactMemories(t.ID); err != nil {
			return fmt.Errorf("memories: %w", err)
		}
		if err := r.redactScenes(t.ID); err != nil {
			return fmt.Errorf("scenes: %w", err)
		}
	}
	if len(r.gone) > 0 {
		if err := r.derived(); err != nil {
			return err
		}
	}
	if err := r.fixUnits(units); err != nil {
		return err
	}
	if err := redactCorrections(r.ctx, r.tx, r.txt); err != nil {
		return err
	}
	if err := r.entities(namespaces); err != nil {
		return fmt.Errorf("graph entities: %w", err)
	}
	r.out.Units = r.res.Units
	r.out.Removed = append(r.out.Removed, r.res.Removed...)
	if err := r.rewind(); err != nil {
		return fmt.Errorf("vector watermarks: %w", err)
	}
	return r.vectors(r.out.Removed)
}

// derived redacts the persona facets and the graph statements of the
// redacted turns.
func (r *redactor) derived() error {
	// A facet named by a span (its speaker, or its key: a liked thing)
	// loses the turns' evidence, and the persona job files it again under
	// the redacted name from the redacted memories; the others are
	// redacted in place.
	if err := r.facets(func(speaker, key string) bool { return r.txt.Holds(speaker) || r.txt.HoldsFolded(key) }); err != nil {
		return fmt.Errorf("persona: %w", err)
	}
	r.out.Facets = r.res.Facets
	for id := range r.gone {
		if err := r.redactFacets(id); err != nil {
			return fmt.Errorf("persona: %w", err)
		}
	}
	// The graph statements of the turns go; the graph job makes them
	// again from the redacted memories (their change numbers moved).
	if err := r.statements(); err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	return nil
}

// rewind moves the watermark of each model that loses a turn's vector
// back before the first such turn, and records the one it had.
func (r *redactor) rewind() error {
	for model, seq := range r.first {
		var wm int64
		if err := r.tx.QueryRowContext(r.ctx, `SELECT embedded_seq FROM vector_models WHERE model = ?`, model).Scan(&wm); err != nil {
			return err
		}
		r.out.Watermarks[model] = wm
		if err := r.exec(`UPDATE vector_models SET embedded_seq = min(embedded_seq, ?) WHERE model = ?`, seq-1, model); err != nil {
			return err
		}
	}
	return nil
}

// turn stores the redacted version of a stored turn, indexes it again and
// deletes its vectors of every model. ok is false when the palace does not
// hold the turn; ns is its namespace.
func (r *redactor) turn(t engram.Turn) (ns string, ok bool, err error) {
	var ts sql.NullInt64
	found, err := sqlrow.One(r.tx.QueryRowContext(r.ctx, `SELECT namespace, ts FROM turns WHERE seq = ? AND id = ?`, t.Seq, t.ID), &ns, &ts)
	if err != nil || !found {
		return "", false, err
	}
	raw, speaker := kwindex.NFKC(t.Content), kwindex.NFKC(t.Speaker)
	text, err := kwindex.SegmentText(raw)
	if err != nil {
		return "", false, err
	}
	sp, err := kwindex.SegmentText(speaker)
	if err != nil {
		return "", false, err
	}
	var meta any
	if len(t.Meta) > 0 {
		meta = string(t.Meta)
	}
	if err := r.exec(`UPDATE turns SET content = ?, speaker = ?, meta = ? WHERE seq = ?`, t.Content, t.Speaker, meta, t.Seq); err != nil {
		return "", false, err
	}
	if err := r.unindexTurn(t.Seq); err != nil {
		return "", false, err
	}
	if err := r.exec(`INSERT INTO turns_fts (rowid, text, speaker) VALUES (?, ?, ?)`, t.Seq, text, sp); err != nil {
		return "", false, err
	}
	var tsv any
	if ts.Valid {
		tsv = ts.Int64
	}
	r.kw.Add(turnDoc(t.Seq, ns, tsv, text, sp))
	if t.Seq <= r.trigramSeq {
		if err := r.exec(`INSERT INTO turns_trigram (rowid, content) VALUES (?, ?)`, t.Seq, raw); err != nil {
			return "", false, err
		}
	}
	if grams := strings.TrimSpace(kwindex.CJKGrams(raw) + " " + kwindex.CJKGrams(speaker)); grams != "" {
		if err := r.exec(`INSERT INTO turns_cjk (rowid, grams) VALUES (?, ?)`, t.Seq, grams); err != nil {
			return "", false, err
		}
	}
	models, err := sqlrow.Strings(r.ctx, r.tx, `SELECT model FROM vectors WHERE id = ? ORDER BY model`, t.ID)
	if err != nil {
		return "", false, err
	}
	for _, m := range models {
		r.out.TurnVectors[m] = append(r.out.TurnVectors[m], t.ID)
		if first, ok := r.first[m]; !ok || t.Seq < first {
			r.first[m] = t.Seq
		}
	}
	r.out.Turns++
	r.out.Removed = append(r.out.Removed, t.ID)
	r.gone[t.ID] = true
	return ns, true, nil
}

// entities replaces the spans in the names and aliases of the graph's
// entities of namespaces. An entity holding one that nothing names is
// deleted; another takes the redacted name and its norm (when another
// entity has that norm already, the two stay apart: this one keeps a norm
// of its own, found through its aliases), and the chains naming it are
// rebuilt, so that their triples are indexed under the new name and
// embedded again.
func (r *redactor) entities(namespaces map[string]bool) error {
	for ns := range namespaces {
		for _, sp := range r.spans {
			n, err := r.deleteUnnamed(`e.namespace = ? AND instr(e.name, ?) > 0`, ns, sp)
			if err != nil {
				return err
			}
			r.out.Entities += n
		}
		type alias struct {
			norm, alias string
			entity      int64
		}
		type entity struct {
			n    int64
			name string
		}
		for _, sp := range r.spans {
			aliases, err := sqlrow.Query(r.ctx, r.tx, `SELECT norm, alias, entity FROM kg_aliases WHERE namespace = ? AND instr(alias, ?) > 0`,
				[]any{ns, sp}, func(rows *sql.Rows, a *alias) error { return rows.Scan(&a.norm, &a.alias, &a.entity) })
			if err != nil {
				return err
			}
			for _, a := range aliases {
				if err := r.exec(`DELETE FROM kg_aliases WHERE namespace = ? AND norm = ?`, ns, a.norm); err != nil {
					return err
				}
				// A redacted alias that another one already spells goes.
				name := r.red(a.alias)
				if norm := kgchain.NormName(name); norm != "" {
					if err := r.exec(`INSERT INTO kg_aliases (namespace, norm, alias, entity) VALUES (?, ?, ?, ?)
						ON CONFLICT (namespace, norm) DO NOTHING`, ns, norm, name, a.entity); err != nil {
						return err
					}
				}
			}
			ents, err := sqlrow.Query(r.ctx, r.tx, `SELECT n, name FROM kg_entities WHERE namespace = ? AND instr(name, ?) > 0`,
				[]any{ns, sp}, func(rows *sql.Rows, e *entity) error { return rows.Scan(&e.n, &e.name) })
			if err != nil {
				return err
			}
			for _, e := range ents {
				name := r.red(e.name)
				norm := kgchain.NormName(name)
				var taken int
				if err := r.tx.QueryRowContext(r.ctx, `SELECT count(*) FROM kg_entities WHERE namespace = ? AND norm = ? AND n <> ?`,
					ns, norm, e.n).Scan(&taken); err != nil {
					return err
				}
				if norm == "" || taken > 0 {
					norm += "#" + strconv.FormatInt(e.n, 10)
				}
				if err := r.exec(`UPDATE kg_entities SET name = ?, norm = ? WHERE n = ?`, name, norm, e.n); err != nil {
					return err
				}
				r.out.Entities++
				ids, err := rebuildChainsWhere(r.ctx, r.tx, `subject = ?1 OR object = ?1`, e.n)
				if err != nil {
					return err
				}
				r.out.Removed = append(r.out.Removed, ids...)
			}
		}
	}
	return nil
}

// redactCorrections replaces the spans wherever the palace keeps a
// correction's words (a user may have typed the secret into one): the
// corrections' records (JSON, where a span appears escaped) and keys, the
// text of the memories they corrected, and the fact keys of the triples
// they made (a fact's key is made again from its redacted names, as
// RedactCorrection does, so that it goes on matching the statements
// derived from the redacted memories and the renamed entities). The
// engine rewrites the journal.
func redactCorrections(ctx context.Context, tx *sql.Tx, txt *redacttext.Text) error {
	type row struct {
		n                      int64
		target, key, alt, body string
	}
	rows, err := sqlrow.Query(ctx, tx, `SELECT n, target, key, alt, body FROM corrections`, nil, func(r *sql.Rows, c *row) error {
		return r.Scan(&c.n, &c.target, &c.key, &c.alt, &c.body)
	})
	if err != nil {
		return fmt.Errorf("redact corrections: %w", err)
	}
	for _, c := range rows {
		key, alt, body, err := memrule.RedactRecord(c.target, c.key, c.alt, c.body, txt)
		if err != nil {
			return fmt.Errorf("redact correction %d: %w", c.n, err)
		}
		if key == c.key && alt == c.alt && body == c.body {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE corrections SET key = ?, alt = ?, body = ? WHERE n = ?`, key, alt, body, c.n); err != nil {
			return fmt.Errorf("redact corrections: %w", err)
		}
		if key != c.key && c.target == engram.CorrectFact {
			if _, err := tx.ExecContext(ctx, `UPDATE kg_triples SET corrected = ? WHERE corrected = ?`, key, c.key); err != nil {
				return fmt.Errorf("redact corrections: %w", err)
			}
		}
		if c.target == engram.CorrectMemory {
			// A memory that holds the correction's text takes it again.
			if err := settleCorrected(ctx, tx, c.n); err != nil {
				return fmt.Errorf("redact corrections: %w", err)
			}
		}
	}
	return nil
}

// settleCorrected settles the memories that correction n corrected.
func settleCorrected(ctx context.Context, tx *sql.Tx, n int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT n FROM memories WHERE corrected = (SELECT id FROM corrections WHERE n = ?)`, n)
	if err != nil {
		return err
	}
	ns, err := sqlrow.Ints(rows)
	if err != nil {
		return err
	}
	seq, err := nextSeq(ctx, tx, "memories")
	if err != nil {
		return err
	}
	for _, m := range ns {
		if _, err := settleMemory(ctx, tx, m, &seq); err != nil {
			return err
		}
	}
	return nil
}

// redactMemories redacts the memories citing the turn turnID.
func (r *redactor) redactMemories(turnID string) error {
	ctx, tx, red := r.ctx, r.tx, r.red
	ns, seq, err := r.citing(`SELECT n FROM memories WHERE EXISTS (SELECT 1 FROM json_each(memories.sources) WHERE value = ?)`, turnID, "memories")
	if err != nil {
		return err
	}
	for _, n := range ns {
		var m engram.Memory
		var ext, rs, ro sql.NullString
		if err := tx.QueryRowContext(ctx, `SELECT type, text, rationale, subject, entities, extracted, rel_subject, rel_object FROM memories WHERE n = ?`, n).
			Scan(&m.Type, &m.Text, &m.Rationale, &m.Subject, sqlrow.JSON(&m.Entities), &ext, &rs, &ro); err != nil {
			return err
		}
		// Every memory of the turn gets a new change number, so that the
		// graph and persona jobs read it again.
		seq++
		if rs.Valid && ro.Valid {
			nrs, nro := red(rs.String), red(ro.String)
			if _, err := tx.ExecContext(ctx, `UPDATE memories SET rel_subject = ?, rel_object = ?, rel_subj_norm = ?, rel_obj_norm = ?, seq = ? WHERE n = ?`,
				nrs, nro, kgchain.NormName(nrs), kgchain.NormName(nro), seq, n); err != nil {
				return err
			}
		} else if _, err := tx.ExecContext(ctx, `UPDATE memories SET seq = ? WHERE n = ?`, seq, n); err != nil {
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
		// The near-duplicate keys are made of the text's words and the
		// subject: redacted too.
		if _, err := tx.ExecContext(ctx, qDeleteNearKeys, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE memories SET text = ?, rationale = ?, subject = ?, entities = ?, extracted = ?,
			dedup_key = ?, seq = ? WHERE n = ?`,
			m.Text, m.Rationale, m.Subject, sqlrow.JSONList(nonNil(m.Entities)), newExt, memrule.DedupKey(m, memrule.ContentWords(m.Text)), seq, n); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, qInsertNearKeys, n); err != nil {
			return err
		}
		if err := reindexMemory(ctx, tx, n, m); err != nil {
			return err
		}
		r.out.Memories++
	}
	return nil
}

// citing returns the rows of table that query selects for the turn
// turnID, and the table's last change number.
func (r *redactor) citing(query, turnID, table string) ([]int64, int64, error) {
	rows, err := r.tx.QueryContext(r.ctx, query, turnID)
	if err != nil {
		return nil, 0, err
	}
	ns, err := sqlrow.Ints(rows)
	if err != nil {
		return nil, 0, err
	}
	seq, err := nextSeq(r.ctx, r.tx, table)
	return ns, seq, err
}

// redactScenes redacts the scenes holding the turn turnID.
func (r *redactor) redactScenes(turnID string) error {
	ctx, tx := r.ctx, r.tx
	ns, seq, err := r.citing(`SELECT n FROM scenes WHERE EXISTS (SELECT 1 FROM json_each(scenes.turns) WHERE value = ?)`, turnID, "scenes")
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
		nt, nsum, np := r.txt.Words(title), r.txt.Words(summary), r.txt.JSON(parts)
		var nd any
		if draft.Valid {
			nd = r.txt.SceneDraft(draft.String)
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
		text, err := kwindex.IndexText(engram.Scene{Title: nt, Summary: nsum, Participants: ps}.SearchText())
		if err != nil {
			return err
		}
		if err := reindexText(ctx, tx, "scenes_fts", n, text); err != nil {
			return err
		}
		r.out.Scenes++
	}
	return nil
}

// redactFacets redacts the value and history of the persona facets the
// turn turnID is evidence for.
func (r *redactor) redactFacets(turnID string) error {
	type facet struct {
		rowid          int64
		value, history string
	}
	fs, err := sqlrow.Query(r.ctx, r.tx, `SELECT rowid, value, history FROM persona_facets
		WHERE EXISTS (SELECT 1 FROM json_each(persona_facets.evidence) WHERE value = ?1)
		   OR instr(history, ?1) > 0`, []any{turnID}, func(rows *sql.Rows, f *facet) error { return rows.Scan(&f.rowid, &f.value, &f.history) })
	if err != nil {
		return err
	}
	for _, f := range fs {
		v, h := r.red(f.value), r.txt.JSON(f.history)
		if v == f.value && h == f.history {
			continue
		}
		if err := r.exec(`UPDATE persona_facets SET value = ?, history = ? WHERE rowid = ?`, v, h, f.rowid); err != nil {
			return err
		}
		r.out.Facets++
	}
	return nil
}

// TurnIDsHolding returns the ids of the stored turns of namespace (every
// namespace when "") and session (every session when "") whose content,
// speaker or meta holds one of texts, in seq order. In meta a text is
// looked for as JSON writes it (escaped, with or without <, > and & as
// \u escapes); one a client escaped otherwise is not found. With
// everywhere, a text in a turn's id, namespace or session finds it too
// (the places a redaction does not reach). The turns are read once, each
// looked through for every text in one pass (engram.Spans).
func (db *DB) TurnIDsHolding(ctx context.Context, namespace, session string, texts []string, everywhere bool) ([]string, error) {
	holder := redacttext.NewHolder(texts, everywhere)
	var ids []string
	err := db.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, namespace, session, content, speaker, coalesce(meta, '') FROM turns
			WHERE (?1 = '' OR namespace = ?1) AND (?2 = '' OR session = ?2) ORDER BY seq`, namespace, session)
		if err != nil {
			return err
		}
		var id, ns, sess, content, speaker, meta string
		return sqlrow.Each(rows, func() error {
			if err := rows.Scan(&id, &ns, &sess, &content, &speaker, &meta); err != nil {
				return err
			}
			if holder.Holds(id, ns, sess, content, speaker, meta) {
				ids = append(ids, id)
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("palace: turn ids: %w", err)
	}
	return ids, nil
}
