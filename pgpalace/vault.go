package pgpalace

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	engram "github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
	"github.com/engram-dev/engram/internal/vecrow"
	"github.com/engram-dev/engram/pgpalace/pgvectors"
)

// The Markdown vaults' documents, chunks and links, as package vault keeps
// them in package palace's file (vault.SQLStore): a document written
// again replaces its chunks and links, and the vectors of its chunks in
// the same transaction; each server's keyword index of the chunks follows
// their change numbers (a document's chunks replaced count a deletion:
// the indexes load again, the vaults being small beside the turns).

// keyChunksDeleted is the palace_meta key counting the deletions of vault
// chunks.
const keyChunksDeleted = "vault_chunks_deleted"

// VaultStore is an engram.VaultStore and engram.DocIndex over the vault
// tables, with the chunks' vectors in one model's store (nil: keyword
// search only).
type VaultStore struct {
	db      *DB
	vectors *pgvectors.Store
}

// Vault returns the palace's vault store, writing the chunks' vectors in
// vectors (nil: none).
func (db *DB) Vault(vectors *pgvectors.Store) VaultStore { return VaultStore{db, vectors} }

var (
	_ engram.VaultStore = VaultStore{}
	_ engram.DocIndex   = VaultStore{}
)

// VaultFiles returns the stored files of a vault by path.
func (s VaultStore) VaultFiles(ctx context.Context, vault string) (map[string]engram.VaultFile, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT path, size, mod_time, hash FROM palace_vault_docs WHERE vault = $1`, vault)
	if err != nil {
		return nil, wrap("vault files", err)
	}
	out := map[string]engram.VaultFile{}
	var f engram.VaultFile
	_, err = pgx.ForEachRow(rows, []any{&f.Path, &f.Size, sqlrow.Time(&f.ModTime), &f.Hash}, func() error { out[f.Path] = f; return nil })
	return out, wrap("vault files", err)
}

const docColumns = `d.vault, d.namespace, d.path, d.title, d.type, d.tags, d.aliases, d.date, d.hash, d.size, d.mod_time, d.warnings,
	(SELECT count(*) FROM palace_vault_chunks c WHERE c.doc = d.n)`

// queryDocs runs q, whose columns are docColumns.
func queryDocs(ctx context.Context, qr pgxQuerier, q string, args ...any) ([]engram.VaultDoc, error) {
	rows, err := qr.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.AppendRows([]engram.VaultDoc(nil), rows, func(r pgx.CollectableRow) (engram.VaultDoc, error) {
		var d engram.VaultDoc
		err := r.Scan(&d.Vault, &d.Namespace, &d.Path, &d.Title, &d.Type, &d.Tags, &d.Aliases, sqlrow.Time(&d.Date), &d.Hash, &d.Size,
			sqlrow.Time(&d.ModTime), &d.Warnings, &d.Chunks)
		return d, err
	})
}

// Docs returns the documents of a vault ("" = every vault), by path.
func (s VaultStore) Docs(ctx context.Context, vault string) ([]engram.VaultDoc, error) {
	out, err := queryDocs(ctx, s.db.pool, `SELECT `+docColumns+` FROM palace_vault_docs d WHERE $1 = '' OR d.vault = $1
		ORDER BY d.vault COLLATE "C", d.path COLLATE "C"`, vault)
	return out, wrap("vault docs", err)
}

// PutVaultDoc replaces a document, its chunks, its links and the vectors
// of its chunks, in one transaction, as package vault's does: a reader
// sees the old document or the new one. The vectors of its old chunks
// not among the new ones go. Errors: EINVALID naming the field for a
// document without vault, namespace or path.
func (s VaultStore) PutVaultDoc(ctx context.Context, doc engram.VaultDoc, chunks []engram.DocChunk, links []engram.DocLink, vectors []engram.VectorItem) error {
	if err := doc.Check(); err != nil {
		return err
	}
	var date *int64
	if v, ok := sqlrow.Nanos(doc.Date); ok && v != nil {
		n := v.(int64) // a date outside what the palace stores is dropped, not fatal
		date = &n
	}
	return s.update(ctx, doc.Vault, []string{doc.Path}, vectors, func(tx pgx.Tx) error {
		if err := deleteDocRows(ctx, tx, doc.Vault, doc.Path); err != nil {
			return err
		}
		var n int64
		err := tx.QueryRow(ctx, `INSERT INTO palace_vault_docs (vault, namespace, path, title, type, tags, aliases, date, hash, size, mod_time, warnings)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
			ON CONFLICT (vault, path) DO UPDATE SET namespace = excluded.namespace, title = excluded.title, type = excluded.type,
				tags = excluded.tags, aliases = excluded.aliases, date = excluded.date, hash = excluded.hash, size = excluded.size,
				mod_time = excluded.mod_time, warnings = excluded.warnings
			RETURNING n`,
			doc.Vault, doc.Namespace, doc.Path, doc.Title, doc.Type, nonNil(doc.Tags), nonNil(doc.Aliases), date, doc.Hash, doc.Size,
			doc.ModTime.UnixNano(), nonNil(doc.Warnings)).Scan(&n)
		if err != nil {
			return err
		}
		var seq int64
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM palace_vault_chunks`).Scan(&seq); err != nil {
			return err
		}
		for i, c := range chunks {
			seq++
			if _, err := tx.Exec(ctx, `INSERT INTO palace_vault_chunks (id, doc, idx, heading, text, folded, start_line, end_line, seq)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, engram.ChunkID(doc.Vault, doc.Path, i, c.Text), n, i, nonNil(c.Heading),
				[]byte(c.Text), folded(c.Text), c.StartLine, c.EndLine, seq); err != nil {
				return errors.Join(errors.New("chunk "+strconv.Itoa(i)), err)
			}
		}
		for _, l := range links {
			var to *string
			if l.ToPath != "" {
				to = &l.ToPath
			}
			if _, err := tx.Exec(ctx, `INSERT INTO palace_vault_links (vault, from_path, chunk, target, heading, alias, kind, line, to_path)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, doc.Vault, doc.Path, l.FromChunk, l.Target, l.Heading, l.Alias, l.Kind, l.Line, to); err != nil {
				return err
			}
		}
		return nil
	})
}

