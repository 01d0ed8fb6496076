package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/engram-dev/engram"
	"github.com/engram-dev/engram/internal/kwindex"
	"github.com/engram-dev/engram/internal/sqlrow"
)

// DB runs the transactions of the palace, whose SQLite file holds the
// vaults' tables (migration 0006_vault); *palace.DB implements it. The
// store takes this interface rather than the palace so that adapter
// packages stay independent, as the scheduler keeps its job state.
type DB interface {
	// Update runs fn in a write transaction, committed if fn returns nil.
	Update(ctx context.Context, fn func(*sql.Tx) error) error
	// View runs fn in a read-only transaction.
	View(ctx context.Context, fn func(*sql.Tx) error) error
}

// Vectors writes the vectors of one model in the transaction of the rows
// they go with; *palace.VectorStore implements it.
type Vectors interface {
	// UpdateWith runs fn in a write transaction and, in the same
	// transaction, upserts items and deletes the vectors of remove.
	UpdateWith(ctx context.Context, items []engram.VectorItem, remove []string, fn func(*sql.Tx) error) error
}

// SQLStore is an engram.VaultStore and engram.DocIndex over the vault
// tables of the palace: documents, their chunks (with a keyword and a
// substring index) and links, and, when Vectors is set, the chunks'
// vectors in that model's store, written in the same transaction.
type SQLStore struct {
	DB      DB
	Vectors Vectors // nil: keyword search only
}

// Store is a palace's vault tables as the engine holds them: what a sync
// writes (engram.VaultStore), recall searches (engram.DocIndex) and the
// listings read. SQLStore is the SQLite file's; package pgpalace has its
// own.
type Store interface {
	engram.VaultStore
	engram.DocIndex
	DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error)
	UnresolvedLinks(ctx context.Context, vault string) ([]engram.DocLink, error)
}

var _ Store = SQLStore{}

// maxSearchLimit bounds a search's hits, as the palace bounds its own.
const maxSearchLimit = 1000

