package vault

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"
	"time"

	"github.com/engram-dev/engram"
)

// Syncer brings a store's copy of a vault up to date with the folder:
// files whose hash changed are parsed, chunked, embedded and linked again
// (each file in one transaction of the store), new files are added, deleted
// and renamed ones leave the index, and every link is resolved again
// against the documents now indexed. A file Scan or Parse cannot read is
// skipped with a warning and leaves the index as it was.
type Syncer struct {
	Store engram.VaultStore
	// Embedder, if set, embeds every new or changed chunk (title and
	// text); nil indexes for keyword search only.
	Embedder engram.Embedder
	Options  Options
	Logger   *slog.Logger
	// Full indexes every file again, changed or not (after the vector
	// model changed, say).
	Full bool
}

// SyncReport says what a sync did.
type SyncReport struct {
	Vault      string           `json:"vault"`
	Files      int              `json:"files"`     // Markdown files in the folder
	Unchanged  int              `json:"unchanged"` // skipped by size, time or hash
	Indexed    []string         `json:"indexed"`   // new or changed files, re-indexed
	Removed    []string         `json:"removed"`   // deleted or renamed away
	Skipped    []SkippedFile    `json:"skipped"`   // could not be read or parsed
	Unresolved int              `json:"unresolved_links"`
	Warnings   []engram.DocLink `json:"-"`
	Took       time.Duration    `json:"-"`
	TookMS     float64          `json:"took_ms"`
}

// SkippedFile is a file a sync left out, with the reason.
type SkippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Sync syncs the vault at root (an absolute folder) into the store under
// namespace. ctx ends it between files; what is done stays done, and the
// next sync goes on from there.
func (s *Syncer) Sync(ctx context.Context, root, namespace string) (SyncReport, error) {
	start := time.Now()
	logger := s.Logger
	if logger == nil {
		logger = slog.Default()
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return SyncReport{}, err
	}
	rep := SyncReport{Vault: root, Indexed: []string{}, Removed: []string{}, Skipped: []SkippedFile{}}
	stored, err := s.Store.VaultFiles(ctx, root)
	if err != nil {
		return rep, err
	}
	prev := make(map[string]FileInfo, len(stored))
	for p, f := range stored {
		prev[p] = FileInfo{Path: p, Size: f.Size, ModTime: f.ModTime, Hash: f.Hash}
	}
	files, skipped, err := ScanSince(ctx, root, prev)
	if err != nil {
		return rep, err
	}
	rep.Files = len(files)
	for _, sk := range skipped {
		rep.Skipped = append(rep.Skipped, SkippedFile{sk.Path, sk.Reason})
		logger.Warn("vault: file skipped", "vault", root, "path", sk.Path, "reason", sk.Reason)
	}
	seen := make(map[string]bool, len(files))
	var changed []FileInfo
	for _, f := range files {
		seen[f.Path] = true
		if old, ok := stored[f.Path]; ok && !s.Full && old.Hash == f.Hash && old.Size == f.Size && old.ModTime.Equal(f.ModTime) {
			rep.Unchanged++
			continue
		}
		changed = append(changed, f)
	}
	for p := range stored {
		if !seen[p] && !skippedPath(skipped, p) {
			rep.Removed = append(rep.Removed, p)
		}
	}
	sort.Strings(rep.Removed)
	if len(rep.Removed) > 0 {
		if err := s.Store.DeleteVaultDocs(ctx, root, rep.Removed); err != nil {
			return rep, err
		}
	}
	for _, f := range changed {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		doc, err := ParseFile(ctx, root, f.Path, s.Options)
		if err != nil {
			if ctx.Err() != nil {
				return rep, ctx.Err()
			}
			rep.Skipped = append(rep.Skipped, SkippedFile{f.Path, err.Error()})
			logger.Warn("vault: file not indexed", "vault", root, "path", f.Path, "err", err)
			continue
		}
		doc.ModTime = f.ModTime // what the next scan compares with
		if err := s.put(ctx, root, namespace, doc); err != nil {
			return rep, fmt.Errorf("index %s: %w", f.Path, err)
		}
		rep.Indexed = append(rep.Indexed, f.Path)
	}
	if len(rep.Indexed) > 0 || len(rep.Removed) > 0 || len(stored) == 0 {
		if rep.Unresolved, err = s.resolve(ctx, root); err != nil {
			return rep, err
		}
	}
	rep.Took = time.Since(start)
	rep.TookMS = float64(rep.Took.Microseconds()) / 1000
	return rep, nil
}

func skippedPath(skipped []Skipped, p string) bool {
	for _, s := range skipped {
		if s.Path == p {
			return true // unreadable now: keep what was indexed
		}
	}
	return false
}

// put writes one parsed document with its chunks, links and vectors.
func (s *Syncer) put(ctx context.Context, root, namespace string, d Doc) error {
	doc := engram.VaultDoc{Vault: root, Namespace: namespace, Path: d.Path, Title: d.Title, Type: d.Type, Tags: d.Tags,
		Aliases: d.Aliases, Date: d.Date, Hash: d.Hash, Size: d.Size, ModTime: d.ModTime, Chunks: len(d.Chunks), Warnings: d.Warnings}
	chunks := make([]engram.DocChunk, len(d.Chunks))
	for i, c := range d.Chunks {
		chunks[i] = engram.DocChunk{ID: engram.ChunkID(root, d.Path, i, c.Text), Vault: root, Namespace: namespace, Path: d.Path,
			Title: d.Title, Heading: c.Heading, Text: c.Text, StartLine: c.StartLine, EndLine: c.EndLine}
	}
	links := make([]engram.DocLink, len(d.Links))
	for i, l := range d.Links {
		links[i] = engram.DocLink{FromPath: d.Path, FromChunk: l.Chunk, Target: l.Target, Heading: l.Heading, Alias: l.Alias,
			Kind: l.Kind, Line: l.Line}
	}
	var vectors []engram.VectorItem
	if s.Embedder != nil && len(chunks) > 0 {
		texts := make([]string, len(chunks))
		for i, c := range chunks {
			texts[i] = c.Title + "\n" + c.Text
		}
		vecs, err := s.Embedder.Embed(ctx, texts)
		if err == nil && len(vecs) != len(texts) {
			err = fmt.Errorf("embedder returned %d vectors for %d chunks", len(vecs), len(texts))
		}
		if err != nil {
			return fmt.Errorf("embed with %s: %w", s.Embedder.Model(), err)
		}
		for i, c := range chunks {
			vectors = append(vectors, engram.VectorItem{ID: c.ID, Kind: engram.KindDoc, Namespace: namespace, TS: d.ModTime, Vector: vecs[i]})
		}
	}
	return s.Store.PutVaultDoc(ctx, doc, chunks, links, vectors)
}

// resolve resolves every link of the vault against the documents indexed.
func (s *Syncer) resolve(ctx context.Context, root string) (int, error) {
	docs, err := s.Store.Docs(ctx, root)
	if err != nil {
		return 0, err
	}
	refs := make([]DocRef, len(docs))
	for i, d := range docs {
		refs[i] = DocRef{Path: d.Path, Title: d.Title, Aliases: d.Aliases}
	}
	r := NewResolver(refs)
	return s.Store.ResolveVaultLinks(ctx, root, r.Resolve)
}