// DeleteVaultDocs removes documents with their chunks, links and chunk
// vectors, in one transaction; links from other documents to them become
// unresolved.
func (s VaultStore) DeleteVaultDocs(ctx context.Context, vault string, paths []string) error {
	return s.update(ctx, vault, paths, nil, func(tx pgx.Tx) error {
		for _, p := range paths {
			if err := deleteDocRows(ctx, tx, vault, p); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM palace_vault_docs WHERE vault = $1 AND path = $2`, vault, p); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE palace_vault_links SET to_path = NULL WHERE vault = $1 AND to_path = $2`, vault, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// update runs write, a change to the documents of paths, in one
// transaction under the turns' write lock (the chunks' change numbers),
// with its vector write when s has vectors: vectors upserted, the old
// chunks' vectors not among them deleted.
func (s VaultStore) update(ctx context.Context, vault string, paths []string, vectors []engram.VectorItem, write func(pgx.Tx) error) error {
	var rows []vecrow.Row
	if s.vectors != nil {
		var err error
		if rows, err = vecrow.Prepare(s.vectors.Model(), s.vectors.Dim(), vectors); err != nil {
			return err
		}
	}
	err := s.db.update(ctx, "vault", func(tx pgx.Tx) error {
		keys := []int64{}
		if s.vectors != nil {
			keys = append(keys, vectorLockKey)
		}
		if err := lockWrites(ctx, tx, keys...); err != nil {
			return err
		}
		var old []string
		if s.vectors != nil {
			q, err := tx.Query(ctx, `SELECT c.id FROM palace_vault_chunks c JOIN palace_vault_docs d ON d.n = c.doc
				WHERE d.vault = $1 AND d.path = ANY($2)`, vault, paths)
			if err != nil {
				return err
			}
			if old, err = pgx.CollectRows(q, pgx.RowTo[string]); err != nil {
				return err
			}
		}
		if err := write(tx); err != nil {
			return err
		}
		if s.vectors == nil {
			return nil
		}
		keep := make(map[string]bool, len(vectors))
		for _, v := range vectors {
			keep[v.ID] = true
		}
		var remove []string
		for _, id := range old {
			if !keep[id] {
				remove = append(remove, id)
			}
		}
		if _, err := pgvectors.Delete(ctx, tx, s.vectors.Model(), remove, s.db.now().UnixNano()); err != nil {
			return err
		}
		return pgvectors.Put(ctx, tx, s.vectors.Model(), rows)
	})
	if err != nil || s.vectors == nil {
		return err
	}
	return s.vectors.CatchUp(ctx)
}

// deleteDocRows removes a document's chunks and links (the document row
// stays), counting the chunks' deletion.
func deleteDocRows(ctx context.Context, tx pgx.Tx, vault, path string) error {
	tag, err := tx.Exec(ctx, `DELETE FROM palace_vault_chunks WHERE doc IN (SELECT n FROM palace_vault_docs WHERE vault = $1 AND path = $2)`, vault, path)
	if err != nil {
		return err
	}
	if tag.RowsAffected() > 0 {
		if err := countDeletion(ctx, tx, keyChunksDeleted); err != nil {
			return err
		}
	}
	_, err = tx.Exec(ctx, `DELETE FROM palace_vault_links WHERE vault = $1 AND from_path = $2`, vault, path)
	return err
}

// ResolveVaultLinks sets the target document of every link of a vault
// with resolve (from path, target as written) and returns how many stay
// unresolved.
func (s VaultStore) ResolveVaultLinks(ctx context.Context, vault string, resolve func(from, target string) (string, bool)) (int, error) {
	unresolved := 0
	err := s.db.update(ctx, "resolve vault links", func(tx pgx.Tx) error {
		unresolved = 0
		rows, err := tx.Query(ctx, `SELECT n, from_path, target, to_path FROM palace_vault_links WHERE vault = $1 ORDER BY n`, vault)
		if err != nil {
			return err
		}
		type link struct {
			n            int64
			from, target string
			to           *string
		}
		all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (link, error) {
			var l link
			return l, r.Scan(&l.n, &l.from, &l.target, &l.to)
		})
		if err != nil {
			return err
		}
		for _, l := range all {
			to, ok := resolve(l.from, l.target)
			if !ok {
				unresolved++
			}
			if ok == (l.to != nil) && to == deref(l.to) {
				continue
			}
			var v *string
			if ok {
				v = &to
			}
			if _, err := tx.Exec(ctx, `UPDATE palace_vault_links SET to_path = $1 WHERE n = $2`, v, l.n); err != nil {
				return err
			}
		}
		return nil
	})
	return unresolved, err
}

const chunkColumns = `c.id, d.vault, d.namespace, d.path, d.title, c.heading, c.text, c.start_line, c.end_line, d.mod_time`

// queryChunks runs q, whose columns are chunkColumns, then extra.
func queryChunks(ctx context.Context, qr pgxQuerier, q string, args ...any) ([]engram.DocChunk, []int64, error) {
	rows, err := qr.Query(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	var ns []int64
	out, err := pgx.AppendRows([]engram.DocChunk(nil), rows, func(r pgx.CollectableRow) (engram.DocChunk, error) {
		var (
			c    engram.DocChunk
			text []byte
			n    int64
		)
		err := r.Scan(&c.ID, &c.Vault, &c.Namespace, &c.Path, &c.Title, &c.Heading, &text, &c.StartLine, &c.EndLine, sqlrow.Time(&c.ModTime), &n)
		c.Text = string(text)
		ns = append(ns, n)
		return c, err
	})
	return out, ns, err
}

// chunkChanges reads the chunks changed after a change number for the
// chunks' keyword index: the document's title and the chunk's text, with
// its heading path as a second field, as package vault's FTS5 table
// holds them.
func chunkChanges(ctx context.Context, tx pgx.Tx, after int64, limit int) ([]kwindex.Row, error) {
	q, err := tx.Query(ctx, `SELECT c.n, c.seq, d.namespace, d.title, c.text, c.heading FROM palace_vault_chunks c
		JOIN palace_vault_docs d ON d.n = c.doc WHERE c.seq > $1 ORDER BY c.seq LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(q, func(r pgx.CollectableRow) (kwindex.Row, error) {
		var (
			row     kwindex.Row
			title   string
			text    []byte
			heading []string
		)
		if err := r.Scan(&row.Doc.Key, &row.Change, &row.Doc.Namespace, &title, &text, &heading); err != nil {
			return row, err
		}
		var err error
		if row.Doc.Text, err = kwindex.IndexText(title + "\n" + string(text)); err != nil {
			return row, err
		}
		row.Doc.Second, err = kwindex.IndexText(strings.Join(heading, " "))
		return row, err
	})
}

// SearchChunks ranks the chunks holding any word of q.Text by BM25
// (higher is better); when that finds fewer than q.Limit, chunks holding
// a term of three or more characters inside a longer token follow, scored
// below, as package vault's does. q.From and q.To are ignored.
func (s VaultStore) SearchChunks(ctx context.Context, q engram.TextQuery) ([]engram.ChunkHit, error) {
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	limit := min(max(q.Limit, 1), maxSearchLimit)
	var hits []kwindex.Hit
	err = fromIndex(ctx, s.db.vkw, func() (ok bool, err error) {
		hits, ok, err = s.db.vkw.Best(ctx, nil, queryWords(termWords(terms)), kwindex.Filter{Namespace: q.Namespace}, limit)
		return ok, err
	})
	if err != nil {
		return nil, wrap("search chunks", err)
	}
	var out []engram.ChunkHit
	seen := map[string]bool{}
	floor := 1.0
	if len(hits) > 0 {
		chunks, ns, err := queryChunks(ctx, s.db.pool, `SELECT `+chunkColumns+`, c.n FROM palace_vault_chunks c
			JOIN palace_vault_docs d ON d.n = c.doc WHERE c.n = ANY($1)`, kwindex.Keys(hits))
		if err != nil {
			return nil, wrap("search chunks", err)
		}
		byN := make(map[int64]engram.DocChunk, len(chunks))
		for i, c := range chunks {
			byN[ns[i]] = c
		}
		for _, h := range hits {
			if c, ok := byN[h.Key]; ok { // a chunk gone meanwhile is left out
				seen[c.ID] = true
				out = append(out, engram.ChunkHit{Chunk: c, Score: h.Score})
				floor = h.Score
			}
		}
	}
	for _, t := range terms {
		if len(out) >= limit || t.N < 3 {
			continue
		}
		chunks, _, err := queryChunks(ctx, s.db.pool, `SELECT `+chunkColumns+`, c.n FROM palace_vault_chunks c
			JOIN palace_vault_docs d ON d.n = c.doc WHERE c.folded LIKE $1 AND ($2 = '' OR d.namespace = $2) ORDER BY c.n LIMIT $3`,
			"%"+likeEscaper.Replace(folded(t.Text))+"%", q.Namespace, limit)
		if err != nil {
			return nil, wrap("search chunks", err)
		}
		for _, c := range chunks {
			if !seen[c.ID] && len(out) < limit {
				seen[c.ID] = true
				floor /= 2
				out = append(out, engram.ChunkHit{Chunk: c, Score: floor})
			}
		}
	}
	return out, nil
}

// GetChunks returns the chunks with the given ids, in the order of ids;
// unknown ids are skipped.
func (s VaultStore) GetChunks(ctx context.Context, ids []string) ([]engram.DocChunk, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	got, _, err := queryChunks(ctx, s.db.pool, `SELECT `+chunkColumns+`, c.n FROM palace_vault_chunks c
		JOIN palace_vault_docs d ON d.n = c.doc WHERE c.id = ANY($1)`, ids)
	if err != nil {
		return nil, wrap("get chunks", err)
	}
	return sqlrow.InOrder(ids, got, func(c engram.DocChunk) string { return c.ID }), nil
}

// Reach returns the documents of a vault reached from the documents of
// paths by following links, up to depth: each once, at its smallest depth,
// through the first document (by path) it was reached through then.
func (s VaultStore) Reach(ctx context.Context, vault string, paths []string, depth int) ([]engram.GraphDoc, error) {
	if depth <= 0 {
		depth = engram.DefaultGraphDepth
	}
	depth = min(depth, engram.MaxGraphDepth)
	rows, err := s.db.pool.Query(ctx, `WITH RECURSIVE reach(path, depth, via) AS (
			SELECT p, 0, '' FROM unnest($2::text[]) AS p
			UNION
			SELECT l.to_path, r.depth + 1, r.path FROM reach r
			JOIN palace_vault_links l ON l.vault = $1 AND l.from_path = r.path
			WHERE l.to_path IS NOT NULL AND r.depth < $3
		), best AS (
			SELECT DISTINCT ON (r.path) r.path, r.depth, r.via FROM reach r
			WHERE r.depth > 0 AND r.path <> ALL($2::text[]) ORDER BY r.path, r.depth, r.via COLLATE "C"
		)
		SELECT b.path, b.depth, b.via, d.title, d.type FROM best b JOIN palace_vault_docs d ON d.vault = $1 AND d.path = b.path
		ORDER BY b.depth, b.path COLLATE "C"`, vault, nonNil(paths), depth)
	if err != nil {
		return nil, wrap("reach", err)
	}
	out, err := pgx.AppendRows([]engram.GraphDoc(nil), rows, func(r pgx.CollectableRow) (engram.GraphDoc, error) {
		var g engram.GraphDoc
		return g, r.Scan(&g.Path, &g.Depth, &g.Via, &g.Title, &g.Type)
	})
	return out, wrap("reach", err)
}

// FirstChunks returns the first chunk of each document, in the order of
// paths.
func (s VaultStore) FirstChunks(ctx context.Context, vault string, paths []string) ([]engram.DocChunk, error) {
	var out []engram.DocChunk
	for _, p := range paths {
		got, _, err := queryChunks(ctx, s.db.pool, `SELECT `+chunkColumns+`, c.n FROM palace_vault_chunks c
			JOIN palace_vault_docs d ON d.n = c.doc WHERE d.vault = $1 AND d.path = $2 ORDER BY c.idx LIMIT 1`, vault, p)
		if err != nil {
			return nil, wrap("first chunks", err)
		}
		out = append(out, got...)
	}
	return out, nil
}

// DocGraph returns a document's neighbourhood: the documents its links
// reach within depth, those linking to it, and its unresolved links. doc
// is a path, or a title or alias (its ASCII letters in any case).
// Errors: ENOTFOUND for an unknown document.
func (s VaultStore) DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error) {
	var g engram.DocGraph
	docs, err := queryDocs(ctx, s.db.pool, `SELECT `+docColumns+` FROM palace_vault_docs d
		WHERE ($1 = '' OR d.vault = $1) AND (d.path = $2 OR `+asciiLower("d.title")+` = `+asciiLower("$2")+`
			OR EXISTS (SELECT 1 FROM unnest(d.aliases) a WHERE `+asciiLower("a")+` = `+asciiLower("$2")+`))
		ORDER BY d.path = $2 DESC, d.path COLLATE "C" LIMIT 1`, vault, doc)
	if err != nil {
		return g, wrap("doc graph", err)
	}
	if len(docs) == 0 {
		return g, engram.Errorf(engram.ENOTFOUND, "no document %q in the indexed vaults", doc)
	}
	g.Doc = docs[0]
	if g.Linked, err = s.Reach(ctx, g.Doc.Vault, []string{g.Doc.Path}, depth); err != nil {
		return g, err
	}
	rows, err := s.db.pool.Query(ctx, `SELECT DISTINCT l.from_path COLLATE "C", d.title, d.type FROM palace_vault_links l
		JOIN palace_vault_docs d ON d.vault = l.vault AND d.path = l.from_path
		WHERE l.vault = $1 AND l.to_path = $2 AND l.from_path <> l.to_path ORDER BY 1`, g.Doc.Vault, g.Doc.Path)
	if err != nil {
		return g, wrap("doc graph", err)
	}
	g.Backlinks, err = pgx.AppendRows([]engram.GraphDoc{}, rows, func(r pgx.CollectableRow) (engram.GraphDoc, error) {
		b := engram.GraphDoc{Depth: 1}
		return b, r.Scan(&b.Path, &b.Title, &b.Type)
	})
	if err != nil {
		return g, wrap("doc graph", err)
	}
	if g.Unresolved, err = s.unresolved(ctx, g.Doc.Vault, g.Doc.Path); err != nil {
		return g, err
	}
	if g.Linked == nil {
		g.Linked = []engram.GraphDoc{}
	}
	return g, nil
}

// UnresolvedLinks lists the links of a vault ("" = every vault) whose
// target is no document.
func (s VaultStore) UnresolvedLinks(ctx context.Context, vault string) ([]engram.DocLink, error) {
	return s.unresolved(ctx, vault, "")
}

// unresolved lists the unresolved links of a vault ("": every vault) from
// the document from ("": every document).
func (s VaultStore) unresolved(ctx context.Context, vault, from string) ([]engram.DocLink, error) {
	rows, err := s.db.pool.Query(ctx, `SELECT from_path, chunk, target, heading, alias, kind, line FROM palace_vault_links
		WHERE ($1 = '' OR vault = $1) AND ($2 = '' OR from_path = $2) AND to_path IS NULL ORDER BY from_path COLLATE "C", line`, vault, from)
	if err != nil {
		return nil, wrap("unresolved links", err)
	}
	out, err := pgx.AppendRows([]engram.DocLink{}, rows, func(r pgx.CollectableRow) (engram.DocLink, error) {
		var l engram.DocLink
		return l, r.Scan(&l.FromPath, &l.FromChunk, &l.Target, &l.Heading, &l.Alias, &l.Kind, &l.Line)
	})
	return out, wrap("unresolved links", err)
}