// VaultFiles implements engram.VaultStore: the stored files of a vault by
// path.
func (s SQLStore) VaultFiles(ctx context.Context, vault string) (map[string]engram.VaultFile, error) {
	out := map[string]engram.VaultFile{}
	err := s.DB.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT path, size, mod_time, hash FROM vault_docs WHERE vault = ?`, vault)
		if err != nil {
			return err
		}
		return sqlrow.Scanner(func(f *engram.VaultFile) []any {
			return []any{&f.Path, &f.Size, sqlrow.Time(&f.ModTime), &f.Hash}
		})(rows, func(f engram.VaultFile) { out[f.Path] = f })
	})
	if err != nil {
		return nil, fmt.Errorf("vault: stored files: %w", err)
	}
	return out, nil
}

const docColumns = `d.vault, d.namespace, d.path, d.title, d.type, d.tags, d.aliases, d.date, d.hash, d.size, d.mod_time, d.warnings,
	(SELECT count(*) FROM vault_chunks c WHERE c.doc = d.n)`

// readDocs reads rows of docColumns.
var readDocs = sqlrow.Scanner(func(d *engram.VaultDoc) []any {
	return []any{&d.Vault, &d.Namespace, &d.Path, &d.Title, &d.Type, sqlrow.JSON(&d.Tags), sqlrow.JSON(&d.Aliases),
		sqlrow.Time(&d.Date), &d.Hash, &d.Size, sqlrow.Time(&d.ModTime), sqlrow.JSON(&d.Warnings), &d.Chunks}
})

// Docs implements engram.VaultStore: the documents of a vault ("" = every
// vault), by path.
func (s SQLStore) Docs(ctx context.Context, vault string) ([]engram.VaultDoc, error) {
	out, err := sqlrow.List(ctx, s.DB, readDocs,
		`SELECT `+docColumns+` FROM vault_docs d WHERE ?1 = '' OR d.vault = ?1 ORDER BY d.vault, d.path`, vault)
	if err != nil {
		return nil, fmt.Errorf("vault: docs: %w", err)
	}
	return out, nil
}

// PutVaultDoc implements engram.VaultStore: it replaces a document, its
// chunks (and their keyword entries), its links and the vectors of its
// chunks, in one transaction: a reader sees the old document or the new
// one, never a mix. The vectors of the document's old chunks that are not
// among the new ones are deleted with it. Chunk IDs are set here
// (engram.ChunkID). Errors: EINVALID naming the field for a document
// without vault, namespace or path.
func (s SQLStore) PutVaultDoc(ctx context.Context, doc engram.VaultDoc, chunks []engram.DocChunk, links []engram.DocLink, vectors []engram.VectorItem) error {
	if err := doc.Check(); err != nil {
		return err
	}
	date, ok := sqlrow.Nanos(doc.Date)
	if !ok {
		date = nil // a date outside what the palace stores is dropped, not fatal
	}
	type row struct {
		c             engram.DocChunk
		text, heading string
	}
	rows := make([]row, len(chunks))
	for i, c := range chunks {
		text, err := kwindex.IndexText(doc.Title + "\n" + c.Text)
		if err != nil {
			return err
		}
		heading, err := kwindex.IndexText(strings.Join(c.Heading, " "))
		if err != nil {
			return err
		}
		rows[i] = row{c, text, heading}
	}
	return s.update(ctx, doc.Vault, []string{doc.Path}, vectors, func(tx *sql.Tx) error {
		if err := deleteDocRows(ctx, tx, doc.Vault, doc.Path); err != nil {
			return err
		}
		var n int64
		err := tx.QueryRowContext(ctx, `INSERT INTO vault_docs (vault, namespace, path, title, type, tags, aliases, date, hash, size, mod_time, warnings)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (vault, path) DO UPDATE SET namespace = excluded.namespace, title = excluded.title, type = excluded.type,
				tags = excluded.tags, aliases = excluded.aliases, date = excluded.date, hash = excluded.hash, size = excluded.size,
				mod_time = excluded.mod_time, warnings = excluded.warnings
			RETURNING n`,
			doc.Vault, doc.Namespace, doc.Path, doc.Title, doc.Type, jsonList(doc.Tags), jsonList(doc.Aliases), date, doc.Hash, doc.Size,
			doc.ModTime.UnixNano(), jsonList(doc.Warnings)).Scan(&n)
		if err != nil {
			return err
		}
		for i, r := range rows {
			id := engram.ChunkID(doc.Vault, doc.Path, i, r.c.Text)
			var cn int64
			if err := tx.QueryRowContext(ctx, `INSERT INTO vault_chunks (id, doc, idx, heading, text, start_line, end_line)
				VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING n`, id, n, i, jsonList(r.c.Heading), r.c.Text, r.c.StartLine, r.c.EndLine).Scan(&cn); err != nil {
				return fmt.Errorf("chunk %d: %w", i, err)
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO vault_chunks_fts (rowid, text, heading) VALUES (?, ?, ?)`, cn, r.text, r.heading); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO vault_chunks_trigram (rowid, text) VALUES (?, ?)`, cn, kwindex.NFKC(r.c.Text)); err != nil {
				return err
			}
		}
		for _, l := range links {
			var to any
			if l.ToPath != "" {
				to = l.ToPath
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO vault_links (vault, from_path, chunk, target, heading, alias, kind, line, to_path)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, doc.Vault, doc.Path, l.FromChunk, l.Target, l.Heading, l.Alias, l.Kind, l.Line, to); err != nil {
				return err
			}
		}
		return nil
	})
}

// jsonList is a list as a JSON column holds it: [] for none.
func jsonList(s []string) string {
	if s == nil {
		s = []string{}
	}
	return sqlrow.JSONList(s)
}

// DeleteVaultDocs implements engram.VaultStore: it removes documents
// (deleted or renamed files) with their chunks, links and chunk vectors, in
// one transaction. Links from other documents to them become unresolved.
func (s SQLStore) DeleteVaultDocs(ctx context.Context, vault string, paths []string) error {
	return s.update(ctx, vault, paths, nil, func(tx *sql.Tx) error {
		for _, p := range paths {
			if err := deleteDocRows(ctx, tx, vault, p); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM vault_docs WHERE vault = ? AND path = ?`, vault, p); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE vault_links SET to_path = NULL WHERE vault = ? AND to_path = ?`, vault, p); err != nil {
				return err
			}
		}
		return nil
	})
}

// update runs write, a change to the documents of paths, in one
// transaction with their vector write, if s has vectors: vectors
// upserted, the old chunks' vectors not among them removed.
func (s SQLStore) update(ctx context.Context, vault string, paths []string, vectors []engram.VectorItem, write func(*sql.Tx) error) error {
	var remove []string
	if s.Vectors != nil {
		var old []string
		err := s.DB.View(ctx, func(tx *sql.Tx) (err error) {
			old, err = sqlrow.Strings(ctx, tx, `SELECT c.id FROM vault_chunks c JOIN vault_docs d ON d.n = c.doc
				WHERE d.vault = ? AND d.path IN (SELECT value FROM json_each(?))`, vault, sqlrow.JSONList(paths))
			return err
		})
		if err != nil {
			return fmt.Errorf("vault: chunk ids: %w", err)
		}
		keep := make(map[string]bool, len(vectors))
		for _, v := range vectors {
			keep[v.ID] = true
		}
		for _, id := range old {
			if !keep[id] {
				remove = append(remove, id)
			}
		}
	}
	var err error
	if s.Vectors != nil && (len(vectors) > 0 || len(remove) > 0) {
		err = s.Vectors.UpdateWith(ctx, vectors, remove, write)
	} else {
		err = s.DB.Update(ctx, write)
	}
	var e *engram.Error
	if err != nil && !errors.As(err, &e) {
		err = fmt.Errorf("vault: %w", err)
	}
	return err
}

// deleteDocRows removes a document's chunks, their keyword entries and its
// links (the document row stays).
func deleteDocRows(ctx context.Context, tx *sql.Tx, vault, path string) error {
	for _, q := range []string{
		`DELETE FROM vault_chunks_fts WHERE rowid IN (SELECT c.n FROM vault_chunks c JOIN vault_docs d ON d.n = c.doc WHERE d.vault = ?1 AND d.path = ?2)`,
		`DELETE FROM vault_chunks_trigram WHERE rowid IN (SELECT c.n FROM vault_chunks c JOIN vault_docs d ON d.n = c.doc WHERE d.vault = ?1 AND d.path = ?2)`,
		`DELETE FROM vault_chunks WHERE doc IN (SELECT n FROM vault_docs WHERE vault = ?1 AND path = ?2)`,
		`DELETE FROM vault_links WHERE vault = ?1 AND from_path = ?2`,
	} {
		if _, err := tx.ExecContext(ctx, q, vault, path); err != nil {
			return err
		}
	}
	return nil
}

// ResolveVaultLinks implements engram.VaultStore: it sets the target
// document of every link of a vault with resolve (from path, target as
// written), and returns how many stay unresolved. Run it after documents
// come and go: a link to a document added later resolves then.
func (s SQLStore) ResolveVaultLinks(ctx context.Context, vault string, resolve func(from, target string) (string, bool)) (int, error) {
	type link struct {
		rowid        int64
		from, target string
		to           sql.NullString
	}
	unresolved := 0
	err := s.DB.Update(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT rowid, from_path, target, to_path FROM vault_links WHERE vault = ?`, vault)
		if err != nil {
			return err
		}
		all, err := sqlrow.All(rows, func(l *link) []any { return []any{&l.rowid, &l.from, &l.target, &l.to} })
		if err != nil {
			return err
		}
		for _, l := range all {
			to, ok := resolve(l.from, l.target)
			if !ok {
				unresolved++
			}
			if ok == l.to.Valid && to == l.to.String {
				continue
			}
			var v any
			if ok {
				v = to
			}
			if _, err := tx.ExecContext(ctx, `UPDATE vault_links SET to_path = ? WHERE rowid = ?`, v, l.rowid); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("vault: resolve links: %w", err)
	}
	return unresolved, nil
}

