package engram

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// KindDoc is the result kind of a vault document chunk.
const KindDoc = "doc"

// VaultDoc is a Markdown file of a vault as the palace holds it.
type VaultDoc struct {
	Vault     string    `json:"vault"` // the vault's root folder, absolute
	Namespace string    `json:"namespace"`
	Path      string    `json:"path"` // slash-separated, relative to the vault root
	Title     string    `json:"title"`
	Type      string    `json:"type,omitempty"` // adr, incident, rule ...
	Tags      []string  `json:"tags,omitempty"`
	Aliases   []string  `json:"aliases,omitempty"`
	Date      time.Time `json:"date,omitzero"`
	Hash      string    `json:"hash"`
	Size      int64     `json:"size"`
	ModTime   time.Time `json:"mod_time"`
	Chunks    int       `json:"chunks"`
	Warnings  []string  `json:"warnings,omitempty"`
}

// Check reports a document no store keeps: EINVALID naming the field for
// one without vault, namespace or path.
func (d VaultDoc) Check() error {
	switch {
	case d.Vault == "":
		return FieldError("vault", "vault is required")
	case d.Namespace == "":
		return FieldError("namespace", "namespace is required")
	case d.Path == "":
		return FieldError("path", "path is required")
	}
	return nil
}

// DocChunk is a section (or part of one) of a vault document: the unit of
// search.
type DocChunk struct {
	ID        string    `json:"id"`
	Vault     string    `json:"vault"`
	Namespace string    `json:"namespace"`
	Path      string    `json:"path"`
	Title     string    `json:"title"`   // the document's
	Heading   []string  `json:"heading"` // heading path
	Text      string    `json:"text"`
	StartLine int       `json:"start_line"`
	EndLine   int       `json:"end_line"`
	ModTime   time.Time `json:"mod_time"`
}

// DocLink is a link from a chunk of one document to another document.
// ToPath is empty while the target resolves to no document of the vault.
type DocLink struct {
	FromPath  string `json:"from"`
	FromChunk int    `json:"chunk"`
	Target    string `json:"target"` // as written
	Heading   string `json:"heading,omitempty"`
	Alias     string `json:"alias,omitempty"`
	Kind      string `json:"kind"` // wiki or markdown
	Line      int    `json:"line"`
	ToPath    string `json:"to,omitempty"`
}

// GraphDoc is a document reached from another by following links: its
// depth (1: linked directly) and the document it was reached through.
type GraphDoc struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	Type  string `json:"type,omitempty"`
	Depth int    `json:"depth"`
	Via   string `json:"via,omitempty"`
}

// DocGraph is the neighbourhood of a document: the documents its links
// reach within a depth, and its links that resolve to nothing.
type DocGraph struct {
	Doc        VaultDoc   `json:"doc"`
	Linked     []GraphDoc `json:"linked"`
	Backlinks  []GraphDoc `json:"backlinks"`
	Unresolved []DocLink  `json:"unresolved"`
}

// ChunkHit is a chunk found by a search, with its score.
type ChunkHit struct {
	Chunk DocChunk
	Score float64
}

// VaultService reads the indexed vaults, for /v1/graph and `engram vault`.
type VaultService interface {
	// Docs lists a vault's documents ("" = every vault).
	Docs(ctx context.Context, vault string) ([]VaultDoc, error)
	// DocGraph returns the documents linked from doc (a path, or a title or
	// alias) within depth, following links recursively. ENOTFOUND for an
	// unknown document.
	DocGraph(ctx context.Context, vault, doc string, depth int) (DocGraph, error)
}

// VaultFile is what a store knows of a vault file without reading it: what
// an incremental sync compares with the folder.
type VaultFile struct {
	Path    string
	Size    int64
	ModTime time.Time
	Hash    string
}

// ChunkID is the id of a document chunk: derived from the vault, the path,
// its position and its text, so an unchanged chunk keeps its id (and its
// vector) when its document is indexed again.
func ChunkID(vault, path string, idx int, text string) string {
	h := sha256.Sum256([]byte(vault + "\x00" + path + "\x00" + strconv.Itoa(idx) + "\x00" + text))
	return "chunk-" + hex.EncodeToString(h[:])[:20]
}

// VaultStore is where a vault sync writes (vault.SQLStore implements it in
// the palace's SQLite file, with the vectors of one model).
type VaultStore interface {
	// VaultFiles returns the stored files of a vault by path.
	VaultFiles(ctx context.Context, vault string) (map[string]VaultFile, error)
	// Docs lists a vault's documents.
	Docs(ctx context.Context, vault string) ([]VaultDoc, error)
	// PutVaultDoc replaces a document with its chunks (IDs from ChunkID),
	// links and chunk vectors (nil: none), in one transaction.
	PutVaultDoc(ctx context.Context, doc VaultDoc, chunks []DocChunk, links []DocLink, vectors []VectorItem) error
	// DeleteVaultDocs removes documents with their chunks, links and
	// vectors, in one transaction.
	DeleteVaultDocs(ctx context.Context, vault string, paths []string) error
	// ResolveVaultLinks sets every link's target document with resolve and
	// returns how many stay unresolved.
	ResolveVaultLinks(ctx context.Context, vault string, resolve func(from, target string) (string, bool)) (int, error)
}

// DocIndex is what recall searches in the indexed vaults.
type DocIndex interface {
	// SearchChunks ranks chunks by BM25, identifiers inside longer tokens
	// after.
	SearchChunks(ctx context.Context, q TextQuery) ([]ChunkHit, error)
	// GetChunks returns chunks by id, in the order of ids; unknown ids are
	// skipped.
	GetChunks(ctx context.Context, ids []string) ([]DocChunk, error)
	// Reach returns the documents reached from paths by following links,
	// up to depth.
	Reach(ctx context.Context, vault string, paths []string, depth int) ([]GraphDoc, error)
	// FirstChunks returns the first chunk of each document.
	FirstChunks(ctx context.Context, vault string, paths []string) ([]DocChunk, error)
}

// DocRef places a document chunk: its file, heading path and lines.
type DocRef struct {
	Vault     string   `json:"vault"`
	Path      string   `json:"path"`
	Title     string   `json:"title"`
	Heading   []string `json:"heading"`
	StartLine int      `json:"start_line"`
	EndLine   int      `json:"end_line"`
	// LinkedFrom, for a document recall reached by following links from
	// another result, names that document's path.
	LinkedFrom string `json:"linked_from,omitempty"`
	Depth      int    `json:"depth,omitempty"`
}

// Place says, for a person, where the chunk is: its file, heading and
// lines ("file docs/adr/0007.md > Decision > Why, lines 12-30 (vault
// /notes), linked from docs/incidents/x.md").
func (d DocRef) Place() string {
	var b strings.Builder
	b.WriteString("file " + d.Path)
	if len(d.Heading) > 0 {
		b.WriteString(" > " + strings.Join(d.Heading, " > "))
	}
	if d.StartLine > 0 {
		if d.EndLine > d.StartLine {
			fmt.Fprintf(&b, ", lines %d-%d", d.StartLine, d.EndLine)
		} else {
			fmt.Fprintf(&b, ", line %d", d.StartLine)
		}
	}
	if d.Vault != "" {
		fmt.Fprintf(&b, " (vault %s)", d.Vault)
	}
	if d.LinkedFrom != "" {
		fmt.Fprintf(&b, ", linked from %s", d.LinkedFrom)
	}
	return b.String()
}
