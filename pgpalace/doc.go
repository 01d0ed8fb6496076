// Package pgpalace is the palace in PostgreSQL, for several engram
// servers that share one memory (issue 41): the tables package palace keeps
// in its SQLite file, kept once in the database that holds the shared
// archive (package postgres), behind the same root interfaces, so that the
// engine's work does not depend on which palace it holds
// (docs/architecture.md, "The palace's seam").
//
// It is built a group of tables at a time, each group passing the
// conformance suite of its roles (internal/palacetest) that package
// palace passes too, and compared with package palace where the results
// must be equal. Here so far: the turns' rows as the indexer copies them
// from the archive (a tombstone recorded as a forgotten id, a duplicate id
// or an unstorable time recorded as a skip), read by id, seq, session and
// around a turn (engram.TurnLookup, TurnsAround); their keyword search
// with its substring and CJK stages (search.go: each server's index in
// memory, following the rows by change number); the session parts
// (units.go, engram.UnitIndex); the memories (memories.go) and their
// corrections (corrections.go), the scenes with their units (scenes.go),
// the personas (persona.go) and the knowledge graph (kg.go), each searched
// layer with its own keyword index in each server's memory, and the
// timeline and entities a browser lists (browse.go); forget and redaction
// over these tables (rewrite.go); the jobs' watermarks, skipped ranges and
// state (workers.go); the vectors of each embedding model (package
// pgvectors, which this one hosts), which each server's in-process index
// follows; the Markdown vaults'
// documents, chunks and links (vault.go). Everything package palace keeps
// is here; no configuration selects this palace yet (the engine holds a
// vault store of SQL transactions, and the doctor's checks and rebuild
// are the SQLite file's).
//
// Writes that take change numbers hold an advisory lock to commit: the
// turns' (turns, units, scenes), the graph's, the personas', the
// memories', the vectors'; a transaction takes those it needs in one
// order (a forget or a redaction all of them).
//
// Times are kept as Unix nanoseconds, as package palace keeps them, so
// that a turn reads back to the nanosecond and orders alike in both.
// Several servers may write the same turns (each one's indexer follows
// the shared archive): a turn already stored is left as it is and the
// watermarks only move forward, so the writes commute.
package pgpalace