const chunkColumns = `c.id, d.vault, d.namespace, d.path, d.title, c.heading, c.text, c.start_line, c.end_line, d.mod_time`

// scanChunks reads rows of chunkColumns, optionally followed by a rank.
func scanChunks(rows *sql.Rows, fn func(engram.DocChunk, float64)) error {
	return sqlrow.EachRanked(rows, func(r *sqlrow.Ranked) error {
		var c engram.DocChunk
		rank, err := r.Scan(&c.ID, &c.Vault, &c.Namespace, &c.Path, &c.Title, sqlrow.JSON(&c.Heading), &c.Text, &c.StartLine, &c.EndLine,
			sqlrow.Time(&c.ModTime))
		if err != nil {
			return err
		}
		fn(c, rank)
		return nil
	})
}

// readChunks passes each chunk of rows to add.
func readChunks(rows *sql.Rows, add func(engram.DocChunk)) error {
	return scanChunks(rows, func(c engram.DocChunk, _ float64) { add(c) })
}

// SearchChunks implements engram.DocIndex: it ranks the chunks holding any
// word of q.Text by BM25 (higher is better); when that finds fewer than
// q.Limit, chunks holding a term of three or more characters inside a
// longer token (an identifier such as port:6432) follow, scored below.
// q.From and q.To are ignored: documents are not dated turns.
func (s SQLStore) SearchChunks(ctx context.Context, q engram.TextQuery) ([]engram.ChunkHit, error) {
	terms, err := kwindex.QueryTerms(q.Text)
	if err != nil || len(terms) == 0 {
		return nil, err
	}
	words := make([]string, len(terms))
	for i, t := range terms {
		words[i] = t.Text
	}
	limit := min(max(q.Limit, 1), maxSearchLimit)
	var out []engram.ChunkHit
	seen := map[string]bool{}
	err = s.DB.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+chunkColumns+`, f.rank FROM vault_chunks_fts f
			JOIN vault_chunks c ON c.n = f.rowid JOIN vault_docs d ON d.n = c.doc
			WHERE vault_chunks_fts MATCH ?1 AND (?2 = '' OR d.namespace = ?2) ORDER BY f.rank LIMIT ?3`, sqlrow.Match(words...), q.Namespace, limit)
		if err != nil {
			return err
		}
		floor := 1.0
		if err := scanChunks(rows, func(c engram.DocChunk, rank float64) {
			seen[c.ID] = true
			out = append(out, engram.ChunkHit{Chunk: c, Score: -rank})
			floor = -rank
		}); err != nil {
			return err
		}
		for _, t := range terms {
			if len(out) >= limit || t.N < 3 {
				continue
			}
			rows, err := tx.QueryContext(ctx, `SELECT `+chunkColumns+` FROM vault_chunks_trigram g
				JOIN vault_chunks c ON c.n = g.rowid JOIN vault_docs d ON d.n = c.doc
				WHERE vault_chunks_trigram MATCH ?1 AND (?2 = '' OR d.namespace = ?2) LIMIT ?3`,
				sqlrow.Match(t.Text), q.Namespace, limit)
			if err != nil {
				return err
			}
			if err := readChunks(rows, func(c engram.DocChunk) {
				if !seen[c.ID] && len(out) < limit {
					seen[c.ID] = true
					floor /= 2
					out = append(out, engram.ChunkHit{Chunk: c, Score: floor})
				}
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vault: search chunks: %w", err)
	}
	return out, nil
}

// GetChunks implements engram.DocIndex: the chunks with the given ids, in
// the order of ids; unknown ids (a chunk that changed since its vector was
// written) are skipped.
func (s SQLStore) GetChunks(ctx context.Context, ids []string) ([]engram.DocChunk, error) {
	out, err := sqlrow.ByIDs(ctx, s.DB, `SELECT `+chunkColumns+` FROM vault_chunks c JOIN vault_docs d ON d.n = c.doc WHERE c.id IN `, ids,
		readChunks, func(c engram.DocChunk) string { return c.ID })
	if err != nil {
		return nil, fmt.Errorf("vault: get chunks: %w", err)
	}
	return out, nil
}

// reachSQL follows links from the documents of the JSON list ?2 up to
// depth ?3, with a recursive CTE: each document once, at its smallest
// depth, with the document it was first reached through.
const reachSQL = `WITH RECURSIVE reach(path, depth, via) AS (
		SELECT value, 0, '' FROM json_each(?2)
		UNION
		SELECT l.to_path, r.depth + 1, r.path FROM reach r
		JOIN vault_links l ON l.vault = ?1 AND l.from_path = r.path
		WHERE l.to_path IS NOT NULL AND r.depth < ?3
	)
	SELECT r.path, min(r.depth), r.via, d.title, d.type FROM reach r JOIN vault_docs d ON d.vault = ?1 AND d.path = r.path
	WHERE r.depth > 0 AND r.path NOT IN (SELECT value FROM json_each(?2))
	GROUP BY r.path ORDER BY min(r.depth), r.path`

// Reach implements engram.DocIndex: the documents of a vault reached from
// the documents of paths by following links, up to depth (each once, at
// its smallest depth).
func (s SQLStore) Reach(ctx context.Context, vault string, paths []string, depth int) ([]engram.GraphDoc, error) {
	if depth <= 0 {
		depth = engram.DefaultGraphDepth
	}
	depth = min(depth, engram.MaxGraphDepth)
	out, err := sqlrow.List(ctx, s.DB, sqlrow.Scanner(func(g *engram.GraphDoc) []any { return []any{&g.Path, &g.Depth, &g.Via, &g.Title, &g.Type} }),
		reachSQL, vault, sqlrow.JSONList(paths), depth)
	if err != nil {
		return nil, fmt.Errorf("vault: reach: %w", err)
	}
	return out, nil
}

// FirstChunks implements engram.DocIndex: the first chunk of each document
// (its title and opening section), in the order of paths: what a linked
// document contributes to recall.
func (s SQLStore) FirstChunks(ctx context.Context, vault string, paths []string) ([]engram.DocChunk, error) {
	var out []engram.DocChunk
	err := s.DB.View(ctx, func(tx *sql.Tx) error {
		for _, p := range paths {
			rows, err := tx.QueryContext(ctx, `SELECT `+chunkColumns+` FROM vault_chunks c JOIN vault_docs d ON d.n = c.doc
				WHERE d.vault = ? AND d.path = ? ORDER BY c.idx LIMIT 1`, vault, p)
			if err != nil {
				return err
			}
			if err := readChunks(rows, func(c engram.DocChunk) { out = append(out, c) }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("vault: first chunks: %w", err)
	}
	return out, nil
}

// DocGraph returns a document's neighbourhood: the documents its links
// reach within depth (recursively), the documents linking to it, and its
// unresolved links. doc is a path, or a title or alias (case-insensitive).
// Errors: ENOTFOUND for an unknown document.
func (s SQLStore) DocGraph(ctx context.Context, vault, doc string, depth int) (engram.DocGraph, error) {
	var g engram.DocGraph
	err := s.DB.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+docColumns+` FROM vault_docs d
			WHERE (?1 = '' OR d.vault = ?1) AND (d.path = ?2 OR lower(d.title) = lower(?2)
				OR EXISTS (SELECT 1 FROM json_each(d.aliases) a WHERE lower(a.value) = lower(?2)))
			ORDER BY d.path = ?2 DESC, d.path LIMIT 1`, vault, doc)
		if err != nil {
			return err
		}
		found := false
		if err := readDocs(rows, func(d engram.VaultDoc) { g.Doc, found = d, true }); err != nil {
			return err
		}
		if !found {
			return engram.Errorf(engram.ENOTFOUND, "no document %q in the indexed vaults", doc)
		}
		return nil
	})
	if err != nil {
		var e *engram.Error
		if errors.As(err, &e) {
			return g, err
		}
		return g, fmt.Errorf("vault: doc graph: %w", err)
	}
	if g.Linked, err = s.Reach(ctx, g.Doc.Vault, []string{g.Doc.Path}, depth); err != nil {
		return g, err
	}
	err = s.DB.View(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT DISTINCT l.from_path, d.title, d.type FROM vault_links l
			JOIN vault_docs d ON d.vault = l.vault AND d.path = l.from_path
			WHERE l.vault = ? AND l.to_path = ? AND l.from_path <> l.to_path ORDER BY l.from_path`, g.Doc.Vault, g.Doc.Path)
		if err != nil {
			return err
		}
		g.Backlinks, err = sqlrow.All(rows, func(b *engram.GraphDoc) []any { return []any{&b.Path, &b.Title, &b.Type} })
		if err != nil {
			return err
		}
		for i := range g.Backlinks {
			g.Backlinks[i].Depth = 1
		}
		g.Unresolved, err = unresolvedLinks(ctx, tx, g.Doc.Vault, g.Doc.Path)
		return err
	})
	if err != nil {
		return g, fmt.Errorf("vault: doc graph: %w", err)
	}
	if g.Linked == nil {
		g.Linked = []engram.GraphDoc{}
	}
	if g.Backlinks == nil {
		g.Backlinks = []engram.GraphDoc{}
	}
	return g, nil
}

// UnresolvedLinks lists the links of a vault ("" = every vault) whose
// target is no document, for `engram vault sync` to report.
func (s SQLStore) UnresolvedLinks(ctx context.Context, vault string) ([]engram.DocLink, error) {
	var out []engram.DocLink
	err := s.DB.View(ctx, func(tx *sql.Tx) (err error) {
		out, err = unresolvedLinks(ctx, tx, vault, "")
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("vault: unresolved links: %w", err)
	}
	return out, nil
}

func unresolvedLinks(ctx context.Context, tx *sql.Tx, vault, from string) ([]engram.DocLink, error) {
	rows, err := tx.QueryContext(ctx, `SELECT from_path, chunk, target, heading, alias, kind, line FROM vault_links
		WHERE (?1 = '' OR vault = ?1) AND (?2 = '' OR from_path = ?2) AND to_path IS NULL ORDER BY from_path, line`, vault, from)
	if err != nil {
		return nil, err
	}
	out, err := sqlrow.All(rows, func(l *engram.DocLink) []any {
		return []any{&l.FromPath, &l.FromChunk, &l.Target, &l.Heading, &l.Alias, &l.Kind, &l.Line}
	})
	if out == nil && err == nil {
		out = []engram.DocLink{} // an empty list, not null, in JSON
	}
	return out, err
}
