// Package vault reads a Markdown vault: a Git-managed folder of Markdown
// (docs/adrs, docs/incidents, docs/rules or any layout, Obsidian-compatible)
// that engram indexes and never writes to. Reading it is pure Go and
// stores nothing; the caller keeps what it returns.
//
// Scan and ScanSince list the Markdown files with their size, time and hash,
// which is what an incremental sync compares with what it stored; ScanSince
// reuses the previous hash of a file whose size and time did not change, so
// an unchanged vault costs a walk and no reads. Parse (or ParseFile) turns one
// file into a Doc: front matter fields, chunks for search and links. A
// Resolver built from every doc's DocRef turns link targets into vault paths.
// InstallHook and UninstallHook manage the git post-commit hook that syncs a
// vault after each commit: a file of the vault's repository, never a note.
//
// SQLStore keeps the documents in the palace's SQLite file (its vault
// tables, migration 0006) through the palace's transactions, as the
// scheduler keeps its job state: a Syncer writes into it, each document
// with its chunks' vectors in one transaction (Vectors), and recall
// searches it (engram.DocIndex).
//
// # Parsing
//
// Front matter is YAML between "---" lines at the very top. Markdown
// structure comes from goldmark's CommonMark AST (not regular expressions),
// extended with Obsidian wiki links ([[target#heading|alias]], ![[embed]]).
// A chunk is a section (a top-level heading and what follows up to the next
// one, with its heading path); a long section is split at block, then line,
// then word or rune boundaries, with overlap; code blocks are never split.
// Chunk line numbers are those of the file.
//
// # Caveats
//
//   - Line endings are normalised: chunk text uses "\n" whatever the file
//     used, and a leading byte order mark is dropped. Hashes and sizes are of
//     the file's bytes as they are.
//   - Only .md and .markdown files are documents. A Markdown link without
//     the extension ([x](notes/foo)) is not read as a document link, nor are
//     wiki embeds of attachments (![[diagram.png]]).
//   - Links in front matter values (related: "[[ADR-0003]]") are not read.
//   - Headings inside lists or block quotes do not start sections.
//   - GitHub table syntax is not parsed; a table is text, its wiki links
//     ([[a\|b]] included) are still found.
//   - goldmark goes quadratic on some inputs no one writes (thousands of
//     nested quotes on a line, "[a](" repeated without a closing
//     parenthesis). Guards keep a 4 MiB file of any of them to about two
//     seconds: past 32 quote or list markers (or 256 bytes of them) a line's
//     prefix is read as text; paragraphs over 500 lines are not searched for
//     link reference definitions; Markdown links are no longer recognised in
//     a file once failed attempts have rescanned 256 MiB; a wiki link is at
//     most 1 KiB long. Chunks keep the file's text either way.
//   - Size and time decide whether ScanSince rereads a file, so a rewrite of
//     the same size within the file system's timestamp granularity of the
//     previous scan goes unseen until the next change or a full Scan. Store
//     FileInfo.ModTime with nanoseconds, or every file will look changed.
package vault
