package vault

import (
	"errors"
	"time"
)

// Defaults and hard limits.
const (
	// DefaultMaxFileBytes is Options.MaxFileBytes when it is zero: the
	// number of bytes of a file that are parsed; the rest is dropped with a
	// "truncated" warning.
	DefaultMaxFileBytes = 4 << 20

	// DefaultChunkBytes is Options.ChunkBytes when it is zero: the size a
	// chunk aims at. A code block is never split, so a chunk holding one
	// may be larger.
	DefaultChunkBytes = 1500

	// DefaultOverlapBytes is Options.OverlapBytes when it is zero: how much
	// of the end of a chunk is repeated at the start of the next one when a
	// long section is split.
	DefaultOverlapBytes = 200

	// HardMaxFileBytes is the size above which Scan skips a file (reason
	// ReasonTooLarge) and ParseFile refuses it (ErrTooLarge) without reading
	// it. No note an engineer writes is this large; a file that is will be
	// a log or an export dropped into the vault.
	HardMaxFileBytes = 64 << 20
)

// Errors returned by Parse, ParseFile, Scan and ScanSince. Callers branch on
// them with errors.Is; the returned errors wrap them with the details.
var (
	// ErrNotUTF8 means the content is not valid UTF-8: a Latin-1 or
	// UTF-16 file, most likely. The caller skips the file with a warning.
	ErrNotUTF8 = errors.New("vault: not valid UTF-8")

	// ErrBinary means the content holds NUL bytes: a binary file with a
	// Markdown extension.
	ErrBinary = errors.New("vault: binary content (NUL bytes)")

	// ErrTooLarge means a file is over HardMaxFileBytes.
	ErrTooLarge = errors.New("vault: file too large")

	// ErrInternal means the parser failed on an input it should have
	// handled: a bug. Parse recovers rather than taking the caller down.
	ErrInternal = errors.New("vault: internal parser error")
)

// Doc is one Markdown file of a vault, parsed.
type Doc struct {
	// Path is slash-separated and relative to the vault root, e.g.
	// "docs/adrs/0007-use-postgres.md".
	Path string
	// Hash is the hex SHA-256 of all the file's bytes, also when only a part
	// was parsed (MaxFileBytes). It equals FileInfo.Hash from Scan.
	Hash string
	// Size is the file's size in bytes.
	Size int64
	// ModTime is the file's modification time; zero from Parse, which
	// sees bytes only (ParseFile sets it).
	ModTime time.Time
	// Title is the front matter title, else the text of the first
	// top-level H1, else the file name without its extension.
	Title string
	// Tags are the front matter tags (a list, or a string split at commas
	// and spaces) followed by the inline #tags of the text, Obsidian's way:
	// a "#" at the start of a word, then letters, digits, "_", "-" or "/",
	// not all digits (so "#123" is an issue number, not a tag). Tags in
	// code are not tags. "#" is stripped; the case is kept as first
	// written; duplicates (case-insensitive) are dropped.
	Tags []string
	// Date is the front matter date (or, without one, "created"); zero
	// if there is none or it cannot be read, with a warning in the latter
	// case. Dates without a zone are taken as UTC.
	Date time.Time
	// Aliases are the front matter aliases (or "alias"): a list, or a
	// string split at commas.
	Aliases []string
	// Type is the front matter type, lower-cased, else inferred from the
	// nearest folder with a known name: adr, adrs, decisions -> "adr";
	// incident, incidents, postmortems, post-mortems -> "incident"; rule,
	// rules -> "rule"; runbook, runbooks -> "runbook"; else "".
	Type string
	// Chunks are the pieces of the doc for search, in file order.
	Chunks []Chunk
	// Links are the references to other documents, in file order.
	Links []Link
	// Warnings name what was wrong but did not stop the parse: front
	// matter problems, an unreadable date, truncation.
	Warnings []string
}

// Chunk is a piece of a doc for search: a section (the text under a heading
// up to the next heading), long sections split at block, line or, at worst,
// rune boundaries with some overlap, code blocks kept whole.
type Chunk struct {
	// Index is the chunk's position in Doc.Chunks, from 0.
	Index int
	// Heading is the heading path, e.g. ["Decision", "Consequences"]; nil
	// for the text before the first heading.
	Heading []string
	// Text is the Markdown source of the chunk with line endings
	// normalised to "\n". It starts with the section's heading line; for
	// the second and later chunks of a split section that heading line
	// (and a blank line) is prepended for context, and lies outside
	// StartLine..EndLine. The rest is the source from StartLine to EndLine
	// (the first line may be partial where the chunk starts with overlap).
	Text string
	// StartLine and EndLine are the 1-based, inclusive lines of the file
	// the chunk's source comes from (front matter lines count).
	StartLine, EndLine int
}

// Link is a reference from a chunk to another document.
type Link struct {
	// Chunk is the index of the chunk holding the link (the first one,
	// where overlap repeats it).
	Chunk int
	// Target is the target as written (Markdown links URL-decoded):
	// "ADR-0007", "docs/adrs/0007-use-postgres.md", "../rules/r1.md".
	// Resolver.Resolve turns it into a vault path.
	Target string
	// Heading is the [[target#heading]] part or a Markdown link's
	// #fragment, if any (a block reference keeps its "^").
	Heading string
	// Alias is the [[target|alias]] part, or a Markdown link's text.
	Alias string
	// Kind is "wiki" or "markdown".
	Kind string
	// Embed is true for ![[embed]] and ![text](note.md).
	Embed bool
	// Line is the 1-based line of the file the link starts on.
	Line int
}

// Link kinds.
const (
	KindWiki     = "wiki"
	KindMarkdown = "markdown"
)

// Options tunes Parse. The zero value means the defaults.
type Options struct {
	// MaxFileBytes bounds the bytes parsed; a larger file is parsed up to
	// it (cut at a rune boundary) with a "truncated" warning. 0 means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// ChunkBytes is the size a chunk aims at. 0 means DefaultChunkBytes;
	// values under 64 are raised to 64.
	ChunkBytes int
	// OverlapBytes is the overlap between the chunks of a split section.
	// 0 means DefaultOverlapBytes, a negative value none; it is capped at
	// half of ChunkBytes.
	OverlapBytes int
}

func (o Options) withDefaults() Options {
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = DefaultMaxFileBytes
	}
	if o.ChunkBytes == 0 {
		o.ChunkBytes = DefaultChunkBytes
	}
	if o.ChunkBytes < 64 {
		o.ChunkBytes = 64
	}
	switch {
	case o.OverlapBytes == 0:
		o.OverlapBytes = DefaultOverlapBytes
	case o.OverlapBytes < 0:
		o.OverlapBytes = 0
	}
	if o.OverlapBytes > o.ChunkBytes/2 {
		o.OverlapBytes = o.ChunkBytes / 2
	}
	return o
}
